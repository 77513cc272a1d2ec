#include "testing/sim_cluster.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "comm/codec.h"
#include "comm/liveness.h"
#include "comm/proto/messages.pb.h"
#include "comm/zmq_channel.h"
#include "launcher/head/head_text.h"

namespace tunefleet {
namespace bench {
namespace {

using comm::Envelope;

constexpr absl::Duration kDefaultHeartbeat = absl::Seconds(1);
// How often the peers' heartbeat bookkeeping runs (the interval is 1 s by default).
constexpr absl::Duration kHeartbeatCheck = absl::Milliseconds(50);
constexpr int kFirstFakePid = 100000;

struct SimRun {
  int64_t trial = 0;
  int slot = 0;
  int64_t step = 0;  // reports sent
};

}  // namespace

struct SimCluster::Peer {
  std::unique_ptr<zmq::socket_t> socket;
  std::string name;
  bool agent = false;
  bool welcomed = false;
  comm::Liveness liveness{kDefaultHeartbeat, absl::Now()};
  // Agents only.
  std::vector<int> free_slots;
  absl::flat_hash_map<uint64_t, SimRun> runs;
};

struct SimCluster::Impl {
  zmq::context_t& context;
  std::string endpoint;
  SimOptions o;
  std::vector<Peer> peers;  // the agents, then the client (last)
  std::vector<zmq::pollitem_t> items;
  absl::Status error;
  absl::Time last_progress;
  absl::Time next_heartbeat_check;

  // The run's state, as the client sees it.
  bool running = false;
  const Sampler* sampler = nullptr;
  absl::Time start;
  int64_t submitted = 0;
  int64_t exits = 0;
  SimResult result;
  std::optional<HeadStatus> status;
  int next_pid = kFirstFakePid;
  int shutdowns = 0;  // agents told to shut down
  Envelope submit;    // reused: only the trial number changes

  Impl(zmq::context_t& c, std::string e, SimOptions options)
      : context(c), endpoint(std::move(e)), o(std::move(options)) {
    comm::TrialSpec* spec = submit.mutable_submit()->mutable_trial();
    spec->set_sweep("head-trials-bench");
    spec->set_world_size(1);
    // About what hpo sends for a trial (hpo/trial_command.cc): a subcommand, a config and a
    // few overrides.
    for (const char* arg : {"train", "--config", "/tmp/head-trials-bench/sweep.yaml",
                            "train.lr=0.00031622776601683794", "train.batch_size=32",
                            "train.max_steps=0", "output.dir=/tmp/head-trials-bench/trials"}) {
      spec->add_argv(arg);
    }
    spec->set_log_dir("/tmp/head-trials-bench/logs");
  }

  Peer& client() { return peers.back(); }

  void Fail(absl::Status status) {
    if (error.ok()) error = std::move(status);
  }

  // False when it was not sent. A full send queue is an error unless `may_retry` (the caller
  // sends it again later).
  bool Send(Peer& peer, const Envelope& envelope, bool may_retry = false) {
    absl::Status s = comm::Send(*peer.socket, envelope);
    if (!s.ok()) {
      if (!may_retry || s.code() != absl::StatusCode::kUnavailable) {
        Fail(absl::InternalError(absl::StrCat(peer.name, ": cannot send ", comm::BodyName(envelope),
                                              ": ", s.message())));
      }
      return false;
    }
    peer.liveness.Sent(absl::Now());
    return true;
  }

  void HandleWelcome(Peer& peer, const comm::Welcome& welcome) {
    peer.welcomed = true;
    const uint32_t ms = welcome.heartbeat_interval_ms();
    peer.liveness =
        comm::Liveness(ms > 0 ? absl::Milliseconds(ms) : kDefaultHeartbeat, absl::Now());
  }

  // The run's next report, or its Exit once every report was answered.
  void Advance(Peer& agent, uint64_t run_id) {
    auto it = agent.runs.find(run_id);
    SimRun& run = it->second;
    Envelope envelope;
    if (run.step < o.reports_per_trial) {
      comm::Report* report = envelope.mutable_report();
      report->set_run_id(run_id);
      report->set_trial(run.trial);
      report->set_rank(0);
      report->set_step(++run.step);
      (*report->mutable_metrics())["eval/spearman"] = 0.5 + 0.01 * static_cast<double>(run.step);
      (*report->mutable_metrics())["train/loss"] = 1.0 / static_cast<double>(run.step);
      report->set_final(run.step == o.reports_per_trial);
      Send(agent, envelope);
      return;
    }
    comm::Exit* exit = envelope.mutable_exit();
    exit->set_run_id(run_id);
    exit->set_trial(run.trial);
    exit->set_agent(agent.name);
    exit->set_outcome(comm::Exit::COMPLETED);
    Send(agent, envelope);
    agent.free_slots.push_back(run.slot);
    agent.runs.erase(it);
  }

