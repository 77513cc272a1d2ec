#include "launcher/head/head.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "comm/codec.h"
#include "comm/liveness.h"
#include "common/logging.h"
#include "launcher/head/head_status.h"
#include "launcher/head/head_text.h"
#include "launcher/head/peer_loss.h"

namespace tunefleet {
namespace launcher {
namespace {

// Messages handled per wake-up before the heartbeat bookkeeping gets its turn.
constexpr int kMaxBatch = 4096;

std::string RandomSession() {
  std::random_device device;
  std::mt19937_64 gen((static_cast<uint64_t>(device()) << 32) ^ device());
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(gen()));
  return text;
}

// Defaults for the zero (or negative) spans.
Head::Options Normalized(Head::Options options) {
  if (options.heartbeat_interval <= absl::ZeroDuration()) {
    options.heartbeat_interval = absl::Seconds(1);
  }
  if (options.recovery_window <= absl::ZeroDuration()) {
    options.recovery_window = 2 * comm::kDefaultLiveness * options.heartbeat_interval;
  }
  return options;
}

// The Exit a queued run's client gets when the run ends before it was placed.
comm::Envelope QueuedExit(const RunRecord& run, comm::Exit::Outcome outcome,
                          const std::string& reason) {
  comm::Envelope envelope;
  comm::Exit* exit = envelope.mutable_exit();
  exit->set_run_id(run.run_id);
  exit->set_trial(run.spec.trial());
  exit->set_outcome(outcome);
  exit->set_reason(reason);
  return envelope;
}

}  // namespace

Head::Head(Options options, SignalFd* signals)
    : options_(Normalized(std::move(options))),
      signals_(signals),
      session_(RandomSession()),
      socket_(options_.bind, options_.keys_dir),
      peers_(options_.hosts, options_.hosts_file, options_.heartbeat_interval),
      runs_(std::max<uint64_t>(1, options_.first_run_id)),
      recovery_(peers_, runs_, *this, session_, absl::Now() + options_.recovery_window,
                options_.orphan_grace, options_.client_grace) {}

Head::~Head() = default;

absl::Status Head::Bind() {
  if (socket_.bound()) return absl::OkStatus();
  if (absl::Status s = socket_.Bind(); !s.ok()) return s;
  stager_ = std::make_unique<Stager>(StageBindIp(endpoint()));
  TF_LOG(INFO) << "listening on " << endpoint() << " (session " << session_ << ", heartbeat "
               << FormatSpan(options_.heartbeat_interval) << ")";
  return absl::OkStatus();
}

void Head::Stop() { socket_.Stop(); }

absl::Status Head::Run() {
  if (absl::Status s = Bind(); !s.ok()) return s;
  next_tick_ = absl::Now();
  while (true) {
    const absl::Duration wait = std::max(absl::ZeroDuration(), next_tick_ - absl::Now());
    absl::StatusOr<HeadSocket::Wakeup> wakeup =
        socket_.Wait(wait, signals_ != nullptr ? signals_->fd() : -1);
    if (!wakeup.ok()) return wakeup.status();
    if (wakeup->interrupted) continue;
    if (wakeup->signalled) {
      std::vector<int> signals = signals_->Read();
      if (!signals.empty()) {
        TF_LOG(INFO) << "signal " << signals.front() << ": shutting down";
        ShutdownAgents(absl::StrCat("the head got signal ", signals.front()));
        return absl::OkStatus();
      }
    }
    if (wakeup->stopped) {
      TF_LOG(INFO) << "stop requested: shutting down";
      ShutdownAgents("the head was stopped");
      return absl::OkStatus();
    }
    for (int i = 0; i < kMaxBatch; ++i) {
      std::optional<comm::Received> received = socket_.TryReceive();
      if (!received.has_value()) break;
      if (received->envelope.status().code() == absl::StatusCode::kUnavailable) {
        // A receive error (not a bad frame); a socket that is really gone fails the next poll.
        LogLimited(received->identity,
                   absl::StrCat("receive failed: ", received->envelope.status().message()));
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
    case comm::Envelope::kStatusRequest: {
      comm::Envelope status;
      *status.mutable_status() = ClusterStatus(peers_, runs_);
      Send(identity, status);
      return;
    }
    case comm::Envelope::kReport:
      if (from_agent) return ForwardToClient(identity, envelope.report().run_id(), envelope);
      break;
    case comm::Envelope::kStarted:
      if (from_agent) return ForwardToClient(identity, envelope.started().run_id(), envelope);
      break;
    case comm::Envelope::kTelemetry:
      if (from_agent) return ForwardToClient(identity, envelope.telemetry().run_id(), envelope);
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
      TF_LOG(WARNING) << "refused " << (name.empty() ? "an agent" : "agent " + name)
                      << " from host " << reg.hostname() << ": " << s.message();
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
      LosePeer(other_id,
               absl::StrCat("agent ", name, " lost (no heartbeat for ",
                            FormatSpan(options_.heartbeat_interval * comm::kDefaultLiveness), ")"));
    }
  }

  auto [peer, inserted] = peers_.Upsert(identity, named, now);
  comm::Envelope welcome;
  welcome.mutable_welcome()->set_session(session_);
  welcome.mutable_welcome()->set_heartbeat_interval_ms(
      static_cast<uint32_t>(absl::ToInt64Milliseconds(options_.heartbeat_interval)));
  Send(identity, welcome);

  if (reg.role() == comm::AGENT) {
    recovery_.AdoptHeldRuns(identity, named);
    TF_LOG(INFO) << "agent " << name << (inserted ? " registered" : " registered again") << " with "
                 << peer->slots << " slot(s)"
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
  if (envelope.submit().resubmit() && recovery_.Resubmit(identity, trial)) return;
  RunRecord& run = runs_.Submit(std::move(*trial), identity);
  const comm::TrialSpec& spec = run.spec;
  if (spec.world_size() < 1) {
    FailQueued(run, absl::StrCat("world_size must be at least 1, got ", spec.world_size()),
               comm::Exit::TRIAL_INPUT);
    return;
  }
  if (!PrepareStaging(run)) return;
  TF_LOG(INFO) << "run " << run.run_id << " (trial " << spec.trial()
               << (spec.sweep().empty() ? "" : " of ") << spec.sweep() << ", " << spec.world_size()
               << " rank(s)) submitted by client " << peers_.Find(identity)->name;
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
    Send(identity, QueuedExit(*run, comm::Exit::CANCELLED, reason));
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
  if (!exit.fetch_hash().empty() || !exit.fetch_error().empty()) {
    fetches_.Start(*run, peers_.Find(identity), exit);
  }
  if (exit.outcome() == comm::Exit::FAILED && !run->AllEnded() && !run->cancel_sent) {
    const std::string& agent = peers_.Find(identity)->name;
    CancelRun(*run,
              absl::StrCat("rank ", exit.rank(), " on agent ", agent, " failed",
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
    // An adopted run nobody claimed yet keeps what its client should hear (bounded); telemetry
    // is cumulative, and the next one will do.
    if (run->adopted && run->held.size() < 1000 &&
        envelope.body_case() != comm::Envelope::kTelemetry) {
      run->held.push_back(envelope);
    }
    return;  // else the run's client left meanwhile
  }
  Send(run->client, envelope);
}

void Head::FailQueued(RunRecord& run, const std::string& reason, comm::Exit::Cause cause) {
  TF_LOG(WARNING) << "run " << run.run_id << " (trial " << run.spec.trial()
                  << ") FAILED: " << reason;
  if (!run.client.empty()) {
    comm::Envelope exit = QueuedExit(run, comm::Exit::FAILED, reason);
    exit.mutable_exit()->set_cause(cause);
    Send(run.client, exit);
  }
  runs_.Erase(run.run_id);
}

bool Head::PrepareStaging(RunRecord& run) {
  if (run.spec.stage_size() == 0) return true;
  absl::Status staged = stager_->Prepare(&run.spec);
  if (!staged.ok()) {
    FailQueued(run, std::string(staged.message()), comm::Exit::TRANSIENT);
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
  if (fetches_.Pending(run.run_id)) return;  // FinishFetchBacks() comes back here
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
    FailRunsOfLostAgent(runs_, *this, identity, peer.name, reason);
  } else {
    // Its placed runs wait for it to register again (HeadRecovery); queued ones it submits
    // again then.
    KeepRunsOfLostClient(runs_, identity, reason, absl::Now(), options_.client_grace);
  }
  Dispatch();
}

void Head::Tick(absl::Time now) {
  const std::string silence = FormatSpan(options_.heartbeat_interval * comm::kDefaultLiveness);
  for (const std::string& id : peers_.Silent(now)) {
    const Peer* peer = peers_.Find(id);
    if (peer == nullptr) continue;  // lost with an earlier one (re-registration)
    LosePeer(id, absl::StrCat(RoleName(peer->role), " ", peer->name, " lost (no heartbeat for ",
                              silence, ")"));
  }
  comm::Envelope heartbeat;
  heartbeat.mutable_heartbeat();
  for (const std::string& id : peers_.HeartbeatDue(now)) Send(id, heartbeat);
  next_tick_ = now + std::max(absl::Milliseconds(1), options_.heartbeat_interval / 10);
  recovery_.Tick(now);
  FinishFetchBacks();
  if (options_.on_tick) options_.on_tick(now);
}

void Head::FinishFetchBacks() {
  for (FetchBacks::Finished& done : fetches_.TakeFinished()) {
    const uint64_t id = done.run_id;
    RunRecord* run = runs_.Find(id);
    const std::string what = run == nullptr ? std::string("its output") : run->spec.fetch_back();
    if (done.outcome.ok()) {
      TF_LOG(INFO) << "run " << id << ": " << what << ": " << *done.outcome;
    } else {
      TF_LOG(WARNING) << "run " << id << ": " << what
                      << " not fetched back: " << done.outcome.status().message();
    }
    if (run != nullptr && run->AllEnded()) ReportAndMaybeErase(*run);
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
  socket_.LingerOnClose();
}

void Head::Send(const std::string& identity, const comm::Envelope& envelope) {
  absl::Status status = socket_.Send(identity, envelope);
  if (!status.ok()) {
    LogLimited(identity,
               absl::StrCat("cannot send ", comm::BodyName(envelope), ": ", status.message()));
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
