#include "launcher/agent.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <cerrno>
#include <cstring>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "comm/codec.h"
#include "comm/endpoint.h"
#include "comm/curve_auth.h"
#include "comm/ucx_transfer.h"
#include "comm/zmq_channel.h"
#include "common/cli.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "common/runtime_dir.h"
#include "launcher/staged_files.h"
#include "launcher/trial_guard.h"

namespace tunefleet {
namespace launcher {
namespace {

constexpr absl::Duration kDefaultHeartbeat = absl::Seconds(1);
// Registering again after losing the head: a fresh socket and Register this often.
constexpr absl::Duration kReregisterEvery = absl::Seconds(3);
// Ended runs whose Exit the agent keeps for a head that may have missed it.
constexpr size_t kKeptExits = 64;
constexpr absl::Duration kKeepExitsFor = absl::Minutes(10);
// Reports kept per run while the head does not answer them.
constexpr size_t kKeptReports = 16;

// The local address the head is reached from: what other nodes can use as MASTER_ADDR.
std::string RouteAddress(const std::string& endpoint) {
  if (!absl::StartsWith(endpoint, "tcp://")) return "127.0.0.1";
  std::string hostport = endpoint.substr(6);
  const size_t colon = hostport.rfind(':');
  const std::string host = hostport.substr(0, colon);
  const std::string port = colon == std::string::npos ? "5555" : hostport.substr(colon + 1);
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* result = nullptr;
  if (::getaddrinfo(host.c_str(), port.c_str(), &hints, &result) != 0 || result == nullptr) {
    return "127.0.0.1";
  }
  std::string address = "127.0.0.1";
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 && ::connect(fd, result->ai_addr, result->ai_addrlen) == 0) {
    sockaddr_in local{};
    socklen_t len = sizeof(local);
    char text[INET_ADDRSTRLEN];
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0 &&
        ::inet_ntop(AF_INET, &local.sin_addr, text, sizeof(text)) != nullptr) {
      address = text;
    }
  }
  if (fd >= 0) ::close(fd);
  ::freeaddrinfo(result);
  return address;
}

// A TCP port free right now on `address`, for a run's rendezvous (MASTER_PORT).
int PickFreePort(const std::string& address) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 29500;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = 0;
  if (::inet_pton(AF_INET, address.c_str(), &addr.sin_addr) != 1) addr.sin_addr.s_addr = INADDR_ANY;
  int port = 29500;
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

std::string HostName() {
  char name[256] = {0};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  return name;
}

}  // namespace

Agent::Agent(Options options, SignalFd* signals)
    : options_(std::move(options)), signals_(signals), context_(1) {}

Agent::~Agent() = default;