  void HandleAgent(Peer& agent, const Envelope& envelope) {
    switch (envelope.body_case()) {
      case Envelope::kWelcome:
        HandleWelcome(agent, envelope.welcome());
        return;
      case Envelope::kAssign: {
        const comm::Assign& assign = envelope.assign();
        const uint64_t run_id = assign.trial().run_id();
        if (static_cast<int>(agent.free_slots.size()) < assign.ranks_size() ||
            agent.runs.contains(run_id)) {
          Fail(absl::InternalError(absl::StrCat("the head assigned ", agent.name, " run ", run_id,
                                                " beyond its ", o.slots, " slots")));
          return;
        }
        SimRun run;
        run.trial = assign.trial().trial();
        run.slot = agent.free_slots.back();
        agent.free_slots.pop_back();
        agent.runs.emplace(run_id, run);
        Envelope started;
        comm::Started* st = started.mutable_started();
        st->set_run_id(run_id);
        st->set_trial(run.trial);
        st->set_agent(agent.name);
        for (int rank : assign.ranks()) st->add_ranks(rank);
        st->add_pids(next_pid++);
        st->add_slots(run.slot);
        Send(agent, started);
        Advance(agent, run_id);
        return;
      }
      case Envelope::kDecision: {
        auto it = agent.runs.find(envelope.decision().run_id());
        if (it != agent.runs.end() && envelope.decision().step() == it->second.step) {
          Advance(agent, it->first);
        }
        return;
      }
      case Envelope::kCancel: {
        auto it = agent.runs.find(envelope.cancel().run_id());
        if (it == agent.runs.end()) return;
        Envelope out;
        out.mutable_exit()->set_run_id(it->first);
        out.mutable_exit()->set_trial(it->second.trial);
        out.mutable_exit()->set_agent(agent.name);
        out.mutable_exit()->set_outcome(comm::Exit::CANCELLED);
        Send(agent, out);
        agent.free_slots.push_back(it->second.slot);
        agent.runs.erase(it);
        return;
      }
      case Envelope::kRefused:
        Fail(absl::FailedPreconditionError(
            absl::StrCat("the head refused ", agent.name, ": ", envelope.refused().reason())));
        return;
      case Envelope::kShutdown:
        ++shutdowns;
        return;
      default:
        return;  // Heartbeat
    }
  }

  void HandleClient(const Envelope& envelope) {
    Peer& peer = client();
    switch (envelope.body_case()) {
      case Envelope::kWelcome:
        HandleWelcome(peer, envelope.welcome());
        return;
      case Envelope::kStarted:
        ++result.started;
        return;
      case Envelope::kReport: {
        ++result.reports;
        Envelope decision;
        decision.mutable_decision()->set_trial(envelope.report().trial());
        decision.mutable_decision()->set_step(envelope.report().step());
        decision.mutable_decision()->set_action(comm::Decision::CONTINUE);
        Send(peer, decision);
        return;
      }
      case Envelope::kExit: {
        ++exits;
        if (envelope.exit().outcome() == comm::Exit::COMPLETED) {
          ++result.completed;
        } else {
          ++result.other_outcomes[launcher::OutcomeName(envelope.exit().outcome())];
        }
        const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
        const int64_t total = o.trials * o.rounds;
        if (exits == total) result.seconds = seconds;
        if (sampler != nullptr && *sampler && (exits % o.sample_every == 0 || exits == total)) {
          (*sampler)(exits, seconds);
        }
        return;
      }
      case Envelope::kStatus: {
        HeadStatus s;
        for (const comm::Status::Agent& a : envelope.status().agents()) s.live_agents += a.alive();
        s.runs = envelope.status().runs_size();
        status = s;
        return;
      }
      case Envelope::kRefused:
        Fail(absl::FailedPreconditionError(
            absl::StrCat("the head refused the client: ", envelope.refused().reason())));
        return;
      default:
        return;  // Heartbeat
    }
  }

  // Submits trials while the window (or, without one, the socket) allows.
  void TopUp() {
    Peer& peer = client();
    const int64_t total = o.trials * o.rounds;
    const int64_t limit =
        std::min(total, o.window == 0 ? (exits / o.trials + 1) * o.trials : exits + o.window);
    while (submitted < limit) {
      submit.mutable_submit()->mutable_trial()->set_trial(submitted);
      if (submitted == 0) start = absl::Now();
      if (!Send(peer, submit, /*may_retry=*/true)) return;  // the queue to the head is full
      ++submitted;
    }
    result.max_queued = std::max(result.max_queued, submitted - result.started);
  }

  void Drain(Peer& peer) {
    while (std::optional<comm::Received> got = comm::TryReceive(*peer.socket, /*router=*/false)) {
      if (!got->envelope.ok()) {
        Fail(absl::DataLossError(absl::StrCat(
            peer.name, ": bad frame from the head: ", got->envelope.status().message())));
        return;
      }
      const absl::Time now = absl::Now();
      peer.liveness.Heard(now);
      if (!got->envelope->has_heartbeat()) last_progress = now;
      if (peer.agent) {
        HandleAgent(peer, *got->envelope);
      } else {
        HandleClient(*got->envelope);
      }
    }
  }

