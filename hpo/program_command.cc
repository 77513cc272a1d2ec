#include "hpo/program_command.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/arg_template.h"
#include "common/number_text.h"
#include "common/py_json.h"
#include "common/shell_quote.h"

namespace tunefleet {
namespace hpo {
namespace {

// Templates were checked when the sweep loaded; a text that would not render stays as written.
std::string Render(const std::string& text, const std::map<std::string, std::string>& values) {
  absl::StatusOr<std::string> out = RenderTemplate(text, values);
  return out.ok() ? *out : text;
}

}  // namespace

std::map<std::string, std::string> ProgramValues(const SearchSpace& space, const Trial& trial,
                                                 const std::string& trial_dir) {
  std::map<std::string, std::string> values;
  for (const auto& [name, value] : trial.params) {
    auto d = space.find(name);
    values[name] = d != space.end() ? d->second.ValueText(value) : ShortestText(value);
  }
  if (auto lr = values.find(kLrParam); lr != values.end()) values["lr_base"] = lr->second;
  values[kLrParam] = PythonRepr(trial.lr_effective);  // as Python prints it, as the others
  values["lr_effective"] = values[kLrParam];
  values["trial"] = std::to_string(trial.number);
  values["trial_dir"] = trial_dir;
  return values;
}

std::string TrialParamsJson(const SearchSpace& space, const Trial& trial) {
  std::string out = "{";
  auto add = [&](const std::string& name, const std::string& json) {
    absl::StrAppend(&out, out.size() > 1 ? ", " : "", JsonString(name), ": ", json);
  };
  for (const auto& [name, value] : trial.params) {
    auto d = space.find(name);
    add(name, d != space.end() && !d->second.labels.empty() ? JsonString(d->second.ValueText(value))
                                                            : ShortestText(value));
  }
  add("lr_effective", ShortestText(trial.lr_effective));
  return out + "}";
}

ProgramCommand RenderProgram(const ProgramSpec& program,
                             const std::map<std::string, std::string>& values) {
  ProgramCommand command;
  for (const std::string& arg : program.argv) command.argv.push_back(Render(arg, values));
  for (const auto& [name, text] : program.env) command.env[name] = Render(text, values);
  return command;
}

void FillProgramCommand(const ProgramSpec& program, const SearchSpace& space, const Trial& trial,
                        const std::string& run_dir, comm::TrialSpec* spec) {
  const std::string trial_dir = absl::StrCat(run_dir, "/trial-", trial.number);
  ProgramCommand command = RenderProgram(program, ProgramValues(space, trial, trial_dir));
  spec->clear_argv();
  spec->clear_overrides();
  for (const std::string& arg : command.argv) spec->add_argv(arg);
  for (const auto& [name, value] : command.env) (*spec->mutable_env())[name] = value;
  comm::ProgramRun* run = spec->mutable_program();
  run->set_workdir(program.workdir);
  run->set_trial_dir(trial_dir);
  run->set_metrics_path(absl::StrCat(trial_dir, "/", kProgramMetricsFile));
  run->set_launch_once(program.launch_once);
  run->set_kill_grace_ms(static_cast<int32_t>(std::llround(program.kill_grace_s * 1000)));
  spec->set_reuse_worker(false);
}

std::string ProgramStudyAttr(const ProgramSpec& program, int64_t ranks) {
  PyJson j = PyJson::object();
  j["argv"] = program.argv;
  PyJson env = PyJson::object();
  for (const auto& [name, text] : program.env) env[name] = text;
  j["env"] = env;
  j["workdir"] = program.workdir;
  j["launch"] = program.launch_once ? "once" : "per_rank";
  j["ranks"] = ranks;
  return DumpPyJson(j);
}

absl::StatusOr<std::string> ProgramRerunCommand(const std::string& study_attr,
                                                const SearchSpace& space, const Trial& trial,
                                                const std::string& trial_dir,
                                                const std::string& params_json) {
  absl::StatusOr<PyJson> j = ParsePyJson(study_attr);
  const auto bad = [] {
    return absl::InvalidArgumentError("the study's user attr 'program' does not decode");
  };
  if (!j.ok() || !j->is_object() || !(*j)["argv"].is_array() || !(*j)["env"].is_object() ||
      !(*j)["workdir"].is_string() || !(*j)["ranks"].is_number_integer()) {
    return bad();
  }
  ProgramSpec program;
  for (const PyJson& arg : (*j)["argv"]) {
    if (!arg.is_string()) return bad();
    program.argv.push_back(arg.get<std::string>());
  }
  for (const auto& [name, text] : (*j)["env"].items()) {
    if (!text.is_string()) return bad();
    program.env[name] = text.get<std::string>();
  }
  program.launch_once = (*j)["launch"] == "once";
  const int64_t ranks = (*j)["ranks"].get<int64_t>();
  const ProgramCommand command = RenderProgram(program, ProgramValues(space, trial, trial_dir));
  std::vector<std::string> words = {"mkdir", "-p", ShellQuote(trial_dir),
                                    "&&",    "cd", ShellQuote((*j)["workdir"].get<std::string>()),
                                    "&&"};
  for (const auto& [name, value] : command.env) words.push_back(name + "=" + ShellQuote(value));
  words.push_back("TUNEFLEET_TRIAL_DIR=" + ShellQuote(trial_dir));
  words.push_back("TUNEFLEET_PARAMS=" + ShellQuote(params_json));
  if (ranks > 1 && program.launch_once) {
    words.push_back(absl::StrCat("WORLD_SIZE=", ranks, " LOCAL_WORLD_SIZE=", ranks,
                                 " PET_NPROC_PER_NODE=", ranks));
  } else if (ranks > 1) {
    // Its ranks as the agents start them: torchrun's environment, one process a rank.
    words.push_back(absl::StrCat("torchrun --nproc_per_node=", ranks, " --no-python"));
  }
  for (const std::string& arg : command.argv) words.push_back(ShellQuote(arg));
  return absl::StrJoin(words, " ");
}

}  // namespace hpo
}  // namespace tunefleet