absl::Status Agent::Setup() {
  if (options_.name.empty()) options_.name = HostName();
  std::string why;
  gpus_ = DetectGpus(&why);
  if (!gpus_.empty()) {
    slots_ = static_cast<int>(gpus_.size());
    if (options_.slots > 0) slots_ = std::min(slots_, options_.slots);
    TF_LOG(INFO) << "using " << slots_ << " of " << gpus_.size() << " GPU(s): " << gpus_[0].name;
  } else {
    slots_ = options_.slots > 0 ? options_.slots : 1;
    TF_LOG(INFO) << why << "; running " << slots_ << " CPU slot(s)";
  }
  slot_owner_.assign(static_cast<size_t>(slots_), 0);
  if (options_.runtime_dir.empty()) {
    absl::StatusOr<std::string> dir = RuntimeSubdir("agent-" + options_.name);
    if (!dir.ok()) return dir.status();
    options_.runtime_dir = *dir;
  }
  if (options_.log_dir.empty()) options_.log_dir = options_.runtime_dir;
  if (options_.cache_dir.empty()) options_.cache_dir = options_.runtime_dir + "/cache";
  options_.allow_dirs.push_back(options_.runtime_dir);
  options_.allow_dirs.push_back(options_.log_dir);
  if (options_.address.empty()) options_.address = RouteAddress(options_.head);
  if (absl::Status s = ConnectHead(); !s.ok()) return s;
  // The trainers' socket: a Unix socket in the agent's own folder (other users cannot connect:
  // the socket file is not writable for them), else TCP on loopback when the path would be too
  // long for a Unix socket (108 bytes).
  const std::string ipc = options_.runtime_dir + "/trainers.sock";
  try {
    trainers_ = std::make_unique<zmq::socket_t>(context_, zmq::socket_type::router);
    comm::ConfigureSocket(*trainers_, /*router=*/true);
    bool bound = false;
    if (ipc.size() < 100 && CheckPrivateDir(options_.runtime_dir).ok() &&
        comm::PrepareIpcBind(ipc).ok()) {
      try {
        comm::AcceptOnlyOwnUid(*trainers_);
        trainers_->bind("ipc://" + ipc);
        bound = true;
      } catch (const zmq::error_t& e) {
        TF_LOG(WARNING) << "cannot bind ipc://" << ipc << " (" << e.what() << "); trainers use TCP on loopback";
      }
    }
    if (!bound) trainers_->bind("tcp://127.0.0.1:*");
    trainer_endpoint_ = comm::LastEndpoint(*trainers_);
    TF_LOG(INFO) << "trainers report on " << trainer_endpoint_;
  } catch (const zmq::error_t& e) {
    return absl::InternalError(absl::StrCat("cannot open the trainers' socket: ", e.what()));
  }
  head_liveness_ = std::make_unique<comm::Liveness>(kDefaultHeartbeat, absl::Now());
  SendRegister();
  return absl::OkStatus();
}

absl::Status Agent::ConnectHead() {
  try {
    auto socket = std::make_unique<zmq::socket_t>(context_, zmq::socket_type::dealer);
    comm::ConfigureSocket(*socket, /*router=*/false);
    if (!options_.keys_dir.empty()) {
      absl::StatusOr<comm::ClientKeys> keys = comm::LoadClientKeys(options_.keys_dir);
      if (!keys.ok()) return keys.status();
      comm::MakeCurveClient(*socket, *keys);
    }
    socket->connect(options_.head);
    head_ = std::move(socket);  // the old one closes without lingering (ConfigureSocket)
  } catch (const zmq::error_t& e) {
    return absl::InvalidArgumentError(absl::StrCat("cannot connect to head ", options_.head, ": ", e.what()));
  }
  return absl::OkStatus();
}

void Agent::LoseHead(const std::string& why) {
  if (!head_lost_) {
    head_lost_ = true;
    head_lost_at_ = absl::Now();
    TF_LOG(WARNING) << why << "; " << (runs_.empty() ? std::string("no runs here")
                                                     : absl::StrCat("keeping its ", runs_.size(), " run(s) going"))
                    << " for up to " << absl::FormatDuration(options_.head_grace)
                    << " and registering again";
  }
  welcomed_ = false;
}

comm::HeldRun Agent::Held(uint64_t run_id, const RunState& run) const {
  comm::HeldRun held;
  *held.mutable_trial() = run.spec;
  held.mutable_trial()->set_run_id(run_id);
  for (int r : run.rank_ids) held.add_ranks(r);
  held.set_master_addr(run.master_addr);
  held.set_master_port(run.master_port);
  for (const comm::Report& r : run.unanswered) *held.add_pending_reports() = r;
  return held;
}

void Agent::SendRegister() {
  comm::Envelope envelope;
  comm::Register* r = envelope.mutable_register_();
  r->set_role(comm::AGENT);
  r->set_name(options_.name);
  r->set_hostname(HostName());
  r->set_address(options_.address);
  r->set_slots(slots_);
  for (const GpuInfo& g : gpus_) r->add_gpus(g.name);
  r->set_pid(::getpid());
  r->set_previous_session(session_);
  if (!session_.empty()) {
    // Registering again: everything a restarted head needs to adopt this node's runs. The
    // frame stays under the size cap: the oldest ended runs go first.
    for (const auto& [id, run] : runs_) *r->add_runs() = Held(id, run);
    size_t used = envelope.ByteSizeLong();
    std::vector<const comm::HeldRun*> newest_first;
    for (auto it = ended_.rbegin(); it != ended_.rend(); ++it) {
      const size_t size = it->held.ByteSizeLong() + 8;
      if (used + size > comm::kMaxFrameBytes * 3 / 4) break;
      used += size;
      newest_first.push_back(&it->held);
    }
    for (auto it = newest_first.rbegin(); it != newest_first.rend(); ++it) *r->add_runs() = **it;
  }
  SendToHead(envelope);
  registered_at_ = absl::Now();
  welcomed_ = false;
}

