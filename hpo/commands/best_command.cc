#include "hpo/commands/best_command.h"

#include <unistd.h>

#include <cstdint>
#include <iostream>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/binary_path.h"
#include "common/cli.h"
#include "common/clip.h"
#include "hpo/journal/journal_file.h"
#include "hpo/journal/journal_replay.h"
#include "hpo/program_command.h"
#include "hpo/report/progress_table.h"
#include "hpo/search_space.h"

namespace tunefleet {
namespace hpo {

int RunBest(const BestOptions& o) {
  const std::string& journal = o.journal;
  auto contents = ReadJournal(journal);
  if (!contents.ok()) {
    PrintError("hpo best", contents.status());
    return kExitUsage;
  }
  const Trial* best = ProgressTable::Best(contents->study);
  if (best == nullptr) {
    int64_t completed = 0;
    for (const Trial& t : contents->study.trials) completed += t.state == TrialState::kComplete;
    PrintError("hpo best",
               absl::NotFoundError(
                   completed == 0 ? absl::StrCat(ClipPath(journal), ": no trial has completed")
                                  : absl::StrCat(ClipPath(journal), ": ", completed,
                                                 " trial(s) completed, all with a NaN value")));
    return kExitFailure;
  }
  std::string others;
  const SearchSpace* space = static_cast<size_t>(best->number) < contents->distributions.size()
                                 ? &contents->distributions[static_cast<size_t>(best->number)]
                                 : nullptr;
  for (const auto& [name, value] : best->params) {
    if (name == kLrParam || name == kBatchParam) continue;
    auto d = space != nullptr ? space->find(name) : SearchSpace::const_iterator();
    absl::StrAppend(&others, "  ", name, " ",
                    space != nullptr && d != space->end() ? d->second.ValueText(value)
                                                          : absl::StrFormat("%.9g", value));
  }
  std::cout << Printable(
      absl::StrFormat("trial %d  value %.9g  lr %.9g  batch_size %d  lr_effective %.9g%s\n",
                      best->number, *best->value, best->params.at(kLrParam),
                      static_cast<int>(best->params.at(kBatchParam)), best->lr_effective, others));
  // Re-running it alone: the resolved config its trainer wrote (trainer/train/resolved_config.h),
  // or a program's command (hpo/program_command.h).
  const std::string trial_dir = absl::StrCat(RunDir(journal), "/trial-", best->number);
  const std::string resolved = trial_dir + "/.tunefleet/config.yaml";
  if (auto program = contents->study_user_attrs.find("program");
      program != contents->study_user_attrs.end()) {
    const SearchSpace empty;
    const SearchSpace& trial_space = space != nullptr ? *space : empty;
    absl::StatusOr<std::string> command =
        ProgramRerunCommand(program->second, trial_space, *best, trial_dir + "-rerun",
                            TrialParamsJson(trial_space, *best));
    std::cout << "re-run: "
              << (command.ok() ? *command : absl::StrCat("(", command.status().message(), ")"))
              << "\n";
  } else if (::access(resolved.c_str(), R_OK) == 0) {
    const absl::StatusOr<std::string> trainer = FindSiblingBinary("trainer/trainer");
    std::cout << "re-run: " << (trainer.ok() ? *trainer : std::string("trainer"))
              << " train --config " << resolved << " output.dir=" << trial_dir << "-rerun\n";
  } else {
    std::cout << "re-run: no " << resolved << " here (a synthetic trial has none; a trial whose "
              << "output stayed on its node has it there: resources.fetch_back brings it back)\n";
  }
  if (auto bounds = contents->study_user_attrs.find("best_at_bound");
      bounds != contents->study_user_attrs.end()) {
    auto at = nlohmann::json::parse(bounds->second, nullptr, /*allow_exceptions=*/false);
    if (at.is_object()) {
      for (const auto& [name, side] : at.items()) {
        if (side.is_string()) {
          std::cout << "best " << name << " at the " << side.get<std::string>()
                    << " bound of its range: widen parameters." << name << "\n";
        }
      }
    }
  }
  return kExitOk;
}

int BestCommand(const std::vector<std::string>& args) {
  BestOptions options;
  if (int rc = BestOptions::FromFlags(args, &options); rc >= 0) return rc;
  return RunBest(options);
}

}  // namespace hpo
}  // namespace tunefleet
