#include "hpo/config/multirun.h"

#include <algorithm>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/clip.h"
#include "common/status_macros.h"
#include "hpo/config/sweep_parameters.h"

namespace tunefleet {
namespace hpo {
namespace {

// One parameter that the command line sweeps.
struct Swept {
  std::string name;        // lr, batch_size or the trainer key
  std::string values;      // "{values: [a, b]}"
  std::string assignment;  // as the user typed it
};

absl::Status OverrideError(const ConfigFile& file, const std::string& assignment,
                           const std::string& message) {
  return absl::InvalidArgumentError(
      absl::StrCat(file.name(), ": override '", ClipValue(assignment), "': ", message));
}

// True for a `key=value` override whose value has a comma outside brackets.
bool HasSweepComma(const std::string& assignment) {
  const size_t eq = assignment.find('=');
  return eq != std::string::npos && SplitSweepValues(assignment.substr(eq + 1)).size() > 1;
}

}  // namespace

std::vector<std::string> SplitSweepValues(const std::string& text) {
  std::vector<std::string> pieces;
  std::string piece;
  int depth = 0;
  char quote = 0;
  for (char c : text) {
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '[' || c == '{' || c == '(') {
      ++depth;
    } else if ((c == ']' || c == '}' || c == ')') && depth > 0) {
      --depth;
    } else if (c == ',' && depth == 0) {
      pieces.emplace_back(absl::StripAsciiWhitespace(piece));
      piece.clear();
      continue;
    }
    piece += c;
  }
  pieces.emplace_back(absl::StripAsciiWhitespace(piece));
  return pieces;
}

namespace {

// The names a parameter may take in `file`: a program's parameters are its own names
// (hpo/config/sweep_parameters.h), the trainer's are its keys.
ParamNames ParamNamesOf(const ConfigFile& file, const TrainerKeys& trainer_keys) {
  if (absl::StatusOr<ConfigMap> root = file.Root(); root.ok() && root->IsMap("trainer")) {
    absl::StatusOr<ConfigMap> trainer = root->GetMap("trainer");
    if (trainer.ok() && trainer->Has("program")) return ParamNames::kFree;
    if (trainer.ok() && trainer->Has("synthetic")) return ParamNames::kTrainerKeys;
  }
  return ParamNames(ParamNames::kTrainerKeys, trainer_keys);
}

// Sorts the command line's overrides: a setting of the sweep file (a key under one of
// `sections`, +key, ~key) goes to *settings as it is; any other KEY=a,b,c sweeps the parameter
// KEY (*swept).
absl::Status SortOverrides(const std::vector<std::string>& overrides,
                           const std::vector<std::string>& sections, ParamNames names,
                           const ConfigFile& file, std::vector<std::string>* settings,
                           std::vector<Swept>* swept_out) {
  std::vector<Swept>& swept = *swept_out;
  for (const std::string& o : overrides) {
    const size_t eq = o.find('=');
    const std::string key = eq == std::string::npos ? o : o.substr(0, eq);
    const std::string section = key.substr(0, key.find('.'));
    if (eq == std::string::npos || eq == 0 || o[0] == '+' || o[0] == '~' ||
        std::find(sections.begin(), sections.end(), section) != sections.end()) {
      settings->push_back(o);  // a setting of the sweep file, applied as it is
      continue;
    }
    absl::StatusOr<std::string> name = ParameterName(key, names);
    if (!name.ok()) {
      return OverrideError(file, o,
                           absl::StrCat(key, " ", name.status().message(),
                                        "; under --multirun a key that is not a section of the "
                                        "sweep file names a parameter"));
    }
    for (const Swept& s : swept) {
      if (s.name == *name) {
        return OverrideError(
            file, o,
            absl::StrCat(*name, " is swept twice (also by '", ClipValue(s.assignment), "')"));
      }
    }
    const std::vector<std::string> values = SplitSweepValues(o.substr(eq + 1));
    for (const std::string& v : values) {
      if (v.empty()) return OverrideError(file, o, "an empty value in the comma-separated list");
    }
    swept.push_back(Swept{*name, absl::StrCat("{values: [", absl::StrJoin(values, ", "), "]}"), o});
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ApplyMultirunOverrides(const std::vector<std::string>& overrides,
                                    const std::vector<std::string>& sections, ConfigFile* file,
                                    const TrainerKeys& trainer_keys) {
  std::vector<std::string> settings;
  std::vector<Swept> swept;
  const ParamNames names = ParamNamesOf(*file, trainer_keys);
  RETURN_IF_ERROR(SortOverrides(overrides, sections, names, *file, &settings, &swept));
  RETURN_IF_ERROR(file->ApplyOverrides(settings));

  // The file's parameters (with the settings applied): the swept ones are replaced, the others
  // must take one value.
  ASSIGN_OR_RETURN(ConfigMap root, file->Root());
  ASSIGN_OR_RETURN(ConfigMap search, root.GetOptionalMap("search"));
  for (const ConfigMap* m : {&root, &search}) {
    if (m->Has("method") && m->FromOverride("method")) {
      return m->Error("method",
                      "--multirun runs the grid of the values listed; drop this override");
    }
  }
  ASSIGN_OR_RETURN(ConfigMap parameters, root.GetMap("parameters"));
  ParamSpec lr;
  std::vector<int64_t> batch_sizes;
  std::vector<ParamSpec> others;
  std::vector<ParameterEntry> entries;
  RETURN_IF_ERROR(ParseParameters(parameters, &lr, &batch_sizes, &others, &entries, names));
  auto is_swept = [&](const std::string& name) {
    return std::any_of(swept.begin(), swept.end(), [&](const Swept& s) { return s.name == name; });
  };
  for (const ParameterEntry& e : entries) {
    if (is_swept(e.name) || e.values == 1) continue;
    const std::string takes = e.values == 0 ? "a range" : absl::StrCat(e.values, " values");
    return e.parent.Error(e.at,
                          absl::StrCat("takes ", takes,
                                       ", but --multirun runs only the combinations listed on "
                                       "the command line: sweep it too (",
                                       e.name,
                                       "=A,B) or give it one "
                                       "value (",
                                       e.name, "=A)"));
  }
  for (const ParameterEntry& e : entries) {
    if (is_swept(e.name)) RETURN_IF_ERROR(file->ApplyOverride("~parameters." + e.path));
  }
  for (const Swept& s : swept) {
    RETURN_IF_ERROR(
        file->ApplyOverride(absl::StrCat("parameters.", s.name, "=", s.values), s.assignment));
  }
  // The method, under the spelling the file uses (W&B's top-level method, else search.method).
  const std::string method = root.Has("method") ? "method=grid" : "search.method=grid";
  return file->ApplyOverride(method, method + " (--multirun)");
}

absl::Status AddMultirunHint(const absl::Status& status,
                             const std::vector<std::string>& overrides) {
  if (status.ok()) return status;
  for (const std::string& o : overrides) {
    if (HasSweepComma(o) &&
        absl::StrContains(status.message(), absl::StrCat("override '", ClipValue(o), "'"))) {
      return absl::Status(status.code(), absl::StrCat(status.message(),
                                                      " (to sweep over comma-separated values, "
                                                      "add --multirun)"));
    }
  }
  return status;
}

}  // namespace hpo
}  // namespace tunefleet