void Agent::SendToHead(const comm::Envelope& envelope) {
  absl::Status s = comm::Send(*head_, envelope);
  if (!s.ok()) {
    TF_LOG(WARNING) << "cannot send " << comm::BodyName(envelope) << " to the head: " << s.message();
    return;
  }
  head_liveness_->Sent(absl::Now());
}

int Agent::FreeSlots() const {
  return static_cast<int>(std::count(slot_owner_.begin(), slot_owner_.end(), 0));
}

absl::Status Agent::Run() {
  absl::Status setup = Setup();
  if (!setup.ok()) return setup;
  while (!(shutting_down_ && runs_.empty())) {
    std::vector<zmq::pollitem_t> items = {
        {static_cast<void*>(*head_), 0, ZMQ_POLLIN, 0},
        {static_cast<void*>(*trainers_), 0, ZMQ_POLLIN, 0},
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
      for (auto& [id, run] : runs_) StopRun(run, "agent stopped by a signal", /*cancelled=*/true);
    }
    for (size_t i = 0; i < polled.size(); ++i) {
      if (items[3 + i].revents & (ZMQ_POLLIN | ZMQ_POLLERR)) polled[i]->DrainStderr();
    }
    while (auto received = comm::TryReceive(*head_, /*router=*/false)) {
      head_liveness_->Heard(absl::Now());
      if (!received->envelope.ok()) {
        TF_LOG(WARNING) << "dropped a frame from the head: " << received->envelope.status().message();
        continue;
      }
      HandleHeadMessage(*received->envelope);
    }
    while (auto received = comm::TryReceive(*trainers_, /*router=*/true)) {
      if (!received->envelope.ok()) {
        TF_LOG(WARNING) << "dropped a frame from a trainer: " << received->envelope.status().message();
        continue;
      }
      HandleTrainerMessage(received->identity, *received->envelope);
    }
    const absl::Time now = absl::Now();
    if (welcomed_ && head_liveness_->HeartbeatDue(now)) {
      comm::Envelope hb;
      hb.mutable_heartbeat();
      SendToHead(hb);
    }
    if (!welcomed_ && session_.empty() && now - registered_at_ > options_.register_timeout &&
        !shutting_down_) {
      fatal_ = absl::StrCat("no answer from the head at ", options_.head, " for ",
                            absl::FormatDuration(options_.register_timeout),
                            options_.keys_dir.empty()
                                ? " (if the head runs with --keys, give this agent --keys too)"
                                : " (is this agent's client key in the head's authorized_keys?)");
    }
    if (welcomed_ && !head_liveness_->Alive(now)) {
      LoseHead(absl::StrCat("lost the head at ", options_.head, " (no heartbeat for ",
                            absl::FormatDuration(head_liveness_->interval() * comm::kDefaultLiveness),
                            ")"));
      registered_at_ = absl::InfinitePast();
    }
    if (head_lost_ && !welcomed_ && !shutting_down_) {
      if (now - head_lost_at_ > options_.head_grace) {
        fatal_ = absl::StrCat("the head at ", options_.head, " did not come back within ",
                              absl::FormatDuration(options_.head_grace));
      } else if (now - registered_at_ >= kReregisterEvery) {
        if (absl::Status s = ConnectHead(); !s.ok()) {
          fatal_ = std::string(s.message());
        } else {
          SendRegister();
        }
      }
    }
    if (!fatal_.empty() && !shutting_down_) {
      TF_LOG(ERROR) << fatal_;
      shutting_down_ = true;
      for (auto& [id, run] : runs_) StopRun(run, fatal_, /*cancelled=*/true);
    }
    for (auto& [id, run] : runs_) {
      if (now >= run.kill_deadline) {
        for (LocalRank& r : run.ranks) {
          if (r.process != nullptr && !r.process->exited()) r.process->Signal(SIGKILL);
        }
        run.kill_deadline = absl::InfiniteFuture();
      }
    }
    FinishStaging();
    ReapChildren();
    FinishRuns();
  }
  if (!fatal_.empty()) return absl::UnavailableError(fatal_);
  return absl::OkStatus();
}

