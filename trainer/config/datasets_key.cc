#include "trainer/config/datasets_key.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "trainer/config/prompts_key.h"

namespace tunefleet {
namespace trainer {
namespace {

bool NamedFormat(const std::string& format) {
  return format == "jsonl" || format == "csv" || format == "tsv";
}

// columns and label_column of an entry: as task.columns and task.label_column.
absl::Status CheckEntryColumns(const ConfigMap& e, const DatasetConfig& d) {
  for (const char* key : {"columns", "label_column"}) {
    if (e.Has(key) && !NamedFormat(d.format)) {
      return e.Error(key,
                     absl::StrCat("only applies to format jsonl, csv or tsv (not ", d.format, ")"));
    }
  }
  for (size_t i = 0; i < d.columns.size(); ++i) {
    const std::string& name = d.columns[i];
    if (name.empty()) return e.Error("columns", "names an empty column");
    if (name == d.label_column) {
      return e.Error("columns", absl::StrCat("\"", name, "\" is the label_column"));
    }
    for (size_t j = 0; j < i; ++j) {
      if (d.columns[j] == name)
        return e.Error("columns", absl::StrCat("names \"", name, "\" twice"));
    }
  }
  if (e.Has("columns") && d.columns.empty()) {
    return e.Error("columns", "must name the text columns (e.g. [anchor, positive])");
  }
  return absl::OkStatus();
}

absl::StatusOr<DatasetConfig> ReadEntry(const ConfigMap& datasets, const std::string& name,
                                        const TrainerConfig& c) {
  ASSIGN_OR_RETURN(ConfigMap e, datasets.GetMap(name));
  RETURN_IF_ERROR(e.AllowOnly({"train", "format", "columns", "label_column", "loss", "prompts"}));
  DatasetConfig d;
  d.name = name;
  d.loss = c.task.loss;
  RETURN_IF_ERROR(e.Get("train", &d.train));
  if (d.train.empty()) return e.Error("train", "must name a data file");
  RETURN_IF_ERROR(e.GetEnum("format", {"stsb", "sick", "paws", "mrpc", "tsv", "csv", "jsonl"},
                            &d.format, /*required=*/true));
  RETURN_IF_ERROR(e.GetOptional("columns", &d.columns));
  RETURN_IF_ERROR(e.GetOptional("label_column", &d.label_column));
  RETURN_IF_ERROR(CheckEntryColumns(e, d));
  RETURN_IF_ERROR(e.GetOptional("loss", &d.loss));
  if (e.Has("prompts")) {
    RETURN_IF_ERROR(ReadPromptsKey(e, "prompts", &d.prompt, &d.prompts));
    RETURN_IF_ERROR(
        CheckPromptsKey(e, "prompts", c.model.kind, d.format, d.columns, d.prompt, d.prompts));
  } else {
    d.prompt = c.task.prompt;
    d.prompts = c.task.prompts;
  }
  return d;
}

}  // namespace

absl::Status ReadDatasetsKey(const ConfigMap& task, TrainerConfig* config) {
  if (!task.Has(kDatasetsKey)) return absl::OkStatus();
  if (!task.IsMap(kDatasetsKey)) {
    return task.Error(kDatasetsKey, "must be a mapping NAME: {train: FILE, format: FORMAT, ...}");
  }
  ASSIGN_OR_RETURN(ConfigMap datasets, task.GetMap(kDatasetsKey));
  const std::vector<std::string> names = datasets.Keys();
  RETURN_IF_ERROR(datasets.AllowOnly(names));  // a name given twice
  if (names.empty()) {
    return task.Error(kDatasetsKey, "names no dataset (give NAME: {train: FILE, format: ...})");
  }
  std::vector<DatasetConfig> read;
  for (const std::string& name : names) {
    ASSIGN_OR_RETURN(DatasetConfig d, ReadEntry(datasets, name, *config));
    read.push_back(std::move(d));
  }
  config->task.datasets = std::move(read);
  if (config->task.format.empty()) config->task.format = config->task.datasets.front().format;
  return absl::OkStatus();
}

TaskConfig DatasetTask(const TaskConfig& task, const DatasetConfig& d) {
  TaskConfig t = task;
  t.datasets.clear();
  t.train = d.train;
  t.format = d.format;
  t.columns = d.columns;
  t.label_column = d.label_column;
  t.type = d.type;
  t.loss = d.loss;
  t.prompt = d.prompt;
  t.prompts = d.prompts;
  t.settings = d.settings;
  return t;
}

}  // namespace trainer
}  // namespace tunefleet
