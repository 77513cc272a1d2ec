#include "launcher/agent/rank_launch.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "comm/endpoint.h"
#include "comm/trainer_overrides.h"
#include "common/child_process.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "common/rank_env.h"
#include "common/runtime_dir.h"
#include "launcher/agent/metrics_follower.h"
#include "launcher/agent/program_events.h"
#include "launcher/agent/program_launch.h"
#include "launcher/agent/trial_guard.h"

namespace tunefleet {
namespace launcher {

namespace {

// The place every local rank of `assign` shares: the job's size, its master and this machine's
// group.
RankPlace RunPlace(const comm::Assign& assign, const std::string& master_addr, int master_port) {
  RankPlace place;
  place.world_size = assign.trial().world_size();
  place.master_addr = master_addr;
  place.master_port = master_port;
  place.group_rank = assign.group_rank();
  place.group_world_size = std::max(1, assign.group_count());
  return place;
}

}  // namespace

std::optional<comm::Envelope> RankLauncher::Spawn(uint64_t run_id, LocalRun& run,
                                                  const comm::Assign& assign,
                                                  const std::vector<int>& slots,
                                                  const std::vector<int>& lanes,
                                                  int sharing) const {
  const comm::TrialSpec& spec = assign.trial();
  const std::optional<RunPlan> plan = PlanRun(run_id, run, assign, sharing);
  if (!plan) return std::nullopt;
  if (spec.has_program()) {
    return SpawnProgram(run_id, run, assign, slots,
                        RunPlace(assign, plan->master_addr, plan->master_port), plan->log_dir,
                        plan->trial_env, sharing);
  }
  const bool warm = workers_ != nullptr && WarmWorkers::Eligible(assign);
  comm::Envelope started;
  comm::Started* st = started.mutable_started();
  st->set_run_id(run_id);
  st->set_trial(spec.trial());
  st->set_agent(config_.agent);
  for (int i = 0; i < assign.ranks_size(); ++i) {
    LocalRank rank;
    rank.rank = assign.ranks(i);
    rank.slot = slots[static_cast<size_t>(i)];
    rank.lane = lanes[static_cast<size_t>(i)];
    const ProcessSpec ps = RankProcess(run_id, assign, *plan, i, rank);
    rank.log_path = ps.log_path;
    const absl::StatusOr<std::string> worker = StartRank(run_id, spec, *plan, ps, warm, rank);
    if (!worker.ok()) {
      run.start_error = std::string(worker.status().message());
      run.ranks.push_back(std::move(rank));
      run.Stop(run.start_error, /*cancelled=*/false, config_.kill_grace);
      return std::nullopt;
    }
    st->add_ranks(rank.rank);
    st->add_pids(rank.process->pid());
    st->add_slots(rank.slot);
    st->add_workers(*worker);
    run.ranks.push_back(std::move(rank));
  }
  TF_LOG(INFO) << "run " << run_id << " (trial " << spec.trial() << "): started rank(s) "
               << st->ranks(0) << (assign.ranks_size() > 1 ? "..." : "") << " of "
               << spec.world_size() << ", master " << plan->master_addr << ":" << plan->master_port
               << (warm ? absl::StrCat(", warm worker ", st->workers(0)) : std::string());
  return started;
}

std::optional<RankLauncher::RunPlan> RankLauncher::PlanRun(uint64_t run_id, LocalRun& run,
                                                           const comm::Assign& assign,
                                                           int sharing) const {
  const comm::TrialSpec& spec = assign.trial();
  RunPlan plan;
  plan.sharing = sharing;
  plan.master_addr = assign.master_addr().empty() ? config_.address : assign.master_addr();
  plan.master_port = assign.master_port() != 0
                         ? assign.master_port()
                         : comm::FreeTcpPort(plan.master_addr).value_or(29500);
  run.master_addr = plan.master_addr;
  run.master_port = plan.master_port;
  plan.log_dir =
      spec.log_dir().empty()
          ? absl::StrCat(config_.log_dir, "/", SafeName(spec.sweep()) ? spec.sweep() : "runs")
          : spec.log_dir();
  if (absl::Status allowed = CheckTrialPath("log_dir", plan.log_dir, config_.allow_dirs);
      !allowed.ok()) {
    TF_LOG(WARNING) << "run " << run_id << " (trial " << spec.trial()
                    << ") refused: " << allowed.message();
    run.start_error = std::string(allowed.message());
    run.start_refused = true;
    run.Stop(run.start_error, /*cancelled=*/false, config_.kill_grace);
    return std::nullopt;
  }
  plan.trial_env = AllowedTrialEnv(run_id, spec);
  // An MPS client names its GPU as the MPS server numbers the agent's: by slot (mps_daemon.h).
  plan.mps_client = plan.trial_env.count("CUDA_MPS_PIPE_DIRECTORY") > 0;
  return plan;
}

std::map<std::string, std::string> RankLauncher::AllowedTrialEnv(
    uint64_t run_id, const comm::TrialSpec& spec) const {
  std::vector<std::string> dropped;
  std::map<std::string, std::string> trial_env =
      FilterTrialEnv(std::map<std::string, std::string>(spec.env().begin(), spec.env().end()),
                     config_.allow_env, &dropped);
  // A run that may share its GPU: MPS's client variables, in the warm workers' key too.
  if (spec.trials_per_gpu() > 1 && config_.shared_env) {
    for (const auto& [k, v] : config_.shared_env()) trial_env[k] = v;
  }
  if (!dropped.empty()) {
    TF_LOG(WARNING) << "run " << run_id << " (trial " << spec.trial()
                    << "): not passed to the trainer (agent --allow_env; LD_* never): "
                    << absl::StrJoin(dropped, ", ");
  }
  return trial_env;
}

ProcessSpec RankLauncher::RankProcess(uint64_t run_id, const comm::Assign& assign,
                                      const RunPlan& plan, int local_rank,
                                      const LocalRank& rank) const {
  const comm::TrialSpec& spec = assign.trial();
  ProcessSpec ps;
  ps.binary = config_.trainer_binary;
  ps.args = comm::TrainerArgv(spec);  // argv, then the typed overrides as key=VALUE
  RankPlace place = RunPlace(assign, plan.master_addr, plan.master_port);
  place.rank = rank.rank;
  place.local_rank = local_rank;
  place.local_world_size = assign.ranks_size();
  ps.env = TorchrunEnv(place);
  ps.env.insert({{"CUDA_VISIBLE_DEVICES", GpuOf(rank.slot, plan.mps_client)},
                 {"TUNEFLEET_AGENT_ENDPOINT", config_.trainer_endpoint}});
  for (const auto& [k, v] : RunEnv(run_id, spec, plan.sharing, plan.trial_env)) {
    ps.env.emplace(k, v);
  }
  ps.log_path = absl::StrCat(plan.log_dir, "/trial-", spec.trial(), "/rank-", rank.rank, ".log");
  return ps;
}

absl::StatusOr<std::string> RankLauncher::StartRank(uint64_t run_id, const comm::TrialSpec& spec,
                                                    const RunPlan& plan, const ProcessSpec& ps,
                                                    bool warm, LocalRank& rank) const {
  if (warm) return LendWorker(run_id, spec, plan.trial_env, ps.env, rank);
  absl::StatusOr<std::unique_ptr<ChildProcess>> child = ChildProcess::Start(ps);
  if (!child.ok()) return child.status();
  rank.process = std::move(*child);
  return std::string();
}

std::map<std::string, std::string> RankLauncher::RunEnv(
    uint64_t run_id, const comm::TrialSpec& spec, int sharing,
    const std::map<std::string, std::string>& trial_env) const {
  std::map<std::string, std::string> env = {{"TUNEFLEET_RUN_ID", std::to_string(run_id)},
                                            {"TUNEFLEET_TRIAL", std::to_string(spec.trial())},
                                            {"TUNEFLEET_SWEEP", spec.sweep()},
                                            {"TUNEFLEET_GPU_TRIALS", std::to_string(sharing)}};
  // The trainer writes them into its TensorBoard event file (the HParams view).
  if (!spec.params_json().empty() && !spec.has_program()) {
    env["TUNEFLEET_HPARAMS"] = spec.params_json();
  }
  if (std::optional<std::string> threads = CpuThreads()) env["OMP_NUM_THREADS"] = *threads;
  for (const auto& [k, v] : trial_env) env.emplace(k, v);  // the agent's own win
  return env;
}

std::string RankLauncher::GpuOf(int slot, bool mps_client) const {
  if (config_.gpus.empty()) return "";
  return mps_client ? std::to_string(slot) : config_.gpus[static_cast<size_t>(slot)].id;
}

std::optional<comm::Envelope> RankLauncher::SpawnProgram(
    uint64_t run_id, LocalRun& run, const comm::Assign& assign, const std::vector<int>& slots,
    const RankPlace& place, const std::string& log_dir,
    const std::map<std::string, std::string>& trial_env, int sharing) const {
  const comm::TrialSpec& spec = assign.trial();
  if (!config_.programs) {
    run.start_error = "this agent runs tunefleet's trainer only (agent --noprograms)";
    run.start_refused = true;
    TF_LOG(WARNING) << "run " << run_id << " (trial " << spec.trial()
                    << ") refused: " << run.start_error;
    return std::nullopt;
  }
  ProgramLaunch launch;
  launch.place = place;
  const bool mps_client = trial_env.count("CUDA_MPS_PIPE_DIRECTORY") > 0;
  for (int slot : slots) launch.gpus.push_back(GpuOf(slot, mps_client));
  launch.env = RunEnv(run_id, spec, sharing, trial_env);
  launch.log_dir = log_dir;
  launch.allow_dirs = config_.allow_dirs;
  bool refused = false;
  absl::StatusOr<std::vector<ProgramProcess>> processes = PrepareProgram(assign, launch, &refused);
  absl::Status status = processes.status();
  if (status.ok() && LeadsProgram(assign)) {
    absl::StatusOr<std::unique_ptr<MetricsFollower>> follower =
        MetricsFollower::Open(spec.program().metrics_path());
    if (follower.ok()) run.reports = std::move(*follower);
    status = follower.status();
    absl::StatusOr<std::unique_ptr<ProgramEvents>> events =
        ProgramEvents::Open(spec.program().trial_dir(), spec.params_json());
    if (events.ok()) run.events = std::move(*events);
    if (!events.ok()) {
      TF_LOG(WARNING) << "run " << run_id << " (trial " << spec.trial()
                      << "): no TensorBoard events: " << events.status().message();
    }
  }
  comm::Envelope started;
  comm::Started* st = started.mutable_started();
  st->set_run_id(run_id);
  st->set_trial(spec.trial());
  st->set_agent(config_.agent);
  for (size_t p = 0; status.ok() && p < processes->size(); ++p) {
    const ProgramProcess& process = (*processes)[p];
    const size_t first = static_cast<size_t>(process.locals[0]);
    LocalRank rank;
    rank.rank = assign.ranks(process.locals[0]);
    rank.slot = slots[first];
    rank.log_path = process.spec.log_path;
    absl::StatusOr<std::unique_ptr<ChildProcess>> child = ChildProcess::Start(process.spec);
    status = child.status();
    if (child.ok()) rank.process = std::move(*child);
    for (int i : process.locals) {
      if (!status.ok()) break;
      st->add_ranks(assign.ranks(i));
      st->add_pids(rank.process->pid());
      st->add_slots(slots[static_cast<size_t>(i)]);
      st->add_workers("");
    }
    run.ranks.push_back(std::move(rank));
  }
  if (!status.ok()) {
    TF_LOG(WARNING) << "run " << run_id << " (trial " << spec.trial() << "): cannot start its "
                    << "program: " << status.message();
    run.start_error = std::string(status.message());
    run.start_refused = refused;
    run.Stop(run.start_error, /*cancelled=*/false, run.Grace(config_.kill_grace));
    return std::nullopt;
  }
  TF_LOG(INFO) << "run " << run_id << " (trial " << spec.trial() << "): started "
               << processes->size() << " program process(es) for rank(s) " << st->ranks(0)
               << (assign.ranks_size() > 1 ? "..." : "") << " of " << spec.world_size()
               << ", master " << place.master_addr << ":" << place.master_port;
  return started;
}

std::optional<std::string> RankLauncher::CpuThreads() const {
  if (!config_.gpus.empty() || std::getenv("OMP_NUM_THREADS") != nullptr) return std::nullopt;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  return std::to_string(std::max(1u, cores / static_cast<unsigned>(config_.slots)));
}

void RankLauncher::Prewarm(int count) const {
  if (workers_ == nullptr) return;
  std::map<std::string, std::string> env = {{"TUNEFLEET_AGENT_ENDPOINT", config_.trainer_endpoint}};
  if (std::optional<std::string> threads = CpuThreads()) env["OMP_NUM_THREADS"] = *threads;
  for (int lane = 0; lane < count; ++lane) {
    if (absl::Status s = workers_->Prewarm(lane, env, absl::Now()); !s.ok()) {
      TF_LOG(WARNING) << "cannot prewarm a worker for lane " << lane << ": " << s.message();
      return;
    }
  }
}

absl::StatusOr<std::string> RankLauncher::LendWorker(
    uint64_t run_id, const comm::TrialSpec& spec,
    const std::map<std::string, std::string>& trial_env,
    const std::map<std::string, std::string>& env, LocalRank& rank) const {
  // The worker opens the trial's log itself: its folder is made here, as for a fresh rank.
  if (absl::Status made = MakeDirs(rank.log_path.substr(0, rank.log_path.rfind('/'))); !made.ok()) {
    return made;
  }
  // The slot's part of a rank's environment (no run, rank or master), and the trial's own.
  std::map<std::string, std::string> worker_env;
  for (const char* name : {"CUDA_VISIBLE_DEVICES", "OMP_NUM_THREADS", "TUNEFLEET_AGENT_ENDPOINT",
                           "LOCAL_RANK", "LOCAL_WORLD_SIZE"}) {
    if (auto it = env.find(name); it != env.end()) worker_env.emplace(name, it->second);
  }
  for (const auto& [k, v] : trial_env) worker_env.emplace(k, v);
  comm::Envelope envelope;
  comm::RunTrial* rt = envelope.mutable_run_trial();
  rt->set_run_id(run_id);
  rt->set_trial(spec.trial());
  for (const std::string& arg : comm::TrainerArgv(spec)) rt->add_argv(arg);
  rt->mutable_env()->insert(env.begin(), env.end());
  rt->set_log_path(rank.log_path);
  absl::StatusOr<WarmWorkers::Lent> lent =
      workers_->Lend(rank.lane, WarmWorkers::Key(spec, trial_env), spec.worker_max_trials(),
                     std::move(worker_env), std::move(envelope), absl::Now());
  if (!lent.ok()) return lent.status();
  rank.process = std::move(lent->process);
  rank.warm = true;
  rank.worker_log = lent->log_path;
  return lent->name;
}

}  // namespace launcher
}  // namespace tunefleet