void Agent::HandleHeadMessage(const comm::Envelope& envelope) {
  switch (envelope.body_case()) {
    case comm::Envelope::kWelcome: {
      const uint32_t ms = envelope.welcome().heartbeat_interval_ms();
      head_liveness_ = std::make_unique<comm::Liveness>(
          ms > 0 ? absl::Milliseconds(ms) : kDefaultHeartbeat, absl::Now());
      if (head_lost_) {
        TF_LOG(INFO) << "registered again with the head at " << options_.head << " (session "
                     << envelope.welcome().session() << "), holding " << runs_.size()
                     << " run(s); it was away "
                     << absl::FormatDuration(absl::Trunc(absl::Now() - head_lost_at_, absl::Milliseconds(100)));
      } else if (!welcomed_ && session_.empty()) {
        TF_LOG(INFO) << "registered with the head at " << options_.head << " as " << options_.name
                     << " (" << slots_ << " slot(s), address " << options_.address << ")";
      }
      const bool first = session_.empty();
      const bool was_lost = head_lost_;
      const absl::Time lost_at = head_lost_at_;
      session_ = envelope.welcome().session();
      head_lost_ = false;
      welcomed_ = true;
      if (was_lost) {
        // What happened after the Register this Welcome answers was not in it: the Exits of
        // runs that ended while the head was away, the reports still unanswered. The head
        // drops what it already has (an Exit for an ended part; hpo keeps a step's first value).
        for (const EndedRun& ended : ended_) {
          if (ended.at < lost_at) continue;
          comm::Envelope exit;
          *exit.mutable_exit() = ended.held.exit();
          SendToHead(exit);
        }
        for (const auto& [id, run] : runs_) {
          for (const comm::Report& r : run.unanswered) {
            comm::Envelope report;
            *report.mutable_report() = r;
            SendToHead(report);
          }
        }
      }
      if (first && options_.on_registered) options_.on_registered();
      break;
    }
    case comm::Envelope::kHeartbeat:
      break;
    case comm::Envelope::kAssign:
      StartRun(envelope.assign());
      break;
    case comm::Envelope::kDecision: {
      auto it = runs_.find(envelope.decision().run_id());
      if (it == runs_.end()) break;  // the run ended meanwhile
      const comm::Decision& d = envelope.decision();
      std::deque<comm::Report>& unanswered = it->second.unanswered;
      unanswered.erase(std::remove_if(unanswered.begin(), unanswered.end(),
                                      [&d](const comm::Report& r) {
                                        return r.step() == d.step() || d.action() == comm::Decision::STOP;
                                      }),
                       unanswered.end());
      if (envelope.decision().action() == comm::Decision::STOP) it->second.stop_requested = true;
      DeliverDecision(it->second, envelope);
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
      for (auto& [id, run] : runs_) StopRun(run, "head shut down", /*cancelled=*/true);
      break;
    case comm::Envelope::kRefused:
      if (envelope.refused().reason() == comm::kRefusedRegisterFirst && !session_.empty() &&
          envelope.refused().session() != session_) {
        // Another head instance answers at the same address: the head restarted.
        if (welcomed_ || !head_lost_) {
          LoseHead(absl::StrCat("the head at ", options_.head, " restarted (session ",
                                envelope.refused().session(), ")"));
          SendRegister();
        }
        break;
      }
      if (envelope.refused().reason() == comm::kRefusedRegisterFirst) {
        // The head does not know this agent: it declared it lost (silent too long) and failed
        // its runs. Stop them here too and register again (unless a Register is on its way:
        // the head answers a Register with Welcome or another reason, never this one).
        if (!runs_.empty()) {
          TF_LOG(WARNING) << "the head no longer knows this agent; stopping the " << runs_.size()
                          << " run(s) it has failed";
        }
        for (auto& [id, run] : runs_) {
          StopRun(run, "the head declared this agent lost", /*cancelled=*/true);
        }
        if (welcomed_) {
          TF_LOG(WARNING) << "the head no longer knows this agent; registering again";
          SendRegister();
        }
        break;
      }
      fatal_ = absl::StrCat("the head refused this agent: ", envelope.refused().reason());
      break;
    default:
      TF_LOG(WARNING) << "unexpected " << comm::BodyName(envelope) << " from the head";
  }
}

void Agent::HandleTrainerMessage(const std::string& identity, const comm::Envelope& envelope) {
  if (envelope.body_case() == comm::Envelope::kRegister) {
    const comm::Register& r = envelope.register_();
    auto it = runs_.find(r.run_id());
    if (it == runs_.end()) return;
    for (LocalRank& rank : it->second.ranks) {
      if (rank.rank == r.rank()) rank.trainer_identity = identity;
    }
    std::vector<comm::Envelope> pending;
    pending.swap(it->second.pending_decisions);
    for (const comm::Envelope& d : pending) DeliverDecision(it->second, d);
    return;
  }
  if (envelope.body_case() == comm::Envelope::kReport) {
    auto it = runs_.find(envelope.report().run_id());
    if (it == runs_.end()) return;
    std::deque<comm::Report>& unanswered = it->second.unanswered;
    unanswered.push_back(envelope.report());
    if (unanswered.size() > kKeptReports) unanswered.pop_front();
    if (welcomed_) SendToHead(envelope);  // else it goes with the next Register
    return;
  }
  TF_LOG(WARNING) << "unexpected " << comm::BodyName(envelope) << " from a trainer";
}

void Agent::DeliverDecision(RunState& run, const comm::Envelope& envelope) {
  // Rank 0 when it is here, else the lowest local rank: it shares the decision with the others.
  LocalRank* target = nullptr;
  for (LocalRank& r : run.ranks) {
    if (target == nullptr || r.rank < target->rank) target = &r;
  }
  if (target == nullptr || target->process == nullptr || target->process->exited()) return;
  if (target->trainer_identity.empty()) {
    run.pending_decisions.push_back(envelope);
    return;
  }
  absl::Status s = comm::SendTo(*trainers_, target->trainer_identity, envelope);
  if (!s.ok()) TF_LOG(WARNING) << "cannot deliver a decision to rank " << target->rank << ": " << s.message();
}

void Agent::StartRun(const comm::Assign& assign) {
  const comm::TrialSpec& spec = assign.trial();
  const uint64_t run_id = spec.run_id();
  if (runs_.count(run_id) > 0) {
    TF_LOG(WARNING) << "run " << run_id << " assigned twice; ignoring the second";
    return;
  }
  RunState& run = runs_[run_id];
  run.spec = spec;
  run.rank_ids.assign(assign.ranks().begin(), assign.ranks().end());
  if (shutting_down_) {
    run.cancelled = true;
    run.cancel_reason = "agent is shutting down";
    return;
  }
  std::vector<int> free;
  for (int s = 0; s < slots_; ++s) {
    if (slot_owner_[static_cast<size_t>(s)] == 0) free.push_back(s);
  }
  if (free.size() < static_cast<size_t>(assign.ranks_size())) {
    run.start_error = absl::StrCat("agent ", options_.name, " has ", free.size(),
                                   " free slot(s), the head assigned ", assign.ranks_size());
    return;
  }
  free.resize(static_cast<size_t>(assign.ranks_size()));
  if (spec.stage_size() > 0) {
    // Fetch what the ranks need first (a thread: the loop goes on heartbeating), then start.
    for (int s : free) slot_owner_[static_cast<size_t>(s)] = run_id;
    run.staged_slots = free;
    run.staged_assign = assign;
    run.staging = std::async(std::launch::async, StageFiles, HeadHost(options_.head), spec,
                             options_.cache_dir);
    return;
  }
  SpawnRanks(run_id, run, assign, free);
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
      TF_LOG(WARNING) << "run " << run_id << " (trial " << run.spec.trial() << "): " << run.start_error;
      continue;
    }
    if (run.cancelled) continue;
    comm::Assign assign = run.staged_assign;
    std::vector<std::string> rewritten;
    for (std::string& arg : *assign.mutable_trial()->mutable_argv()) {
      std::string local_arg = RewriteStaged(arg, *local);
      if (local_arg != arg) rewritten.push_back(local_arg);
      arg = std::move(local_arg);
    }
    TF_LOG(INFO) << "run " << run_id << ": the ranks read the staged copies: "
                 << (rewritten.empty() ? std::string("(no argument names a staged path)")
                                       : absl::StrJoin(rewritten, " "));
    SpawnRanks(run_id, run, assign, run.staged_slots);
  }
}

