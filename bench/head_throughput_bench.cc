// head_throughput_bench: how many trainer reports per second one head relays from a cluster
// of agents to the hpo client, and (in round-trip mode) decisions back.
//
// A real launcher::Head runs its poll loop on a thread, bound to a real TCP loopback socket.
// --agents simulated agents (DEALER sockets, one thread each) register with --slots slots; one
// simulated hpo client submits agents * slots one-rank trials, which the head places one per
// slot. Then every agent sends Report messages for its runs:
//   --mode=round_trip (default): like the trainer protocol, a run's next report waits for the
//     client's Decision on the previous one (one report in flight per run), so every report is
//     Report agent->head->client plus Decision client->head->agent: 4 socket hops;
//   --mode=relay: up to --window reports in flight per agent, whatever their run (the
//     client's decisions are the credit), so the head's sockets stay full.
// The figure is reports delivered to the client per second, from the first report sent to
// the last decision received, over --reports reports in all. All processes are threads of
// this one process, so the client and agents compete with the head for the same cores: the
// number is a lower bound of what the head alone sustains.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "comm/codec.h"
#include "comm/proto/messages.pb.h"
#include "comm/zmq_channel.h"
#include "common/cli.h"
#include "common/logging.h"
#include "launcher/head/head.h"

namespace tunefleet {
namespace bench {
namespace {

using comm::Envelope;

struct Options {
  int agents = 8;
  int slots = 8;
  int64_t reports = 400000;
  std::string mode = "round_trip";
  int window = 64;
};

// A DEALER peer of the head that answers the head's heartbeats by sending its own.
class Peer {
 public:
  Peer(zmq::context_t& context, const std::string& endpoint)
      : socket_(context, zmq::socket_type::dealer) {
    comm::ConfigureSocket(socket_, /*router=*/false);
    socket_.connect(endpoint);
  }
  void Send(const Envelope& e) {
    absl::Status s = comm::Send(socket_, e);
    if (!s.ok()) std::fprintf(stderr, "send: %s\n", s.ToString().c_str());
  }
  // Next non-heartbeat message, or nullopt after `timeout`.
  std::optional<Envelope> Receive(absl::Duration timeout) {
    const absl::Time deadline = absl::Now() + timeout;
    while (true) {
      while (auto got = comm::TryReceive(socket_, /*router=*/false)) {
        if (!got->envelope.ok()) continue;
        if (got->envelope->has_heartbeat()) {
          Envelope hb;
          hb.mutable_heartbeat();
          Send(hb);
          continue;
        }
        return *std::move(got->envelope);
      }
      const absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) return std::nullopt;
      zmq::pollitem_t item = {static_cast<void*>(socket_), 0, ZMQ_POLLIN, 0};
      zmq::poll(
          &item, 1,
          std::chrono::milliseconds(std::min<int64_t>(100, absl::ToInt64Milliseconds(left) + 1)));
    }
  }
  Envelope Expect(Envelope::BodyCase body, const char* what) {
    std::optional<Envelope> e = Receive(absl::Seconds(10));
    if (!e.has_value() || e->body_case() != body) {
      std::fprintf(stderr, "head_throughput_bench: no %s from the head\n", what);
      std::exit(1);
    }
    return *e;
  }

