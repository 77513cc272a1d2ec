// Starting a run's local ranks: one trainer process per assigned rank, each on its slot, with
// the torchrun-style environment, the trial's own variables that launcher/agent/trial_guard.h lets
// through, and its log under the trial's log_dir (which must lie in the folders the agent
// serves, or the run fails to start).
//
// Environment of a rank: torchrun's RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
// MASTER_ADDR, MASTER_PORT, GROUP_RANK, GROUP_WORLD_SIZE (common/rank_env.h; the master is the
// Assign's, else this agent's address and a port free now), CUDA_VISIBLE_DEVICES (its one GPU: its
// id, or its slot for a CUDA MPS client, mps_daemon.h; empty on CPU slots), OMP_NUM_THREADS on CPU
// slots (cores / slots, unless set), TUNEFLEET_AGENT_ENDPOINT, TUNEFLEET_RUN_ID, TUNEFLEET_TRIAL,
// TUNEFLEET_SWEEP, TUNEFLEET_HPARAMS (TrialSpec.params_json); the agent's own variables win
// over the trial's. Logs: LOG_DIR/trial-N/rank-R.log. A program of the user's own
// (TrialSpec.program) runs as launcher/agent/program_launch.h says.
//
// A warm trial (WarmWorkers::Eligible) runs in the slot's warm worker instead of a fresh process
// (launcher/agent/warm_workers.h): the worker starts with the part of that environment that is the
// slot's (CUDA_VISIBLE_DEVICES, OMP_NUM_THREADS, TUNEFLEET_AGENT_ENDPOINT, LOCAL_RANK=0,
// LOCAL_WORLD_SIZE=1) and the trial's variables (they are part of the worker's key, and some
// count only at process start); RunTrial carries the whole of it and the rank's log path.
// Thread-safety: used by the agent's poll loop only.
#ifndef TUNEFLEET_LAUNCHER_AGENT_RANK_LAUNCH_H_
#define TUNEFLEET_LAUNCHER_AGENT_RANK_LAUNCH_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "comm/proto/messages.pb.h"
#include "common/child_process.h"
#include "common/gpu_detect.h"
#include "common/rank_env.h"
#include "launcher/agent/local_run.h"
#include "launcher/agent/warm_workers.h"

namespace tunefleet {
namespace launcher {

class RankLauncher {
 public:
  struct Config {
    std::string agent;    // the agent's registered name (Started.agent)
    std::string address;  // MASTER_ADDR of the runs it leads
    std::string trainer_binary;
    std::string trainer_endpoint;         // TUNEFLEET_AGENT_ENDPOINT
    std::string log_dir;                  // the agent's: LOG_DIR/SWEEP when the trial names none
    std::vector<std::string> allow_dirs;  // where a trial's log_dir may lie
    std::set<std::string> allow_env;      // beside trial_guard.h's families
    std::vector<GpuInfo> gpus;            // one per slot; empty: CPU slots
    int slots = 1;
    absl::Duration kill_grace = absl::Seconds(5);
    bool programs = true;  // run program trials (TrialSpec.program); false: refuse them
    // The environment of a run that may share its GPU (TrialSpec.trials_per_gpu > 1): CUDA
    // MPS's client variables where the agent runs MPS (mps_daemon.h); null or empty: none.
    std::function<std::map<std::string, std::string>()> shared_env;
  };
  // `workers` (may be null: never warm) outlives the launcher.
  RankLauncher(Config config, WarmWorkers* workers)
      : config_(std::move(config)), workers_(workers) {}

  // Starts the ranks of `assign` on `slots` (one per rank, held by AgentSlots::Take, with their
  // warm-worker `lanes`; `sharing` trials on a one-rank run's GPU, itself included, as
  // TUNEFLEET_GPU_TRIALS) and records them in `run`. Returns the Started for the head; nullopt
  // when the run could not start: `run.start_error` says why and the ranks already started are
  // being stopped. Started.workers names each rank's warm worker ("" for a fresh process).
  std::optional<comm::Envelope> Spawn(uint64_t run_id, LocalRun& run, const comm::Assign& assign,
                                      const std::vector<int>& slots, const std::vector<int>& lanes,
                                      int sharing) const;

