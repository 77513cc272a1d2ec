#include "launcher/head.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "comm/codec.h"
#include "comm/endpoint.h"
#include "comm/zmq_channel.h"
#include "common/logging.h"
#include "launcher/placement.h"

namespace tunefleet {
namespace launcher {
namespace {

constexpr char kControlEndpoint[] = "inproc://tunefleet-head-control";
// Messages handled per wake-up before the heartbeat bookkeeping gets its turn.
constexpr int kMaxBatch = 4096;
constexpr int kBaseMasterPort = 29500;
constexpr int kMasterPortRange = 2000;

std::string RandomSession() {
  std::random_device device;
  std::mt19937_64 gen((static_cast<uint64_t>(device()) << 32) ^ device());
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(gen()));
  return text;
}

// "3 s", "150 ms", "2.5 s".
std::string FormatSpan(absl::Duration d) {
  if (d < absl::Seconds(1)) return absl::StrCat(absl::ToInt64Milliseconds(d), " ms");
  if (d % absl::Seconds(1) == absl::ZeroDuration()) {
    return absl::StrCat(absl::ToInt64Seconds(d), " s");
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f s", absl::ToDoubleSeconds(d));
  return text;
}

// "0-3" or "2".
std::string RankRange(const std::vector<int>& ranks) {
  if (ranks.empty()) return "-";
  if (ranks.size() == 1) return std::to_string(ranks.front());
  return absl::StrCat(ranks.front(), "-", ranks.back());
}

const char* OutcomeName(comm::Exit::Outcome outcome) {
  switch (outcome) {
    case comm::Exit::COMPLETED: return "COMPLETED";
    case comm::Exit::STOPPED: return "STOPPED";
    case comm::Exit::FAILED: return "FAILED";
    case comm::Exit::CANCELLED: return "CANCELLED";
    default: return "UNKNOWN";
  }
}

const char* RoleName(comm::Role role) { return role == comm::AGENT ? "agent" : "client"; }

}  // namespace

Head::Head(Options options, SignalFd* signals)
    : options_(std::move(options)),
      signals_(signals),
      session_(RandomSession()),
      context_(1),
      peers_(options_.hosts, options_.hosts_file,
             options_.heartbeat_interval > absl::ZeroDuration() ? options_.heartbeat_interval
                                                                : absl::Seconds(1)),
      runs_(std::max<uint64_t>(1, options_.first_run_id)) {
  if (options_.heartbeat_interval <= absl::ZeroDuration()) {
    options_.heartbeat_interval = absl::Seconds(1);
  }
  if (options_.recovery_window <= absl::ZeroDuration()) {
    options_.recovery_window = 2 * comm::kDefaultLiveness * options_.heartbeat_interval;
  }
  recovery_deadline_ = absl::Now() + options_.recovery_window;
  control_rx_ = std::make_unique<zmq::socket_t>(context_, zmq::socket_type::pair);
  control_rx_->set(zmq::sockopt::linger, 0);
  control_rx_->bind(kControlEndpoint);
  absl::MutexLock lock(&control_mu_);
  control_tx_ = std::make_unique<zmq::socket_t>(context_, zmq::socket_type::pair);
  control_tx_->set(zmq::sockopt::linger, 0);
  control_tx_->connect(kControlEndpoint);
}

Head::~Head() {
  router_.reset();
  zap_.reset();
  control_rx_.reset();
  absl::MutexLock lock(&control_mu_);
  control_tx_.reset();
}

absl::Status Head::Bind() {
  if (router_ != nullptr) return absl::OkStatus();
  auto router = std::make_unique<zmq::socket_t>(context_, zmq::socket_type::router);
  comm::ConfigureSocket(*router, /*router=*/true);
  if (!options_.keys_dir.empty()) {
    absl::StatusOr<comm::ServerKeys> keys = comm::LoadServerKeys(options_.keys_dir);
    if (!keys.ok()) return absl::InvalidArgumentError(keys.status().message());
    zap_ = std::make_unique<comm::ZapHandler>(context_, keys->authorized);
    comm::MakeCurveServer(*router, *keys);
    TF_LOG(INFO) << "CURVE on: " << keys->authorized.size()
                 << " authorized client key(s) from " << options_.keys_dir;
  }
  absl::StatusOr<comm::Endpoint> parsed = comm::ParseEndpoint(options_.bind, /*for_bind=*/true);
  if (!parsed.ok()) return parsed.status();
  if (parsed->ipc) {
    // A socket file left by a killed head is removed; a live head's is not taken over.
    if (absl::Status s = comm::PrepareIpcBind(parsed->path); !s.ok()) {
      return absl::UnavailableError(absl::StrCat("cannot bind ", options_.bind, ": ", s.message()));
    }
    comm::AcceptOnlyOwnUid(*router);  // the control plane is this user's alone
  }
  try {
    router->bind(parsed->text);
  } catch (const zmq::error_t& e) {
    const std::string message = absl::StrCat("cannot bind ", options_.bind, ": ", e.what());
    if (e.num() == EINVAL || e.num() == EPROTONOSUPPORT || e.num() == ENOENT) {
      return absl::InvalidArgumentError(message);
    }
    return absl::UnavailableError(message);
  }
  router_ = std::move(router);
  endpoint_ = comm::LastEndpoint(*router_);
  stager_ = std::make_unique<Stager>(StageBindIp(endpoint_));
  TF_LOG(INFO) << "listening on " << endpoint_ << " (session " << session_ << ", heartbeat "
               << FormatSpan(options_.heartbeat_interval) << ")";
  return absl::OkStatus();
}

void Head::Stop() {
  absl::MutexLock lock(&control_mu_);
  if (control_tx_ == nullptr) return;
  try {
    control_tx_->send(zmq::str_buffer("stop"), zmq::send_flags::dontwait);
  } catch (const zmq::error_t&) {
    // The loop has gone already.
  }
}

absl::Status Head::Run() {
  if (absl::Status s = Bind(); !s.ok()) return s;
  next_tick_ = absl::Now();
  while (true) {
    zmq::pollitem_t items[] = {
        {static_cast<void*>(*router_), 0, ZMQ_POLLIN, 0},
        {static_cast<void*>(*control_rx_), 0, ZMQ_POLLIN, 0},
        {zap_ != nullptr ? static_cast<void*>(zap_->socket()) : nullptr, -1, ZMQ_POLLIN, 0},
        {nullptr, signals_ != nullptr ? signals_->fd() : -1, ZMQ_POLLIN, 0},
    };
    const size_t n_items = signals_ != nullptr ? 4 : 3;
    const absl::Duration wait = std::max(absl::ZeroDuration(), next_tick_ - absl::Now());
    try {
      zmq::poll(items, n_items, std::chrono::milliseconds(absl::ToInt64Milliseconds(wait) + 1));
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) continue;
      return absl::InternalError(absl::StrCat("head poll: ", e.what()));
    }
    if (zap_ != nullptr && (items[2].revents & ZMQ_POLLIN)) zap_->HandleRequest();
    if (signals_ != nullptr && (items[3].revents & ZMQ_POLLIN)) {
      std::vector<int> signals = signals_->Read();
      if (!signals.empty()) {
        TF_LOG(INFO) << "signal " << signals.front() << ": shutting down";
        ShutdownAgents(absl::StrCat("the head got signal ", signals.front()));
        return absl::OkStatus();
      }
    }
    if (items[1].revents & ZMQ_POLLIN) {
      TF_LOG(INFO) << "stop requested: shutting down";
      ShutdownAgents("the head was stopped");
      return absl::OkStatus();
    }
    for (int i = 0; i < kMaxBatch; ++i) {
      std::optional<comm::Received> received = comm::TryReceive(*router_, /*router=*/true);
      if (!received.has_value()) break;
      if (received->envelope.status().code() == absl::StatusCode::kUnavailable) {
        // A receive error (not a bad frame); a socket that is really gone fails the next poll.
        LogLimited(received->identity, absl::StrCat("receive failed: ",
                                                    received->envelope.status().message()));
        break;
      }
      HandleFrame(received->identity, received->envelope);
      if (stop_) return absl::OkStatus();
    }
    const absl::Time now = absl::Now();
    if (now >= next_tick_) Tick(now);
  }
}

void Head::HandleFrame(const std::string& identity, absl::StatusOr<comm::Envelope>& received) {
  Peer* peer = peers_.Find(identity);
  if (peer != nullptr) peer->liveness.Heard(absl::Now());
  if (!received.ok()) {
    const absl::Status& status = received.status();
    if (status.code() == absl::StatusCode::kFailedPrecondition) {
      LogLimited(identity, absl::StrCat("refused a peer: ", status.message()));
      Refuse(identity, std::string(status.message()), /*with_version=*/true);
    } else {
      LogLimited(identity, absl::StrCat("dropped a frame: ", status.message()));
    }
    return;
  }
  comm::Envelope& envelope = *received;
  const auto body = envelope.body_case();
  if (body == comm::Envelope::kRegister) {
    HandleRegister(identity, envelope.register_());
    return;
  }
  if (peer == nullptr) {
    LogLimited(identity, absl::StrCat("refused a ", comm::BodyName(envelope),
                                      " from a peer that has not registered"));
    Refuse(identity, comm::kRefusedRegisterFirst);
    return;
  }
  const bool from_agent = peer->role == comm::AGENT;
  switch (body) {
    case comm::Envelope::kHeartbeat:
      return;
    case comm::Envelope::kStatusRequest:
      HandleStatusRequest(identity);
      return;
    case comm::Envelope::kReport:
      if (from_agent) return ForwardToClient(identity, envelope.report().run_id(), envelope);
      break;
    case comm::Envelope::kStarted:
      if (from_agent) return ForwardToClient(identity, envelope.started().run_id(), envelope);
      break;
    case comm::Envelope::kExit:
      if (from_agent) return HandleExit(identity, envelope.exit());
      break;
    case comm::Envelope::kSubmit:
      if (!from_agent) return HandleSubmit(identity, envelope);
      break;
    case comm::Envelope::kDecision:
      if (!from_agent) return HandleDecision(identity, envelope);
      break;
    case comm::Envelope::kCancel:
      if (!from_agent) return HandleCancel(identity, envelope.cancel());
      break;
    case comm::Envelope::kShutdown:
      if (!from_agent) {
        TF_LOG(INFO) << "client " << peer->name << " asked the head to shut down"
                     << (envelope.shutdown().reason().empty() ? "" : ": ")
                     << envelope.shutdown().reason();
        ShutdownAgents(envelope.shutdown().reason().empty() ? "shutdown requested by a client"
                                                            : envelope.shutdown().reason());
        stop_ = true;
        return;
      }
      break;
    default:
      break;
  }
  LogLimited(identity, absl::StrCat("ignored an unexpected ", comm::BodyName(envelope), " from ",
                                    RoleName(peer->role), " ", peer->name));
}

void Head::HandleRegister(const std::string& identity, const comm::Register& reg) {
  const absl::Time now = absl::Now();
  if (reg.role() != comm::AGENT && reg.role() != comm::CLIENT) {
    LogLimited(identity, "refused a registration with no agent or client role");
    Refuse(identity, "only agents and clients register with the head");
    return;
  }
  // The same identity registering again under another role is a new peer.
  if (const Peer* same = peers_.Find(identity); same != nullptr && same->role != reg.role()) {
    LosePeer(identity, absl::StrCat(RoleName(same->role), " ", same->name,
                                    " registered again as a ", RoleName(reg.role())));
  }
  comm::Register named = reg;
  if (reg.role() == comm::CLIENT && reg.name().empty()) named.set_name("client");
  const std::string& name = named.name();

  if (reg.role() == comm::AGENT) {
    if (absl::Status s = peers_.CheckAgent(reg); !s.ok()) {
      TF_LOG(WARNING) << "refused " << (name.empty() ? "an agent" : "agent " + name) << " from host "
                      << reg.hostname() << ": " << s.message();
      Refuse(identity, std::string(s.message()));
      return;
    }
    const std::string other_id = peers_.AgentNamed(name, identity);
    if (!other_id.empty()) {
      const Peer& other = *peers_.Find(other_id);
      if (other.liveness.Alive(now)) {
        TF_LOG(WARNING) << "refused agent " << name << " from host " << reg.hostname()
                        << ": the name is taken by a live agent";
        Refuse(identity, absl::StrCat("an agent named ", name, " is already registered (host ",
                                      other.hostname, ", pid ", other.pid, ")"));
        return;
      }
      LosePeer(other_id, absl::StrCat("agent ", name, " lost (no heartbeat for ",
                                      FormatSpan(options_.heartbeat_interval * comm::kDefaultLiveness),
                                      ")"));
    }
  }

  auto [peer, inserted] = peers_.Upsert(identity, named, now);
  comm::Envelope welcome;
  welcome.mutable_welcome()->set_session(session_);
  welcome.mutable_welcome()->set_heartbeat_interval_ms(
      static_cast<uint32_t>(absl::ToInt64Milliseconds(options_.heartbeat_interval)));
  Send(identity, welcome);

  if (reg.role() == comm::AGENT) {
    AdoptHeldRuns(identity, named);
    TF_LOG(INFO) << "agent " << name << (inserted ? " registered" : " registered again")
                 << " with " << peer->slots << " slot(s)"
                 << (peer->slots != peer->offered_slots
                         ? absl::StrCat(" (of ", peer->offered_slots, ", capped by ",
                                        peers_.hosts_file(), ")")
                         : std::string())
                 << ", " << peer->gpus << " GPU(s), address " << peer->address << ", host "
                 << peer->hostname << ", pid " << peer->pid;
    Dispatch();
  } else {
    TF_LOG(INFO) << "client " << name << (inserted ? " registered" : " registered again")
                 << " (pid " << reg.pid() << ")";
  }
}

void Head::HandleSubmit(const std::string& identity, comm::Envelope& envelope) {
  const std::string& client_name = peers_.Find(identity)->name;
  comm::TrialSpec* trial = envelope.mutable_submit()->mutable_trial();
  trial->set_client(client_name);
  if (envelope.submit().resubmit()) {
    if (RunRecord* orphan = runs_.FindOrphan(client_name, trial->trial()); orphan != nullptr) {
      runs_.AttachClient(*orphan, identity);
      TF_LOG(INFO) << "trial " << trial->trial() << " of client " << client_name
                   << " found again: run " << orphan->run_id << ", held by its agents";
      DeliverHeld(*orphan);
      return;
    }
    if (const RunRecord* live = runs_.FindForClient(identity, 0, trial->trial());
        live != nullptr && !live->reported) {
      return;  // this head never lost it
    }
    if (recovering_) {
      TF_LOG(INFO) << "trial " << trial->trial() << " of client " << client_name
                   << " submitted again: waiting for the agents that may hold it";
      held_resubmits_.push_back({identity, std::move(*trial)});
      return;
    }
    TF_LOG(INFO) << "trial " << trial->trial() << " of client " << client_name
                 << " submitted again and no agent holds it: running it again";
  }
  RunRecord& run = runs_.Submit(std::move(*trial), identity);
  const comm::TrialSpec& spec = run.spec;
  if (spec.world_size() < 1) {
    FailQueued(run, absl::StrCat("world_size must be at least 1, got ", spec.world_size()));
    return;
  }
  if (!PrepareStaging(run)) return;
  TF_LOG(INFO) << "run " << run.run_id << " (trial " << spec.trial()
               << (spec.sweep().empty() ? "" : " of ") << spec.sweep() << ", "
               << spec.world_size() << " rank(s)) submitted by client " << peers_.Find(identity)->name;
  Dispatch();
}

void Head::HandleDecision(const std::string& identity, comm::Envelope& envelope) {
  comm::Decision& decision = *envelope.mutable_decision();
  RunRecord* run = runs_.FindForClient(identity, decision.run_id(), decision.trial());
  if (run == nullptr || run->queued || run->parts.empty() || run->parts.front().ended) {
    TF_LOG(DEBUG) << "dropped a decision for trial " << decision.trial() << ": not running";
    return;
  }
  decision.set_run_id(run->run_id);
  Send(run->parts.front().agent, envelope);
}

void Head::HandleCancel(const std::string& identity, const comm::Cancel& cancel) {
  RunRecord* run = runs_.FindForClient(identity, cancel.run_id(), cancel.trial());
  if (run == nullptr || run->reported) {
    TF_LOG(DEBUG) << "dropped a cancel for trial " << cancel.trial() << ": no such run";
    return;
  }
  const std::string reason = cancel.reason().empty()
                                 ? absl::StrCat("cancelled by client ", peers_.Find(identity)->name)
                                 : cancel.reason();
  if (run->queued) {
    comm::Envelope envelope;
    comm::Exit* exit = envelope.mutable_exit();
    exit->set_run_id(run->run_id);
    exit->set_trial(run->spec.trial());
    exit->set_outcome(comm::Exit::CANCELLED);
    exit->set_reason(reason);
    Send(identity, envelope);
    TF_LOG(INFO) << "run " << run->run_id << " (trial " << run->spec.trial()
                 << ") CANCELLED while queued";
    runs_.Erase(run->run_id);
    Dispatch();
    return;
  }
  TF_LOG(INFO) << "run " << run->run_id << " (trial " << run->spec.trial()
               << "): cancelling: " << reason;
  CancelRun(*run, reason);
}

void Head::HandleExit(const std::string& identity, const comm::Exit& exit) {
  RunRecord* run = runs_.Find(exit.run_id());
  if (run == nullptr || !runs_.RecordExit(*run, identity, exit)) {
    TF_LOG(DEBUG) << "dropped an exit for run " << exit.run_id() << ": not running there";
    return;
  }
  if (!exit.fetch_hash().empty() || !exit.fetch_error().empty()) StartFetchBack(*run, identity, exit);
  if (exit.outcome() == comm::Exit::FAILED && !run->AllEnded() && !run->cancel_sent) {
    const std::string& agent = peers_.Find(identity)->name;
    CancelRun(*run, absl::StrCat("rank ", exit.rank(), " on agent ", agent, " failed",
                                 exit.reason().empty() ? "" : ": ", exit.reason()),
              identity);
  }
  if (run->AllEnded()) ReportAndMaybeErase(*run);
  Dispatch();
}

void Head::ForwardToClient(const std::string& identity, uint64_t run_id,
                           const comm::Envelope& envelope) {
  RunRecord* run = runs_.Find(run_id);
  if (run == nullptr || run->reported || run->LivePart(identity) == nullptr) return;
  if (run->client.empty()) {
    // An adopted run nobody claimed yet keeps what its client should hear (bounded).
    if (run->adopted && run->held.size() < 1000) run->held.push_back(envelope);
    return;  // else the run's client left meanwhile
  }
  Send(run->client, envelope);
}

void Head::HandleStatusRequest(const std::string& identity) {
  comm::Envelope envelope;
  comm::Status* status = envelope.mutable_status();
  for (const std::string& id : peers_.AgentsInOrder()) {
    const Peer& peer = *peers_.Find(id);
    comm::Status::Agent* agent = status->add_agents();
    agent->set_name(peer.name);
    agent->set_address(peer.address);
    agent->set_slots(peer.slots);
    agent->set_free_slots(std::max(0, peer.slots - runs_.BusySlots(id)));
    agent->set_alive(true);
  }
  for (const HostEntry& host : peers_.MissingHosts()) {
    comm::Status::Agent* agent = status->add_agents();
    agent->set_name(host.host);
    agent->set_slots(host.slots);
    agent->set_alive(false);
  }
  for (const auto& [run_id, run] : runs_.runs()) {
    comm::Status::Run* out = status->add_runs();
    out->set_run_id(run_id);
    out->set_trial(run.spec.trial());
    out->set_sweep(run.spec.sweep());
    out->set_world_size(run.spec.world_size());
    out->set_queued(run.queued);
    for (const RunPart& part : run.parts) {
      if (!part.ended) out->add_agents(part.agent_name);
    }
  }
  Send(identity, envelope);
}

void Head::Dispatch() {
  std::vector<std::string> agents = peers_.AgentsInOrder();
  // Runs that no placement will ever fit fail now, rather than block the queue forever. With a
  // hosts file, only once every listed host has registered (the cluster may still be forming).
  // Queued runs up to too_big_checked_run_ fit too_big_checked_total_ slots, so unless the
  // total changed only the runs submitted since need a look (the queue is in run_id order):
  // scanning the whole queue on every event made the head quadratic in the queue's length.
  if (!agents.empty() && peers_.MissingHosts().empty()) {
    const int total = peers_.TotalSlots();
    const uint64_t checked = total == too_big_checked_total_ ? too_big_checked_run_ : 0;
    std::vector<uint64_t> too_big;
    const std::deque<uint64_t>& queue = runs_.queue();
    for (auto it = queue.rbegin(); it != queue.rend() && *it > checked; ++it) {
      if (runs_.Find(*it)->spec.world_size() > total) too_big.push_back(*it);
    }
    if (!queue.empty()) too_big_checked_run_ = std::max(checked, queue.back());
    too_big_checked_total_ = total;
    std::reverse(too_big.begin(), too_big.end());  // fail them in queue order
    for (uint64_t id : too_big) {
      RunRecord& run = *runs_.Find(id);
      FailQueued(run, absl::StrCat("needs ", run.spec.world_size(), " ranks but the cluster has ",
                                   total, " slots"));
    }
  }
  while (!runs_.queue().empty() && !agents.empty()) {
    RunRecord& run = *runs_.Find(runs_.queue().front());
    std::vector<PlacementCandidate> candidates;
    candidates.reserve(agents.size());
    for (const std::string& id : agents) {
      const Peer& peer = *peers_.Find(id);
      candidates.push_back({peer.name, peer.slots - runs_.BusySlots(id)});
    }
    std::optional<Placement> placement = PlaceRanks(candidates, run.spec.world_size());
    if (!placement.has_value()) return;  // strict FIFO: later runs wait too

    std::vector<RunPart> parts;
    int next_rank = 0;
    for (const auto& [index, count] : *placement) {
      RunPart part;
      part.agent = agents[index];
      part.agent_name = peers_.Find(part.agent)->name;
      for (int r = 0; r < count; ++r) part.ranks.push_back(next_rank++);
      parts.push_back(std::move(part));
    }
    const std::string master_addr = peers_.Find(parts.front().agent)->address;
    const int master_port =
        parts.size() == 1
            ? 0
            : kBaseMasterPort + static_cast<int>(run.run_id % static_cast<uint64_t>(kMasterPortRange));
    runs_.Place(run, std::move(parts), master_addr, master_port);

    std::vector<std::string> where;
    for (const RunPart& part : run.parts) {
      comm::Envelope envelope;
      comm::Assign* assign = envelope.mutable_assign();
      *assign->mutable_trial() = run.spec;
      for (int r : part.ranks) assign->add_ranks(r);
      assign->set_master_addr(master_addr);
      assign->set_master_port(master_port);
      Send(part.agent, envelope);
      where.push_back(absl::StrCat(part.agent_name, " (rank ", RankRange(part.ranks), ")"));
    }
    TF_LOG(INFO) << "run " << run.run_id << " (trial " << run.spec.trial() << ", "
                 << run.spec.world_size() << " rank(s)) placed on " << absl::StrJoin(where, ", ")
                 << "; master " << master_addr << ":"
                 << (master_port == 0 ? std::string("auto") : std::to_string(master_port));
  }
}

void Head::FailQueued(RunRecord& run, const std::string& reason) {
  TF_LOG(WARNING) << "run " << run.run_id << " (trial " << run.spec.trial() << ") FAILED: " << reason;
  if (!run.client.empty()) {
    comm::Envelope envelope;
    comm::Exit* exit = envelope.mutable_exit();
    exit->set_run_id(run.run_id);
    exit->set_trial(run.spec.trial());
    exit->set_outcome(comm::Exit::FAILED);
    exit->set_reason(reason);
    Send(run.client, envelope);
  }
  runs_.Erase(run.run_id);
}

bool Head::PrepareStaging(RunRecord& run) {
  if (run.spec.stage_size() == 0) return true;
  absl::Status staged = stager_->Prepare(&run.spec);
  if (!staged.ok()) {
    FailQueued(run, std::string(staged.message()));
    return false;
  }
  return true;
}

void Head::CancelRun(RunRecord& run, const std::string& reason, const std::string& except) {
  run.cancel_sent = true;
  for (const RunPart& part : run.parts) {
    if (part.ended || part.agent == except) continue;
    comm::Envelope envelope;
    comm::Cancel* cancel = envelope.mutable_cancel();
    cancel->set_run_id(run.run_id);
    cancel->set_trial(run.spec.trial());
    cancel->set_reason(reason);
    Send(part.agent, envelope);
  }
}

void Head::ReportAndMaybeErase(RunRecord& run) {
  if (fetches_.contains(run.run_id)) return;  // FinishFetchBacks() comes back here
  if (!run.reported) {
    if (run.adopted && run.client.empty()) return;  // kept for the client that resubmits it
    run.reported = true;
    comm::Envelope envelope;
    *envelope.mutable_exit() = run.Aggregate();
    const comm::Exit& exit = envelope.exit();
    TF_LOG(INFO) << "run " << run.run_id << " (trial " << run.spec.trial() << ") "
                 << OutcomeName(exit.outcome()) << (exit.reason().empty() ? "" : ": ")
                 << exit.reason();
    if (!run.client.empty()) Send(run.client, envelope);
  }
  if (run.AllEnded()) runs_.Erase(run.run_id);
}

void Head::LosePeer(const std::string& identity, const std::string& reason) {
  const Peer* found = peers_.Find(identity);
  if (found == nullptr) return;
  const Peer peer = *found;
  peers_.Erase(identity);
  if (peer.role == comm::AGENT) {
    const std::vector<uint64_t> ids = runs_.RunsOnAgent(identity);
    TF_LOG(WARNING) << reason
                    << (ids.empty() ? std::string()
                                    : absl::StrCat("; failing run(s) ", absl::StrJoin(ids, ", ")));
    for (uint64_t id : ids) {
      RunRecord& run = *runs_.Find(id);
      comm::Exit lost;
      lost.set_run_id(id);
      lost.set_trial(run.spec.trial());
      lost.set_outcome(comm::Exit::FAILED);
      lost.set_rank(run.LivePart(identity)->ranks.front());
      lost.set_reason(reason);
      lost.set_agent(peer.name);
      runs_.RecordExit(run, identity, lost);
      if (!run.cancel_sent && !run.AllEnded()) CancelRun(run, reason);
      ReportAndMaybeErase(run);
    }
  } else {
    const std::vector<uint64_t> ids = runs_.RunsOfClient(identity);
    TF_LOG(WARNING) << reason
                    << (ids.empty() ? std::string()
                                    : absl::StrCat("; cancelling run(s) ", absl::StrJoin(ids, ", ")));
    for (uint64_t id : ids) {
      RunRecord& run = *runs_.Find(id);
      if (run.queued) {
        runs_.Erase(id);
        continue;
      }
      runs_.DetachClient(run);
      run.reported = true;
      if (!run.cancel_sent) CancelRun(run, reason);
    }
  }
  Dispatch();
}

void Head::Tick(absl::Time now) {
  std::vector<std::string> lost;
  for (const auto& [id, peer] : peers_.peers()) {
    if (!peer.liveness.Alive(now)) lost.push_back(id);
  }
  const std::string silence = FormatSpan(options_.heartbeat_interval * comm::kDefaultLiveness);
  for (const std::string& id : lost) {
    const Peer* peer = peers_.Find(id);
    if (peer == nullptr) continue;  // lost with an earlier one (re-registration)
    LosePeer(id, absl::StrCat(RoleName(peer->role), " ", peer->name,
                              " lost (no heartbeat for ", silence, ")"));
  }
  comm::Envelope heartbeat;
  heartbeat.mutable_heartbeat();
  std::vector<std::string> due;
  for (const auto& [id, peer] : peers_.peers()) {
    if (peer.liveness.HeartbeatDue(now)) due.push_back(id);
  }
  for (const std::string& id : due) Send(id, heartbeat);
  next_tick_ = now + std::max(absl::Milliseconds(1), options_.heartbeat_interval / 10);
  if (recovering_ && (now >= recovery_deadline_ ||
                      (peers_.has_hosts() && peers_.MissingHosts().empty()))) {
    EndRecovery();
  }
  ExpireOrphans(now);
  FinishFetchBacks();
  if (options_.on_tick) options_.on_tick(now);
}

void Head::StartFetchBack(RunRecord& run, const std::string& agent, const comm::Exit& exit) {
  const Peer* peer = peers_.Find(agent);
  if (!exit.fetch_error().empty() || peer == nullptr) {
    TF_LOG(WARNING) << "run " << run.run_id << " (trial " << run.spec.trial() << "): "
                    << run.spec.fetch_back() << " not fetched back: "
                    << (exit.fetch_error().empty() ? "its agent left" : exit.fetch_error());
    return;
  }
  const std::string server = absl::StrCat(peer->address, ":", exit.fetch_port());
  fetches_[run.run_id] = std::async(std::launch::async, FetchBack, server, exit.fetch_hash(),
                                    run.spec.fetch_back());
}

void Head::FinishFetchBacks() {
  std::vector<uint64_t> done;
  for (auto& [id, pending] : fetches_) {
    if (pending.wait_for(std::chrono::seconds(0)) == std::future_status::ready) done.push_back(id);
  }
  for (uint64_t id : done) {
    absl::StatusOr<std::string> outcome = fetches_[id].get();
    fetches_.erase(id);
    RunRecord* run = runs_.Find(id);
    const std::string what = run == nullptr ? std::string("its output") : run->spec.fetch_back();
    if (outcome.ok()) {
      TF_LOG(INFO) << "run " << id << ": " << what << ": " << *outcome;
    } else {
      TF_LOG(WARNING) << "run " << id << ": " << what << " not fetched back: " << outcome.status().message();
    }
    if (run != nullptr && run->AllEnded()) ReportAndMaybeErase(*run);
  }
}

void Head::AdoptHeldRuns(const std::string& identity, const comm::Register& reg) {
  const std::string& name = reg.name();
  const absl::Time now = absl::Now();
  for (const comm::HeldRun& held : reg.runs()) {
    const uint64_t run_id = held.trial().run_id();
    if (!reg.previous_session().empty() && reg.previous_session() == session_) {
      // This head knew the agent before: runs it no longer has there were failed when the
      // agent was declared lost.
      RunRecord* run = runs_.Find(run_id);
      if (held.ended() || (run != nullptr && run->LivePart(identity) != nullptr)) continue;
      comm::Envelope envelope;
      envelope.mutable_cancel()->set_run_id(run_id);
      envelope.mutable_cancel()->set_trial(held.trial().trial());
      envelope.mutable_cancel()->set_reason("the head failed this run when it lost the agent");
      Send(identity, envelope);
      continue;
    }
    RunRecord* run = runs_.Adopt(held, identity, name, now);
    if (run == nullptr) continue;  // this part is known already
    TF_LOG(INFO) << "adopted run " << run_id << " (trial " << held.trial().trial()
                 << (held.trial().sweep().empty() ? "" : " of ") << held.trial().sweep()
                 << ", rank(s) " << RankRange({held.ranks().begin(), held.ranks().end()}) << " of "
                 << held.trial().world_size() << ") from agent " << name << ": "
                 << (held.ended() ? absl::StrCat("ended ", OutcomeName(held.exit().outcome()))
                                  : std::string("running"));
    for (const comm::Report& pending : held.pending_reports()) {
      comm::Envelope report;
      *report.mutable_report() = pending;
      if (run->client.empty()) {
        run->held.push_back(std::move(report));
      } else if (!run->reported) {
        Send(run->client, report);
      }
    }
    if (held.ended()) {
      runs_.RecordExit(*run, identity, held.exit());
      if (held.exit().outcome() == comm::Exit::FAILED && !run->AllEnded() && !run->cancel_sent) {
        CancelRun(*run, absl::StrCat("rank ", held.exit().rank(), " on agent ", name, " failed"),
                  identity);
      }
      if (run->AllEnded()) ReportAndMaybeErase(*run);
    }
  }
}

void Head::DeliverHeld(RunRecord& run) {
  std::vector<comm::Envelope> held;
  held.swap(run.held);
  for (const comm::Envelope& envelope : held) Send(run.client, envelope);
  if (run.AllEnded()) ReportAndMaybeErase(run);
}

void Head::EndRecovery() {
  recovering_ = false;
  std::vector<Resubmit> held;
  held.swap(held_resubmits_);
  for (Resubmit& r : held) {
    const Peer* client = peers_.Find(r.client);
    if (client == nullptr) continue;  // it left meanwhile
    if (RunRecord* orphan = runs_.FindOrphan(client->name, r.spec.trial()); orphan != nullptr) {
      runs_.AttachClient(*orphan, r.client);
      TF_LOG(INFO) << "trial " << r.spec.trial() << " of client " << client->name
                   << " found again: run " << orphan->run_id << ", held by its agents";
      DeliverHeld(*orphan);
      continue;
    }
    RunRecord& run = runs_.Submit(std::move(r.spec), r.client);
    TF_LOG(INFO) << "trial " << run.spec.trial() << " of client " << client->name
                 << ": no agent holds it; run " << run.run_id << " runs it again";
    PrepareStaging(run);
  }
  Dispatch();
}

void Head::ExpireOrphans(absl::Time now) {
  if (now < recovery_deadline_ + options_.orphan_grace) return;
  for (uint64_t id : runs_.OrphansBefore(now - options_.orphan_grace)) {
    RunRecord& run = *runs_.Find(id);
    const std::string reason = absl::StrCat("no client claimed it within ",
                                            FormatSpan(options_.orphan_grace),
                                            " of the head's restart");
    TF_LOG(WARNING) << "run " << id << " (trial " << run.spec.trial() << " of client "
                    << run.spec.client() << "): " << reason;
    runs_.ForgetOrphan(run);
    run.reported = true;
    if (run.AllEnded()) {
      runs_.Erase(id);
    } else if (!run.cancel_sent) {
      CancelRun(run, reason);
    }
  }
}

absl::flat_hash_set<std::string> Head::LiveAgentNames() const {
  absl::flat_hash_set<std::string> out;
  for (const std::string& id : peers_.AgentsInOrder()) out.insert(peers_.Find(id)->name);
  return out;
}

void Head::ShutdownAgents(const std::string& reason) {
  comm::Envelope envelope;
  envelope.mutable_shutdown()->set_reason(reason);
  int agents = 0;
  for (const std::string& id : peers_.AgentsInOrder()) {
    Send(id, envelope);
    ++agents;
  }
  if (agents > 0) TF_LOG(INFO) << "sent shutdown to " << agents << " agent(s)";
  // Linger so that the Shutdowns leave before the socket closes (ConfigureSocket sets 0).
  if (router_ != nullptr) router_->set(zmq::sockopt::linger, 1000);
}

void Head::Send(const std::string& identity, const comm::Envelope& envelope) {
  absl::Status status = comm::SendTo(*router_, identity, envelope);
  if (!status.ok()) {
    LogLimited(identity, absl::StrCat("cannot send ", comm::BodyName(envelope), ": ",
                                      status.message()));
    return;
  }
  if (Peer* peer = peers_.Find(identity); peer != nullptr) peer->liveness.Sent(absl::Now());
}

void Head::Refuse(const std::string& identity, const std::string& reason, bool with_version) {
  comm::Envelope envelope;
  envelope.mutable_refused()->set_reason(reason);
  envelope.mutable_refused()->set_session(session_);
  if (with_version) envelope.mutable_refused()->set_supported_version(comm::kProtocolVersion);
  Send(identity, envelope);
}

void Head::LogLimited(const std::string& identity, const std::string& message) {
  const absl::Time now = absl::Now();
  if (last_warning_.size() > 10000) last_warning_.clear();
  auto [it, inserted] = last_warning_.try_emplace(identity, now);
  if (!inserted) {
    if (now - it->second < absl::Seconds(1)) return;
    it->second = now;
  }
  const Peer* peer = peers_.Find(identity);
  TF_LOG(WARNING) << message << " ["
                  << (peer == nullptr ? "peer " + comm::IdentityForLog(identity)
                                      : absl::StrCat(RoleName(peer->role), " ", peer->name))
                  << "]";
}

}  // namespace launcher
}  // namespace tunefleet