  void Heartbeats(absl::Time now) {
    Envelope heartbeat;
    heartbeat.mutable_heartbeat();
    for (Peer& peer : peers) {
      if (!peer.welcomed) continue;
      if (!peer.liveness.Alive(now)) {
        Fail(absl::UnavailableError(
            absl::StrCat("the head fell silent to ", peer.name, " for ",
                         absl::FormatDuration(now - peer.liveness.last_heard()))));
        return;
      }
      if (peer.liveness.HeartbeatDue(now) && Send(peer, heartbeat, /*may_retry=*/true)) {
        ++result.heartbeats_sent;
      }
    }
  }

  // Serves every socket until done(), an error, or `timeout` without a message from the head.
  absl::Status Pump(const std::function<bool()>& done, absl::Duration timeout) {
    last_progress = absl::Now();
    while (error.ok() && !done()) {
      if (running) TopUp();
      zmq::poll(items.data(), items.size(), std::chrono::milliseconds(10));
      for (size_t i = 0; i < items.size() && error.ok(); ++i) {
        if (items[i].revents & ZMQ_POLLIN) Drain(peers[i]);
      }
      const absl::Time now = absl::Now();
      if (now >= next_heartbeat_check) {
        Heartbeats(now);
        next_heartbeat_check = now + kHeartbeatCheck;
      }
      if (now - last_progress > timeout) {
        Fail(absl::DeadlineExceededError(absl::StrCat(
            "nothing from the head for ", absl::FormatDuration(timeout), " (", exits, " of ",
            o.trials * o.rounds, " trials ended, ", submitted, " submitted)")));
      }
    }
    return error;
  }

  Peer& AddPeer(std::string name, bool agent) {
    Peer& peer = peers.emplace_back();
    peer.socket = std::make_unique<zmq::socket_t>(context, zmq::socket_type::dealer);
    comm::ConfigureSocket(*peer.socket, /*router=*/false);
    peer.socket->connect(endpoint);
    peer.name = std::move(name);
    peer.agent = agent;
    return peer;
  }

  void Register(Peer& peer, comm::Role role, int slots) {
    Envelope e;
    comm::Register* reg = e.mutable_register_();
    reg->set_role(role);
    reg->set_name(peer.name);
    reg->set_slots(slots);
    reg->set_address("127.0.0.1");
    reg->set_hostname(peer.name);
    reg->set_pid(static_cast<int32_t>(kFirstFakePid - 1 - (&peer - peers.data())));
    Send(peer, e);
  }
};

SimCluster::SimCluster(zmq::context_t& context, std::string endpoint, SimOptions options)
    : impl_(std::make_unique<Impl>(context, std::move(endpoint), std::move(options))) {}

SimCluster::~SimCluster() = default;

absl::Status SimCluster::Connect(absl::Duration timeout) {
  Impl& m = *impl_;
  m.peers.reserve(static_cast<size_t>(m.o.agents) + 1);
  for (int i = 0; i < m.o.agents; ++i) {
    Peer& agent = m.AddPeer(absl::StrCat("agent", i), /*agent=*/true);
    for (int s = m.o.slots - 1; s >= 0; --s) agent.free_slots.push_back(s);
  }
  m.AddPeer("hpo", /*agent=*/false);
  for (Peer& peer : m.peers) {
    m.items.push_back({static_cast<void*>(*peer.socket), 0, ZMQ_POLLIN, 0});
  }
  // Agents first, so that the cluster is whole when the first trial arrives.
  for (int i = 0; i < m.o.agents; ++i)
    m.Register(m.peers[static_cast<size_t>(i)], comm::AGENT, m.o.slots);
  absl::Status s = m.Pump(
      [&] {
        for (int i = 0; i < m.o.agents; ++i) {
          if (!m.peers[static_cast<size_t>(i)].welcomed) return false;
        }
        return true;
      },
      timeout);
  if (!s.ok()) return s;
  m.Register(m.client(), comm::CLIENT, 0);
  return m.Pump([&] { return m.client().welcomed; }, timeout);
}

absl::StatusOr<SimResult> SimCluster::Run(const Sampler& sampler) {
  Impl& m = *impl_;
  m.running = true;
  m.sampler = &sampler;
  absl::Status s = m.Pump([&] { return m.exits >= m.o.trials * m.o.rounds; }, m.o.stall_timeout);
  m.running = false;
  m.sampler = nullptr;
  if (!s.ok()) return s;
  return m.result;
}

absl::StatusOr<SimCluster::HeadStatus> SimCluster::QueryStatus(absl::Duration timeout) {
  Impl& m = *impl_;
  m.status.reset();
  Envelope request;
  request.mutable_status_request();
  m.Send(m.client(), request);
  absl::Status s = m.Pump([&] { return m.status.has_value(); }, timeout);
  if (!s.ok()) return s;
  return *m.status;
}

absl::Status SimCluster::ShutdownHead(absl::Duration timeout) {
  Impl& m = *impl_;
  Envelope shutdown;
  shutdown.mutable_shutdown()->set_reason("head_trials_bench done");
  if (!m.Send(m.client(), shutdown)) return absl::UnavailableError("cannot send Shutdown");
  // Sockets close with linger 0: wait until the head has acted on it.
  return m.Pump([&] { return m.shutdowns == m.o.agents; }, timeout);
}

}  // namespace bench
}  // namespace tunefleet