void Agent::SpawnRanks(uint64_t run_id, RunState& run, const comm::Assign& assign,
                       const std::vector<int>& free) {
  const comm::TrialSpec& spec = assign.trial();
  const std::string master_addr = assign.master_addr().empty() ? options_.address : assign.master_addr();
  const int master_port = assign.master_port() != 0 ? assign.master_port() : PickFreePort(master_addr);
  run.master_addr = master_addr;
  run.master_port = master_port;
  const std::string log_dir = spec.log_dir().empty()
                                  ? absl::StrCat(options_.log_dir, "/", SafeName(spec.sweep()) ? spec.sweep() : "runs")
                                  : spec.log_dir();
  if (absl::Status allowed = CheckTrialPath("log_dir", log_dir, options_.allow_dirs); !allowed.ok()) {
    TF_LOG(WARNING) << "run " << run_id << " (trial " << spec.trial() << ") refused: " << allowed.message();
    run.start_error = std::string(allowed.message());
    StopRun(run, run.start_error, /*cancelled=*/false);
    return;
  }
  std::vector<std::string> dropped;
  const std::map<std::string, std::string> trial_env = FilterTrialEnv(
      std::map<std::string, std::string>(spec.env().begin(), spec.env().end()), options_.allow_env,
      &dropped);
  if (!dropped.empty()) {
    TF_LOG(WARNING) << "run " << run_id << " (trial " << spec.trial()
                    << "): not passed to the trainer (agent --allow_env; LD_* never): "
                    << absl::StrJoin(dropped, ", ");
  }
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  comm::Envelope started;
  comm::Started* st = started.mutable_started();
  st->set_run_id(run_id);
  st->set_trial(spec.trial());
  st->set_agent(options_.name);
  for (int i = 0; i < assign.ranks_size(); ++i) {
    LocalRank rank;
    rank.rank = assign.ranks(i);
    rank.slot = free[static_cast<size_t>(i)];
    slot_owner_[static_cast<size_t>(rank.slot)] = run_id;
    ProcessSpec ps;
    ps.binary = options_.trainer_binary;
    ps.args.assign(spec.argv().begin(), spec.argv().end());
    ps.env = {{"RANK", std::to_string(rank.rank)},
              {"WORLD_SIZE", std::to_string(spec.world_size())},
              {"LOCAL_RANK", std::to_string(i)},
              {"LOCAL_WORLD_SIZE", std::to_string(assign.ranks_size())},
              {"MASTER_ADDR", master_addr},
              {"MASTER_PORT", std::to_string(master_port)},
              {"CUDA_VISIBLE_DEVICES", gpus_.empty() ? "" : gpus_[static_cast<size_t>(rank.slot)].id},
              {"TUNEFLEET_AGENT_ENDPOINT", trainer_endpoint_},
              {"TUNEFLEET_RUN_ID", std::to_string(run_id)},
              {"TUNEFLEET_TRIAL", std::to_string(spec.trial())},
              {"TUNEFLEET_SWEEP", spec.sweep()}};
    if (gpus_.empty() && std::getenv("OMP_NUM_THREADS") == nullptr) {
      ps.env["OMP_NUM_THREADS"] = std::to_string(std::max(1u, cores / static_cast<unsigned>(slots_)));
    }
    for (const auto& [k, v] : trial_env) ps.env.emplace(k, v);  // the agent's own win
    ps.log_path = absl::StrCat(log_dir, "/trial-", spec.trial(), "/rank-", rank.rank, ".log");
    auto child = ChildProcess::Start(ps);
    if (!child.ok()) {
      run.start_error = std::string(child.status().message());
      run.ranks.push_back(std::move(rank));
      StopRun(run, run.start_error, /*cancelled=*/false);
      return;
    }
    rank.process = std::move(*child);
    st->add_ranks(rank.rank);
    st->add_pids(rank.process->pid());
    st->add_slots(rank.slot);
    run.ranks.push_back(std::move(rank));
  }
  TF_LOG(INFO) << "run " << run_id << " (trial " << spec.trial() << "): started rank(s) "
               << st->ranks(0) << (assign.ranks_size() > 1 ? "..." : "") << " of "
               << spec.world_size() << ", master " << master_addr << ":" << master_port;
  SendToHead(started);
}