 private:
  zmq::socket_t socket_;
};

Envelope Register(comm::Role role, const std::string& name, int slots) {
  Envelope e;
  comm::Register* reg = e.mutable_register_();
  reg->set_role(role);
  reg->set_name(name);
  reg->set_slots(slots);
  reg->set_address("127.0.0.1");
  reg->set_hostname(name);
  reg->set_pid(1);
  return e;
}

struct Run {
  uint64_t run_id = 0;
  int64_t trial = 0;
  int64_t next_step = 1;
};

// One agent: registers, takes its Assigns, then sends `quota` reports over its runs.
void AgentLoop(zmq::context_t* context, const std::string& endpoint, int index, const Options& o,
               int64_t quota, std::atomic<int>* ready, std::atomic<bool>* go) {
  Peer peer(*context, endpoint);
  peer.Send(Register(comm::AGENT, absl::StrCat("agent", index), o.slots));
  peer.Expect(Envelope::kWelcome, "Welcome");
  std::vector<Run> runs;
  while (static_cast<int>(runs.size()) < o.slots) {
    Envelope assign = peer.Expect(Envelope::kAssign, "Assign");
    Run run;
    run.run_id = assign.assign().trial().run_id();
    run.trial = assign.assign().trial().trial();
    runs.push_back(run);
    Envelope started;
    started.mutable_started()->set_run_id(run.run_id);
    started.mutable_started()->set_trial(run.trial);
    started.mutable_started()->set_agent(absl::StrCat("agent", index));
    peer.Send(started);
  }
  ready->fetch_add(1);
  while (!go->load()) std::this_thread::sleep_for(std::chrono::microseconds(100));

  Envelope report;
  (*report.mutable_report()->mutable_metrics())["eval/spearman"] = 0.5;
  (*report.mutable_report()->mutable_metrics())["train/loss"] = 1.0;
  int64_t sent = 0, answered = 0;
  auto send_one = [&](Run& run) {
    report.mutable_report()->set_run_id(run.run_id);
    report.mutable_report()->set_trial(run.trial);
    report.mutable_report()->set_step(run.next_step++);
    peer.Send(report);
    ++sent;
  };
  const bool round_trip = o.mode == "round_trip";
  // Round trip: one report in flight per run. Relay: up to `window` in flight per agent.
  const int64_t in_flight = round_trip ? o.slots : o.window;
  for (int64_t i = 0; i < in_flight && sent < quota; ++i) send_one(runs[i % runs.size()]);
  size_t rr = 0;
  while (answered < quota) {
    std::optional<Envelope> e = peer.Receive(absl::Seconds(30));
    if (!e.has_value()) {
      std::fprintf(stderr, "agent%d: stalled after %lld of %lld decisions\n", index,
                   static_cast<long long>(answered), static_cast<long long>(quota));
      std::exit(1);
    }
    if (!e->has_decision()) continue;
    ++answered;
    if (sent >= quota) continue;
    if (round_trip) {
      for (Run& run : runs) {
        if (run.run_id == e->decision().run_id()) send_one(run);
      }
    } else {
      send_one(runs[rr++ % runs.size()]);
    }
  }
}

// Reads the flags into `o`: an exit code when the bench ends here (--help, a bad flag), else -1.
int ParseOptions(const std::vector<std::string>& args, Options& o) {
  int64_t agents = o.agents, slots = o.slots, window = o.window;
  CommandLine cli("head_throughput_bench", "",
                  "Reports per second one head relays from simulated agents to a simulated hpo\n"
                  "client, each answered by a Decision (see the file comment).");
  cli.AddInt("agents", &agents, "simulated agents", "N");
  cli.AddInt("slots", &slots, "slots (one-rank runs) per agent", "N");
  cli.AddInt("reports", &o.reports, "reports in all", "N");
  cli.AddString("mode", &o.mode, "round_trip or relay", "MODE");
  cli.AddInt("window", &window, "relay mode: reports in flight per agent", "N");
  if (const int exit_code = ParseOrExit(cli, args, "head_throughput_bench"); exit_code >= 0) {
    return exit_code;
  }
  if ((o.mode != "round_trip" && o.mode != "relay") || agents < 1 || slots < 1 || window < 1 ||
      o.reports < agents) {
    PrintError("head_throughput_bench",
               absl::InvalidArgumentError("bad --mode, --agents, --slots, --window or --reports"));
    return 2;
  }
  o.agents = static_cast<int>(agents);
  o.slots = static_cast<int>(slots);
  o.window = static_cast<int>(window);
  return -1;
}

// The simulated hpo client's start: registers, submits one one-rank trial per slot of the
// cluster, and takes the Started messages until every agent is ready.
void StartClient(Peer& client, const Options& o, const std::atomic<int>& ready) {
  client.Send(Register(comm::CLIENT, "hpo", 0));
  client.Expect(Envelope::kWelcome, "Welcome");
  for (int t = 0; t < o.agents * o.slots; ++t) {
    Envelope submit;
    comm::TrialSpec* spec = submit.mutable_submit()->mutable_trial();
    spec->set_trial(t);
    spec->set_sweep("bench");
    spec->set_world_size(1);
    spec->add_argv("synthetic");
    client.Send(submit);
  }
  while (ready.load() < o.agents) {
    client.Receive(absl::Milliseconds(10));  // Started messages
  }
}

// The client's part of the measurement: a Decision for each of `total` reports; false (said on
// stderr) when the head stalls.
bool AnswerReports(Peer& client, int64_t total) {
  int64_t received = 0;
  Envelope decision;
  decision.mutable_decision()->set_action(comm::Decision::CONTINUE);
  while (received < total) {
    std::optional<Envelope> e = client.Receive(absl::Seconds(30));
    if (!e.has_value()) {
      std::fprintf(stderr, "client: stalled after %lld of %lld reports\n",
                   static_cast<long long>(received), static_cast<long long>(total));
      return false;
    }
    if (!e->has_report()) continue;
    ++received;
    decision.mutable_decision()->set_trial(e->report().trial());
    decision.mutable_decision()->set_step(e->report().step());
    client.Send(decision);
  }
  return true;
}

int Main(const std::vector<std::string>& args) {
  Options o;
  if (const int exit_code = ParseOptions(args, o); exit_code >= 0) return exit_code;

  // The head logs a line per run; keep the figure readable (TUNEFLEET_LOG_LEVEL overrides).
  if (std::getenv("TUNEFLEET_LOG_LEVEL") == nullptr) SetMinLogLevel(LogLevel::kWARNING);
  launcher::Head::Options head_options;
  head_options.bind = "tcp://127.0.0.1:*";
  launcher::Head head(head_options, /*signals=*/nullptr);
  if (absl::Status s = head.Bind(); !s.ok()) {
    PrintError("head_throughput_bench", s);
    return 1;
  }
  absl::Status head_result;
  std::thread head_thread([&] { head_result = head.Run(); });

  zmq::context_t context(2);
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> agent_threads;
  const int64_t per_agent = o.reports / o.agents;
  const int64_t total = per_agent * o.agents;
  for (int i = 0; i < o.agents; ++i) {
    agent_threads.emplace_back(AgentLoop, &context, head.endpoint(), i, std::cref(o), per_agent,
                               &ready, &go);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // agents register first

  Peer client(context, head.endpoint());
  StartClient(client, o, ready);
  const absl::Time start = absl::Now();
  go.store(true);
  if (!AnswerReports(client, total)) return 1;
  for (std::thread& t : agent_threads) t.join();
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  // The agents are gone: the head's Shutdown to them finds no peer.
  SetMinLogLevel(LogLevel::kERROR);
  head.Stop();
  head_thread.join();
  std::printf(
      "head_throughput_bench: mode=%s agents=%d slots=%d: %lld reports (each answered by a "
      "decision) in %.3f s = %.0f reports/s\n",
      o.mode.c_str(), o.agents, o.slots, static_cast<long long>(total), seconds, total / seconds);
  return head_result.ok() ? 0 : 1;
}

}  // namespace
}  // namespace bench
}  // namespace tunefleet

int main(int argc, char** argv) {
  return tunefleet::bench::Main(std::vector<std::string>(argv + 1, argv + argc));
}
