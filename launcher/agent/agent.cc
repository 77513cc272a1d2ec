#include "launcher/agent/agent.h"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <future>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "comm/codec.h"
#include "comm/endpoint.h"
#include "comm/zmq_channel.h"
#include "common/logging.h"
#include "common/runtime_dir.h"
#include "launcher/agent/agent_reregister.h"
#include "launcher/agent/agent_slots.h"
#include "launcher/agent/agent_staging.h"

namespace tunefleet {
namespace launcher {

Agent::Agent(Options options, SignalFd* signals)
    : options_(std::move(options)), signals_(signals), context_(1) {}

Agent::~Agent() = default;

absl::Status Agent::Setup() {
  if (options_.name.empty()) options_.name = comm::HostName().value_or("localhost");
  absl::StatusOr<std::unique_ptr<AgentSlots>> slots =
      AgentSlots::Detect(options_.slots, options_.gpu_ids, options_.exclude_gpu_ids);
  if (!slots.ok()) return slots.status();
  slots_ = *std::move(slots);
  if (options_.runtime_dir.empty()) {
    absl::StatusOr<std::string> dir = RuntimeSubdir("agent-" + options_.name);
    if (!dir.ok()) return dir.status();
    options_.runtime_dir = *dir;
  }
  if (options_.log_dir.empty()) options_.log_dir = options_.runtime_dir;
  if (options_.cache_dir.empty()) options_.cache_dir = options_.runtime_dir + "/cache";
  options_.allow_dirs.push_back(options_.runtime_dir);
  options_.allow_dirs.push_back(options_.log_dir);
  if (options_.address.empty()) options_.address = comm::LocalAddressForEndpoint(options_.head);
  absl::StatusOr<std::unique_ptr<TrainerChannel>> trainers =
      TrainerChannel::Bind(context_, options_.runtime_dir);
  if (!trainers.ok()) return trainers.status();
  trainers_ = std::move(*trainers);
  WarmWorkers::Config warm;
  warm.agent = options_.name;
  warm.trainer_binary = options_.trainer_binary;
  warm.log_dir = options_.log_dir;
  warm.default_max_trials = options_.worker_max_trials;
  warm.register_timeout = options_.worker_register_timeout;
  warm.kill_grace = options_.kill_grace;
  warm.slots = slots_->count();
  workers_ = std::make_unique<WarmWorkers>(
      std::move(warm), [this](const std::string& identity, const comm::Envelope& envelope) {
        return comm::SendTo(trainers_->socket(), identity, envelope);
      });
  RankLauncher::Config launch;
  launch.agent = options_.name;
  launch.address = options_.address;
  launch.trainer_binary = options_.trainer_binary;
  launch.trainer_endpoint = trainers_->endpoint();
  launch.log_dir = options_.log_dir;
  launch.allow_dirs = options_.allow_dirs;
  launch.allow_env = options_.allow_env;
  launch.gpus = slots_->gpus();
  launch.slots = slots_->count();
  launch.kill_grace = options_.kill_grace;
  launch.programs = options_.programs;
  std::vector<std::string> gpu_ids;
  for (const GpuInfo& gpu : slots_->gpus()) gpu_ids.push_back(gpu.id);
  mps_ = LazyMps(options_.mps && !gpu_ids.empty(), options_.runtime_dir + "/mps",
                 absl::StrJoin(gpu_ids, ","));
  launch.shared_env = [this] { return mps_.ClientEnv(); };
  launcher_ = std::make_unique<RankLauncher>(std::move(launch), workers_.get());
  launcher_->Prewarm(options_.prewarm_workers);
  if (options_.prewarm_mps) mps_.Prestart();
  fetch_back_ = std::make_unique<AgentFetchBack>(options_.address, options_.allow_dirs);
  comm::HeadSession::Options session;
  session.head = options_.head;
  session.keys_dir = options_.keys_dir;
  session.who = "this agent";
  session.register_timeout = options_.register_timeout;
  session.head_grace = options_.head_grace;
  head_ = std::make_unique<comm::HeadSession>(context_, std::move(session),
                                              [this] { return MakeRegister(); });
  return head_->Connect(absl::Now());
}

comm::Envelope Agent::MakeRegister() const {
  comm::Envelope envelope;
  comm::Register* r = envelope.mutable_register_();
  r->set_role(comm::AGENT);
  r->set_name(options_.name);
  r->set_hostname(comm::HostName().value_or("localhost"));
  r->set_address(options_.address);
  r->set_slots(slots_->count());
  for (const GpuInfo& g : slots_->gpus()) r->add_gpus(g.name);
  r->set_pid(::getpid());
  r->set_previous_session(head_->session());
  // Registering again: everything a restarted head needs to adopt this node's runs.
  if (!head_->session().empty()) AddRunsToRegister(runs_, ended_, envelope);
  return envelope;
}

void Agent::SendToHead(const comm::Envelope& envelope) { head_->Send(envelope, absl::Now()); }

void Agent::LoseHead(const std::string& why) {
  if (head_->Lose(absl::Now())) LogHeadLost(why);
}

void Agent::LogHeadLost(const std::string& why) const {
  TF_LOG(WARNING) << why << "; "
                  << (runs_.empty() ? std::string("no runs here")
                                    : absl::StrCat("keeping its ", runs_.size(), " run(s) going"))
                  << " for up to " << absl::FormatDuration(options_.head_grace)
                  << " and registering again";
}

void Agent::StopRun(LocalRun& run, const std::string& reason, bool cancelled) {
  run.Stop(reason, cancelled, run.Grace(options_.kill_grace));
}

void Agent::StopAll(const std::string& reason) {
  for (auto& [id, run] : runs_) StopRun(run, reason, /*cancelled=*/true);
}

absl::Status Agent::Run() {
  absl::Status setup = Setup();
  if (!setup.ok()) return setup;
  // Shutting down, the loop waits for the runs to end and the warm workers to exit (each
  // SIGKILLed after the kill grace).
  while (!(shutting_down_ && runs_.empty() && workers_->empty())) {
    std::vector<zmq::pollitem_t> items = {
        {static_cast<void*>(head_->socket()), 0, ZMQ_POLLIN, 0},
        {static_cast<void*>(trainers_->socket()), 0, ZMQ_POLLIN, 0},
        {nullptr, signals_->fd(), ZMQ_POLLIN, 0},
    };
    std::vector<ChildProcess*> polled;
    for (auto& [id, run] : runs_) {
      for (LocalRank& r : run.ranks) {
        if (r.process != nullptr && r.process->stderr_fd() >= 0) {
          items.push_back({nullptr, r.process->stderr_fd(), ZMQ_POLLIN, 0});
          polled.push_back(r.process.get());
        }
      }
    }
    zmq::poll(items.data(), items.size(), std::chrono::milliseconds(100));
    for (int sig : signals_->Read()) {
      if (sig == SIGCHLD) continue;  // reaped below, every iteration
      if (!shutting_down_) TF_LOG(INFO) << "signal " << sig << ": stopping every run and exiting";
      shutting_down_ = true;
      StopAll("agent stopped by a signal");
    }
    for (size_t i = 0; i < polled.size(); ++i) {
      if (items[3 + i].revents & (ZMQ_POLLIN | ZMQ_POLLERR)) polled[i]->DrainStderr();
    }
    while (auto received = head_->Receive(absl::Now())) {
      if (!received->envelope.ok()) {
        TF_LOG(WARNING) << "dropped a frame from the head: "
                        << received->envelope.status().message();
        continue;
      }
      HandleHeadMessage(*received->envelope);
    }
    DrainTrainers();
    const absl::Time now = absl::Now();
    const comm::HeadSession::Tick tick = head_->Poll(
        now, shutting_down_ ? comm::HeadSession::Mode::kIdle : comm::HeadSession::Mode::kWait);
    if (!tick.lost.empty()) LogHeadLost(tick.lost);  // the session is kLost already
    if (!tick.status.ok()) fatal_ = std::string(tick.status.message());
    if (!fatal_.empty() && !shutting_down_) {
      TF_LOG(ERROR) << fatal_;
      shutting_down_ = true;
      StopAll(fatal_);
    }
    for (auto& [id, run] : runs_) {
      run.KillOverdue(now);
      RelayReports(id, run, /*at_end=*/false);
    }
    if (slots_->SampleDue(now)) SampleGpus(now);
    // Shutting down: the idle warm workers too (and one handed back meanwhile).
    if (shutting_down_) workers_->StopAll(now);
    for (const auto& [run_id, reason] : workers_->Tick(now)) {
      auto it = runs_.find(run_id);
      if (it == runs_.end() || it->second.Ended()) continue;
      TF_LOG(WARNING) << "run " << run_id << " (trial " << it->second.spec.trial()
                      << "): " << reason;
      if (it->second.start_error.empty()) it->second.start_error = reason;
      StopRun(it->second, reason, /*cancelled=*/false);
    }
    FinishStaging();
    ReapChildren();
    FinishRuns();
    StartWaiting();
  }
  if (!fatal_.empty()) return absl::UnavailableError(fatal_);
  return absl::OkStatus();
}

void Agent::HandleHeadMessage(const comm::Envelope& envelope) {
  switch (envelope.body_case()) {
    case comm::Envelope::kWelcome:
      HandleWelcome(envelope.welcome());
      break;
    case comm::Envelope::kHeartbeat:
      break;
    case comm::Envelope::kAssign:
      StartRun(envelope.assign());
      break;
    case comm::Envelope::kDecision: {
      auto it = runs_.find(envelope.decision().run_id());
      if (it == runs_.end()) break;  // the run ended meanwhile
      it->second.Answered(envelope.decision());
      if (envelope.decision().action() == comm::Decision::STOP) it->second.stop_requested = true;
      // A program hears no Decision: a STOP ends its ranks here (SIGTERM, SIGKILL after its
      // grace), and hpo's Cancel those on other agents.
      if (!it->second.program()) {
        trainers_->Deliver(it->second, envelope);
      } else if (it->second.stop_requested) {
        StopRun(it->second, "pruned", /*cancelled=*/true);
      }
      break;
    }
    case comm::Envelope::kCancel: {
      auto it = runs_.find(envelope.cancel().run_id());
      if (it != runs_.end()) StopRun(it->second, envelope.cancel().reason(), /*cancelled=*/true);
      break;
    }
    case comm::Envelope::kShutdown:
      TF_LOG(INFO) << "the head asked to shut down: " << envelope.shutdown().reason();
      shutting_down_ = true;
      StopAll("head shut down");
      break;
    case comm::Envelope::kRefused:
      HandleRefused(envelope.refused());
      break;
    default:
      TF_LOG(WARNING) << "unexpected " << comm::BodyName(envelope) << " from the head";
  }
}

void Agent::HandleWelcome(const comm::Welcome& welcome) {
  const absl::Time now = absl::Now();
  const comm::HeadSession::Welcomed w = head_->OnWelcome(welcome, now);
  if (w.was_lost) {
    TF_LOG(INFO) << "registered again with the head at " << options_.head << " (session "
                 << welcome.session() << "), holding " << runs_.size() << " run(s); it was away "
                 << absl::FormatDuration(absl::Trunc(now - w.lost_at, absl::Milliseconds(100)));
    // What happened after the Register this Welcome answers was not in it.
    for (const comm::Envelope& missed : MissedWhileAway(runs_, ended_, w.lost_at))
      SendToHead(missed);
  } else if (w.first) {
    TF_LOG(INFO) << "registered with the head at " << options_.head << " as " << options_.name
                 << " (" << slots_->count() << " slot(s), address " << options_.address << ")";
  }
  if (w.first && options_.on_registered) options_.on_registered();
}

void Agent::HandleRefused(const comm::Refused& refused) {
  switch (head_->Classify(refused)) {
    case comm::HeadSession::Refusal::kHeadRestarted:
      // Another head instance answers at the same address: the head restarted.
      if (!head_->lost()) {
        LoseHead(absl::StrCat("the head at ", options_.head, " restarted (session ",
                              refused.session(), ")"));
        head_->Register(absl::Now());
      }
      return;
    case comm::HeadSession::Refusal::kUnknownToHead:
      // The head does not know this agent: it declared it lost (silent too long) and failed
      // its runs. Stop them here too and register again (unless a Register is on its way:
      // the head answers a Register with Welcome or another reason, never this one).
      if (!runs_.empty()) {
        TF_LOG(WARNING) << "the head no longer knows this agent; stopping the " << runs_.size()
                        << " run(s) it has failed";
      }
      StopAll("the head declared this agent lost");
      if (head_->welcomed()) {
        TF_LOG(WARNING) << "the head no longer knows this agent; registering again";
        head_->Register(absl::Now());
      }
      return;
    case comm::HeadSession::Refusal::kOther:
      fatal_ = absl::StrCat("the head refused this agent: ", refused.reason());
      return;
  }
}

void Agent::HandleTrainerMessage(const std::string& identity, const comm::Envelope& envelope) {
  if (envelope.body_case() == comm::Envelope::kRegister) {
    const comm::Register& r = envelope.register_();
    // The same ROUTER serves warm workers and the trials' own ranks (the AgentClient in a
    // warm worker registers as a TRAINER too): the role says which.
    if (r.role() == comm::WORKER) {
      workers_->Registered(identity, r);
      return;
    }
    auto it = runs_.find(r.run_id());
    if (it != runs_.end()) trainers_->Registered(it->second, r.rank(), identity);
    return;
  }
  if (envelope.body_case() == comm::Envelope::kReport) {
    auto it = runs_.find(envelope.report().run_id());
    if (it == runs_.end()) return;
    it->second.KeepReport(envelope.report());
    if (head_->welcomed()) SendToHead(envelope);  // else it goes with the next Register
    return;
  }
  if (envelope.body_case() == comm::Envelope::kTrialDone) {
    HandleTrialDone(identity, envelope.trial_done());
    return;
  }
  TF_LOG(WARNING) << "unexpected " << comm::BodyName(envelope) << " from a trainer";
}

void Agent::HandleTrialDone(const std::string& identity, const comm::TrialDone& done) {
  const std::optional<int> slot = workers_->SlotRunning(identity, done.run_id());
  auto it = runs_.find(done.run_id());
  if (!slot.has_value() || it == runs_.end()) {
    TF_LOG(WARNING) << "a TrialDone for run " << done.run_id()
                    << " from a worker that does not run it; ignored";
    return;
  }
  bool retiring = false;
  std::unique_ptr<ChildProcess> worker =
      it->second.WarmTrialDone(done, *slot, options_.kill_grace, &retiring);
  if (worker != nullptr) workers_->GiveBack(*slot, std::move(worker), retiring, absl::Now());
}

void Agent::StartRun(const comm::Assign& assign) {
  const comm::TrialSpec& spec = assign.trial();
  const uint64_t run_id = spec.run_id();
  if (runs_.count(run_id) > 0) {
    TF_LOG(WARNING) << "run " << run_id << " assigned twice; ignoring the second";
    return;
  }
  LocalRun& run = runs_[run_id];
  run.spec = spec;
  run.rank_ids.assign(assign.ranks().begin(), assign.ranks().end());
  if (shutting_down_) {
    run.cancelled = true;
    run.cancel_reason = "agent is shutting down";
    return;
  }
  if (assign.ranks_size() > slots_->count()) {
    run.start_error = absl::StrCat("agent ", options_.name, " has ", slots_->count(),
                                   " slot(s), the head assigned ", assign.ranks_size());
    return;
  }
  run.staged_assign = assign;
  run.waiting = true;
  waiting_.Add(run_id);
  StartWaiting();
}

void Agent::StartWaiting() {
  for (auto& [run_id, seats] : waiting_.Admit(*slots_, runs_)) {
    LocalRun& run = runs_.at(run_id);
    if (run.spec.stage_size() == 0) {
      SpawnRanks(run_id, run, run.staged_assign, seats);
      continue;
    }
    // Fetch what the ranks need first (a thread: the loop goes on heartbeating), then start.
    run.staged_seats = seats;
    run.staging = std::async(std::launch::async, StageFiles, comm::EndpointHost(options_.head),
                             run.spec, options_.cache_dir);
  }
}

void Agent::SpawnRanks(uint64_t run_id, LocalRun& run, const comm::Assign& assign,
                       const AgentSlots::Seats& seats) {
  std::optional<comm::Envelope> started =
      launcher_->Spawn(run_id, run, assign, seats.slots, seats.lanes, seats.sharing);
  if (started.has_value()) SendToHead(*started);
  slots_->SampleRun(run_id, run, /*baseline=*/true);  // where its energy counters start
}

void Agent::FinishStaging() {
  for (auto& [run_id, run] : runs_) {
    if (!run.staging.valid() ||
        run.staging.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
      continue;
    }
    absl::StatusOr<std::map<std::string, std::string>> local = run.staging.get();
    if (!local.ok()) {
      run.start_error = absl::StrCat("staging failed: ", local.status().message());
      TF_LOG(WARNING) << "run " << run_id << " (trial " << run.spec.trial()
                      << "): " << run.start_error;
      continue;
    }
    if (run.cancelled) continue;
    comm::Assign assign = run.staged_assign;
    const std::vector<std::string> rewritten = RewriteStagedTrial(*local, assign.mutable_trial());
    TF_LOG(INFO) << "run " << run_id << ": the ranks read the staged copies: "
                 << (rewritten.empty() ? std::string("(no argument names a staged path)")
                                       : absl::StrJoin(rewritten, " "));
    SpawnRanks(run_id, run, assign, run.staged_seats);
  }
}

void Agent::DrainTrainers() {
  while (auto received = trainers_->Receive()) {
    if (!received->envelope.ok()) {
      TF_LOG(WARNING) << "dropped a frame from a trainer: "
                      << received->envelope.status().message();
      continue;
    }
    HandleTrainerMessage(received->identity, *received->envelope);
  }
}

void Agent::ReapChildren() {
  int status = 0;
  pid_t pid;
  while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
    // A retiring worker sends its TrialDone and then exits 0: the exit can be reaped before the
    // message is read off the socket. Wait a little for it, so that the trial ends as the worker
    // said (its exit code and tail), not as "ended before the trial did".
    if (LentWorkerExitedCleanly(runs_, pid, status)) {
      const absl::Time deadline = absl::Now() + absl::Seconds(1);
      while (LentWorkerExitedCleanly(runs_, pid, status) && absl::Now() < deadline) {
        zmq::pollitem_t item = {static_cast<void*>(trainers_->socket()), 0, ZMQ_POLLIN, 0};
        zmq::poll(&item, 1, std::chrono::milliseconds(20));
        DrainTrainers();
      }
    }
    for (auto& [id, run] : runs_) run.ChildEnded(id, pid, status, run.Grace(options_.kill_grace));
    workers_->ChildEnded(pid, status);  // a warm worker: dropped, the slot's next one is fresh
  }
}

void Agent::FinishRuns() {
  for (auto it = runs_.begin(); it != runs_.end();) {
    LocalRun& run = it->second;
    if (!run.Ended()) {
      ++it;
      continue;
    }
    if (run.exit.has_value()) {
      // Its ranks ended earlier; the fetch-back folder was being hashed (a thread).
      if (!fetch_back_->Finish(it->first, run)) {
        ++it;
        continue;
      }
      SendExit(it->first, run, *run.exit);
      it = runs_.erase(it);
      continue;
    }
    RelayReports(it->first, run, /*at_end=*/true);  // a program's last lines come before its Exit
    comm::Exit exit = run.MakeExit(it->first, options_.name);
    slots_->SampleRun(it->first, run, /*baseline=*/false);  // its last, while it holds the slots
    slots_->Release(it->first);
    if ((exit.outcome() == comm::Exit::COMPLETED || exit.outcome() == comm::Exit::STOPPED) &&
        fetch_back_->Offer(run, &exit)) {
      run.exit = exit;  // sent once the folder is hashed
      ++it;
      continue;
    }
    SendExit(it->first, run, exit);
    it = runs_.erase(it);
  }
}

void Agent::RelayReports(uint64_t run_id, LocalRun& run, bool at_end) {
  for (const comm::Envelope& e : run.TakeReports(run_id, at_end)) {
    if (head_->welcomed()) SendToHead(e);  // a report is kept for the next Register too
  }
}

void Agent::SampleGpus(absl::Time now) {
  const std::set<uint64_t> sampled = slots_->SampleAll(now, runs_);
  if (!head_->welcomed()) return;  // cumulative: the next one after the head is back will do
  for (uint64_t id : sampled) SendTelemetry(id, runs_.at(id));
}

void Agent::SendTelemetry(uint64_t run_id, const LocalRun& run) {
  comm::Envelope envelope;
  comm::Telemetry* t = envelope.mutable_telemetry();
  t->set_run_id(run_id);
  t->set_trial(run.spec.trial());
  t->set_agent(options_.name);
  *t->mutable_usage() = run.gpu_usage.Usage();
  SendToHead(envelope);
}

void Agent::SendExit(uint64_t run_id, const LocalRun& run, const comm::Exit& exit) {
  // The run's last telemetry goes just before its Exit (in order, over the same connection).
  if (!run.gpu_usage.empty() && head_->welcomed()) SendTelemetry(run_id, run);
  comm::Envelope envelope;
  *envelope.mutable_exit() = exit;
  if (head_->welcomed()) SendToHead(envelope);  // else it goes with the next Register
  ended_.Add(run.Held(run_id), exit, absl::Now(), head_->welcomed());
}

}  // namespace launcher
}  // namespace tunefleet