void Agent::StopRun(RunState& run, const std::string& reason, bool cancelled) {
  if (cancelled && !run.cancelled) {
    run.cancelled = true;
    run.cancel_reason = reason;
  }
  bool signalled = false;
  for (LocalRank& r : run.ranks) {
    if (r.process != nullptr && !r.process->exited()) {
      r.process->Signal(SIGTERM);
      signalled = true;
    }
  }
  if (signalled && run.kill_deadline == absl::InfiniteFuture()) {
    run.kill_deadline = absl::Now() + options_.kill_grace;
  }
}

bool Agent::StartFetchBackOffer(RunState& run, comm::Exit* exit) {
  const std::string& path = run.spec.fetch_back();
  if (path.empty() || std::find(run.rank_ids.begin(), run.rank_ids.end(), 0) == run.rank_ids.end()) {
    return false;  // nothing asked, or rank 0 (which writes the output) ran elsewhere
  }
  if (absl::Status allowed = CheckTrialPath("fetch_back", path, options_.allow_dirs); !allowed.ok()) {
    exit->set_fetch_error(std::string(allowed.message()));
    return false;
  }
  if (bulk_ == nullptr) {
    absl::StatusOr<std::unique_ptr<comm::BulkServer>> started = comm::BulkServer::Start(options_.address, 0);
    const std::string address = started.ok() ? (*started)->address() : "";
    if (!started.ok() || !absl::SimpleAtoi(address.substr(address.rfind(':') + 1), &bulk_port_)) {
      exit->set_fetch_error(absl::StrCat("cannot start this agent's bulk server: ",
                                         started.ok() ? address : started.status().message()));
      return false;
    }
    bulk_ = std::move(*started);
  }
  // Hashing a model folder takes a while: off the loop, which goes on heartbeating.
  comm::BulkServer* server = bulk_.get();
  run.publishing = std::async(std::launch::async, [server, path] { return server->Publish(path); });
  return true;
}

