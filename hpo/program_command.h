// A program trial's command (trainer.program, hpo/config/program_config.h), as hpo puts it into
// the TrialSpec the agents run, and as `hpo best` prints it for re-running a trial alone.
//
// Template values (ProgramValues): each parameter as its distribution prints it ("0.001",
// "32", "cls"), but {lr}, which is the lr the trial trains with (lr_effective under
// lr_scaling; {lr_base} is the sampled lr), {lr_effective}, {batch_size} (per rank),
// {trial} (its number) and {trial_dir} (RUN_DIR/trial-N, the journal's folder).
//
// The agents add the rest of a rank's environment (launcher/agent/program_launch.h):
// TUNEFLEET_TRIAL_DIR, TUNEFLEET_PARAMS (TrialSpec.params_json), TUNEFLEET_METRICS
// (kProgramMetricsFile in the trial's folder) and torchrun's variables.
// Thread-safety: pure functions.
#ifndef TUNEFLEET_HPO_PROGRAM_COMMAND_H_
#define TUNEFLEET_HPO_PROGRAM_COMMAND_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "comm/proto/messages.pb.h"
#include "hpo/config/program_config.h"
#include "hpo/search_space.h"
#include "hpo/trial.h"

namespace tunefleet {
namespace hpo {

// Where rank 0 appends its reports, in the trial's folder.
inline constexpr char kProgramMetricsFile[] = ".tunefleet/reports.jsonl";

std::map<std::string, std::string> ProgramValues(const SearchSpace& space, const Trial& trial,
                                                 const std::string& trial_dir);

// The trial's parameters as one flat JSON object (TrialSpec.params_json): each by name, a
// number, or the label of a categorical of strings; and lr_effective.
std::string TrialParamsJson(const SearchSpace& space, const Trial& trial);

struct ProgramCommand {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;  // trainer.env
};
// The program's argv and env with `values` filled in (CheckProgramTemplates accepted them).
ProgramCommand RenderProgram(const ProgramSpec& program,
                             const std::map<std::string, std::string>& values);

// Sets spec's argv, env (trainer.env, beside what is there) and program (workdir, trial
// folder, metrics file, launch, kill grace) for `trial`; `run_dir` is absolute.
void FillProgramCommand(const ProgramSpec& program, const SearchSpace& space, const Trial& trial,
                        const std::string& run_dir, comm::TrialSpec* spec);

// The program as the journal keeps it (the study's user attr "program", JSON): its templates,
// workdir, launch and ranks a trial, so that `hpo best` can write the command of any trial.
std::string ProgramStudyAttr(const ProgramSpec& program, int64_t ranks);

// One shell line that re-runs `trial` alone with its folder `trial_dir` (the program's
// templates and environment filled in, TUNEFLEET_PARAMS = `params_json`; several ranks a trial
// under torchrun), from the study attr ProgramStudyAttr wrote. Errors: the attr does not decode.
absl::StatusOr<std::string> ProgramRerunCommand(const std::string& study_attr,
                                                const SearchSpace& space, const Trial& trial,
                                                const std::string& trial_dir,
                                                const std::string& params_json);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_PROGRAM_COMMAND_H_
