#include "hpo/commands/status_command.h"

#include <algorithm>
#include <cstdint>
#include <iostream>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/cli.h"
#include "common/clip.h"
#include "hpo/config/sweep_config.h"
#include "hpo/journal/journal_replay.h"
#include "hpo/journal/study_json.h"
#include "hpo/report/progress_table.h"

namespace tunefleet {
namespace hpo {
namespace {

// The journal named by --journal, or by the sweep file's `journal`.
absl::StatusOr<JournalContents> OpenJournal(const StatusOptions& o) {
  std::string path = o.journal;
  if (path.empty() && !o.sweep_file.empty()) {
    auto config = LoadSweepConfig(o.sweep_file);
    if (!config.ok()) return config.status();
    path = config->journal;
  }
  if (path.empty())
    return absl::InvalidArgumentError("name a journal: --journal PATH or a sweep file");
  return ReadJournal(path);
}

}  // namespace

int RunStatus(const StatusOptions& o) {
  auto contents = OpenJournal(o);
  if (!contents.ok()) {
    PrintError("hpo status", contents.status());
    return kExitUsage;
  }
  if (o.format == "json") {
    std::cout << JournalToJson(*contents);
    return kExitOk;
  }
  if (contents->study_name.empty()) {
    PrintError("hpo status",
               absl::InvalidArgumentError(absl::StrCat(
                   o.journal.empty() ? std::string("the journal") : ClipPath(o.journal),
                   ": the journal holds no study yet")));
    return kExitUsage;
  }
  SweepConfig shape;
  shape.name = contents->study_name;
  shape.maximize = contents->maximize;
  shape.metric_name = "value";
  if (auto metric = contents->study_user_attrs.find("metric");
      metric != contents->study_user_attrs.end()) {
    auto name = nlohmann::json::parse(metric->second, nullptr, /*allow_exceptions=*/false);
    if (name.is_string()) shape.metric_name = name.get<std::string>();
  }
  ProgressTable table(shape);
  SweepProgress progress;
  int64_t points = 0;
  for (const Trial& t : contents->study.trials) points = std::max(points, t.point + 1);
  progress.planned = points;
  progress.planned_exact = true;
  // Journal fields (parameter names, placements, reasons) may hold terminal escapes.
  std::cout << Printable(table.Render(contents->study, progress, 1 << 20));
  if (const Trial* best = ProgressTable::Best(contents->study)) {
    std::cout << Printable(absl::StrFormat("best trial #%d: %s=%.6g\n", best->number,
                                           shape.metric_name, *best->value));
  }
  return kExitOk;
}

int StatusCommand(const std::vector<std::string>& args) {
  StatusOptions options;
  if (int rc = StatusOptions::FromFlags(args, &options); rc >= 0) return rc;
  return RunStatus(options);
}

}  // namespace hpo
}  // namespace tunefleet