void Agent::ReapChildren() {
  int status = 0;
  pid_t pid;
  while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
    for (auto& [id, run] : runs_) {
      for (size_t i = 0; i < run.ranks.size(); ++i) {
        LocalRank& r = run.ranks[i];
        if (r.process == nullptr || r.process->pid() != pid) continue;
        r.process->SetExitStatus(status);
        r.process->DrainStderr();
        if (!r.process->succeeded() && run.failed_index < 0 && !run.cancelled) {
          run.failed_index = static_cast<int>(i);
          TF_LOG(WARNING) << "run " << id << " (trial " << run.spec.trial() << ") rank " << r.rank
                          << ": " << r.process->DescribeExit();
          StopRun(run, "another rank failed", /*cancelled=*/false);
        }
      }
    }
  }
}

void Agent::FinishRuns() {
  for (auto it = runs_.begin(); it != runs_.end();) {
    RunState& run = it->second;
    bool done = !run.staging.valid();  // a fetch still going holds the run
    for (const LocalRank& r : run.ranks) {
      if (r.process != nullptr && !r.process->exited()) done = false;
    }
    if (!done) {
      ++it;
      continue;
    }
    if (run.exit.has_value()) {
      // Its ranks ended earlier; the fetch-back folder was being hashed (a thread).
      if (run.publishing.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
        ++it;
        continue;
      }
      absl::StatusOr<std::string> hash = run.publishing.get();
      if (hash.ok()) {
        run.exit->set_fetch_hash(*hash);
        run.exit->set_fetch_port(bulk_port_);
        TF_LOG(INFO) << "run " << it->first << ": serving " << run.spec.fetch_back() << " ("
                     << hash->substr(0, 12) << ") for the head on port " << bulk_port_;
      } else {
        run.exit->set_fetch_error(std::string(hash.status().message()));
      }
      SendExit(it->first, run, *run.exit);
      it = runs_.erase(it);
      continue;
    }
    comm::Envelope envelope;
    comm::Exit* e = envelope.mutable_exit();
    e->set_run_id(it->first);
    e->set_trial(run.spec.trial());
    e->set_agent(options_.name);
    if (run.cancelled) {
      e->set_outcome(comm::Exit::CANCELLED);
      e->set_reason(run.cancel_reason);
    } else if (!run.start_error.empty()) {
      e->set_outcome(comm::Exit::FAILED);
      e->set_reason(run.start_error);
      e->set_exit_code(127);
      if (!run.ranks.empty()) e->set_rank(run.ranks.back().rank);
    } else if (run.failed_index >= 0) {
      const LocalRank& r = run.ranks[static_cast<size_t>(run.failed_index)];
      e->set_outcome(comm::Exit::FAILED);
      e->set_rank(r.rank);
      e->set_exit_code(r.process->exit_code());
      e->set_signal(r.process->term_signal());
      e->set_stderr_tail(r.process->StderrTail());
      e->set_reason(r.process->term_signal() == 0 && r.process->exit_code() == kExitOutOfMemory
                        ? absl::StrCat("out of memory (rank ", r.rank, ")")
                        : absl::StrCat("rank ", r.rank, ": ", r.process->DescribeExit()));
    } else if (run.stop_requested) {
      e->set_outcome(comm::Exit::STOPPED);
    } else {
      e->set_outcome(comm::Exit::COMPLETED);
    }
    for (uint64_t& owner : slot_owner_) {
      if (owner == it->first) owner = 0;
    }
    if ((e->outcome() == comm::Exit::COMPLETED || e->outcome() == comm::Exit::STOPPED) &&
        StartFetchBackOffer(run, e)) {
      run.exit = *e;  // sent once the folder is hashed
      ++it;
      continue;
    }
    SendExit(it->first, run, *e);
    it = runs_.erase(it);
  }
}

void Agent::SendExit(uint64_t run_id, const RunState& run, const comm::Exit& exit) {
  comm::Envelope envelope;
  *envelope.mutable_exit() = exit;
  if (welcomed_) SendToHead(envelope);  // else it goes with the next Register
  EndedRun ended{Held(run_id, run), absl::Now()};
  ended.held.set_ended(true);
  *ended.held.mutable_exit() = exit;
  ended_.push_back(std::move(ended));
  while (ended_.size() > kKeptExits ||
         (!ended_.empty() && welcomed_ && absl::Now() - ended_.front().at > kKeepExitsFor)) {
    ended_.pop_front();
  }
}

}  // namespace launcher
}  // namespace tunefleet