  // Starts blank warm workers (WarmWorkers::Prewarm) for lanes 0..count-1, where the first
  // trials of one rank each go, before any trial arrives; a failure is logged.
  void Prewarm(int count) const;

 private:
  // What Spawn works out once for all the local ranks of a run.
  struct RunPlan {
    std::string master_addr;
    int master_port = 0;
    std::string log_dir;                           // where the ranks' logs go
    std::map<std::string, std::string> trial_env;  // the trial's variables that pass
    bool mps_client = false;                       // a CUDA MPS client (GpuOf)
    int sharing = 1;                               // TUNEFLEET_GPU_TRIALS
  };
  // The plan of `assign`'s run, its master recorded in `run`; nullopt when the trial's log_dir
  // lies outside the folders the agent serves (the run refused and stopped, run.start_error).
  std::optional<RunPlan> PlanRun(uint64_t run_id, LocalRun& run, const comm::Assign& assign,
                                 int sharing) const;
  // The trial's variables that --allow_env lets through (the others logged), and shared_env's
  // on a run that may share its GPU.
  std::map<std::string, std::string> AllowedTrialEnv(uint64_t run_id,
                                                     const comm::TrialSpec& spec) const;
  // The process of local rank `local_rank` (rank.rank on rank.slot): the trainer, its argv, its
  // environment and its log.
  ProcessSpec RankProcess(uint64_t run_id, const comm::Assign& assign, const RunPlan& plan,
                          int local_rank, const LocalRank& rank) const;
  // Starts `rank` as `ps` in a fresh process, or in its slot's warm worker when `warm`;
  // returns the worker's name ("" for a fresh process).
  absl::StatusOr<std::string> StartRank(uint64_t run_id, const comm::TrialSpec& spec,
                                        const RunPlan& plan, const ProcessSpec& ps, bool warm,
                                        LocalRank& rank) const;
  // The rank environment's OMP_NUM_THREADS: the cores split over CPU slots; none on GPUs or
  // where the agent's own environment sets it.
  std::optional<std::string> CpuThreads() const;
  // What every rank of a run gets but its place: TUNEFLEET_RUN_ID, _TRIAL, _SWEEP, _GPU_TRIALS,
  // TUNEFLEET_HPARAMS (tunefleet's trainer), OMP_NUM_THREADS on CPU slots, and `trial_env`.
  std::map<std::string, std::string> RunEnv(
      uint64_t run_id, const comm::TrialSpec& spec, int sharing,
      const std::map<std::string, std::string>& trial_env) const;
  // CUDA_VISIBLE_DEVICES of `slot`: its GPU's id, or the slot for a CUDA MPS client; "" on CPU.
  std::string GpuOf(int slot, bool mps_client) const;
  // Spawn for a program of the user's own (launcher/agent/program_launch.h): its processes, and
  // on rank 0's agent the follower of its reports (LocalRun::reports).
  std::optional<comm::Envelope> SpawnProgram(uint64_t run_id, LocalRun& run,
                                             const comm::Assign& assign,
                                             const std::vector<int>& slots, const RankPlace& place,
                                             const std::string& log_dir,
                                             const std::map<std::string, std::string>& trial_env,
                                             int sharing) const;
  // Lends the slot's warm worker to `rank` for the trial (RunTrial with `env`); sets
  // rank.process and returns the worker's name.
  absl::StatusOr<std::string> LendWorker(uint64_t run_id, const comm::TrialSpec& spec,
                                         const std::map<std::string, std::string>& trial_env,
                                         const std::map<std::string, std::string>& env,
                                         LocalRank& rank) const;

  Config config_;
  WarmWorkers* workers_;
};

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_AGENT_RANK_LAUNCH_H_
