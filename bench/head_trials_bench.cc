// head_trials_bench: trials per second one head carries through their whole lifecycle, with its
// CPU time and memory (issue 6: 64 agents x 8 slots, 10,000 trials).
//
// A real launcher::Head runs in a forked child process (testing/head_process.h) on a TCP loopback
// port, so its CPU time and RSS are its own. In this process, on one thread, --agents simulated
// agents with --slots slots each and one simulated hpo client (testing/sim_cluster.h) register
// and heartbeat; the client submits --trials one-rank trials, all up-front (--window 0) or
// keeping --window of them submitted and not yet exited; each Assign is answered by Started,
// --reports_per_trial Reports (each answered by the client's Decision CONTINUE) and Exit
// COMPLETED. The trials do no work.
//
// Figures: trials/s from the first Submit to the last Exit; the head's CPU time (every thread,
// and its poll loop alone) over that span, per trial; its RSS before the first Submit and after
// every --sample_every exits, to judge whether memory stays flat. The simulated peers share the
// machine with the head, so on a small machine trials/s is a lower bound of what the head
// alone sustains; the head's CPU per trial is not.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "common/cli.h"
#include "common/status_macros.h"
#include "launcher/head/head.h"
#include "testing/head_process.h"
#include "testing/sim_cluster.h"

namespace tunefleet {
namespace bench {
namespace {

constexpr char kProgram[] = "head_trials_bench";

struct Row {
  int64_t exits = 0;
  double seconds = 0;
  HeadProcess::Usage usage;
};

// "1k", "2.5k", "500".
std::string CountLabel(int64_t n) {
  if (n >= 1000 && n % 1000 == 0) return absl::StrCat(n / 1000, "k");
  if (n >= 1000 && n % 100 == 0) return absl::StrCat(n / 1000, ".", (n % 1000) / 100, "k");
  return absl::StrCat(n);
}

double MiB(int64_t kib) { return static_cast<double>(kib) / 1024.0; }

// The bench's flags, checked.
struct BenchOptions {
  SimOptions sim;
  int64_t heartbeat_ms = 1000;
  std::string head_log;
  int64_t total = 0;  // trials in all: --trials times --rounds
};

// What a run measured.
struct Measured {
  std::vector<Row> rows;  // before the first Submit, then every --sample_every exits
  SimResult result;
  SimCluster::HeadStatus status;  // the head's, once every trial exited
  HeadProcess::Final final;       // the head process's, once shut down
};

// Reads the flags into `b`: an exit code when the bench ends here (--help, a bad flag), else -1.
int ParseOptions(const std::vector<std::string>& args, BenchOptions& b) {
  SimOptions& o = b.sim;
  int64_t agents = o.agents, slots = o.slots, reports = 1, sample_every = 0;
  CommandLine cli(kProgram, "",
                  "Trials per second one head (a forked child process) carries from a\n"
                  "simulated hpo client to simulated agents and back, with the head's CPU time\n"
                  "and RSS (see the file comment).");
  cli.AddInt("agents", &agents, "simulated agents", "N");
  cli.AddInt("slots", &slots, "slots per agent", "N");
  cli.AddInt("trials", &o.trials, "one-rank trials (per round)", "N");
  cli.AddInt("window", &o.window,
             "trials submitted and not yet exited at most; 0: submit all up-front", "N");
  cli.AddInt("rounds", &o.rounds,
             "without --window: submit --trials up-front this many times, each round once the "
             "last has exited",
             "N");
  cli.AddInt("reports_per_trial", &reports,
             "Reports per trial, each answered by a Decision before the next (default 1)", "N");
  cli.AddInt("sample_every", &sample_every,
             "sample the head's RSS and CPU after every N exits (default: trials / 10)", "N");
  cli.AddInt("heartbeat_ms", &b.heartbeat_ms, "the head's heartbeat interval", "MS");
  cli.AddString("head_log", &b.head_log,
                "the head logs INFO (as the real head does) to this file; default: warnings "
                "only, to stderr",
                "PATH");
  if (const int exit_code = ParseOrExit(cli, args, kProgram); exit_code >= 0) return exit_code;
  absl::Status invalid;
  if (agents < 1 || slots < 1 || o.trials < 1 || o.rounds < 1 || o.window < 0 || reports < 0 ||
      sample_every < 0 || b.heartbeat_ms < 1) {
    invalid = absl::InvalidArgumentError(
        "--agents, --slots, --trials, --rounds and --heartbeat_ms must be positive, the others "
        "not negative");
  } else if (o.rounds > 1 && o.window > 0) {
    invalid = absl::InvalidArgumentError("--rounds is for up-front submission (no --window)");
  }
  if (!invalid.ok()) {
    PrintError(kProgram, invalid);
    return 2;
  }
  o.agents = static_cast<int>(agents);
  o.slots = static_cast<int>(slots);
  o.reports_per_trial = static_cast<int>(reports);
  b.total = o.trials * o.rounds;
  o.sample_every = sample_every > 0 ? sample_every : std::max<int64_t>(1, b.total / 10);
  return -1;
}

// Forks the head (first, while this process has one thread), runs the simulated cluster's
// trials through it, sampling its usage, and shuts it down.
absl::StatusOr<Measured> Measure(const BenchOptions& b) {
  launcher::Head::Options head_options;
  head_options.bind = "tcp://127.0.0.1:*";
  head_options.heartbeat_interval = absl::Milliseconds(b.heartbeat_ms);
  absl::StatusOr<std::unique_ptr<HeadProcess>> head = HeadProcess::Start(head_options, b.head_log);
  if (!head.ok()) return head.status();

  zmq::context_t context(1);
  SimCluster sim(context, (*head)->endpoint(), b.sim);
  RETURN_IF_ERROR(sim.Connect(absl::Seconds(30)));
  Measured m;
  auto sample = [&](int64_t exits, double seconds) {
    Row row{exits, seconds, {}};
    absl::StatusOr<HeadProcess::Usage> usage = (*head)->Sample();
    if (usage.ok()) row.usage = *usage;
    m.rows.push_back(row);
  };
  sample(0, 0);
  ASSIGN_OR_RETURN(m.result, sim.Run(sample));
  ASSIGN_OR_RETURN(m.status, sim.QueryStatus(absl::Seconds(10)));
  RETURN_IF_ERROR(sim.ShutdownHead(absl::Seconds(10)));
  ASSIGN_OR_RETURN(m.final, (*head)->Wait(absl::Seconds(10)));
  return m;
}

// The samples, one line each: exits, wall time, trials/s (overall and since the last sample),
// the head's RSS and CPU time (every thread, and its poll loop) since the first.
void PrintSamples(const std::vector<Row>& rows) {
  std::printf("  %8s %8s %12s %9s %11s %13s %12s\n", "exits", "wall s", "trials/s", "(since)",
              "head rss", "head cpu s", "(poll loop)");
  const Row& first = rows.front();
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    const Row& prev = rows[i == 0 ? 0 : i - 1];
    const double span = row.seconds - prev.seconds;
    std::printf(
        "  %8lld %8.2f %12.0f %9.0f %7.1f MiB %13.2f %12.2f\n", static_cast<long long>(row.exits),
        row.seconds, row.seconds > 0 ? static_cast<double>(row.exits) / row.seconds : 0.0,
        span > 0 ? static_cast<double>(row.exits - prev.exits) / span : 0.0, MiB(row.usage.rss_kib),
        row.usage.cpu_s - first.usage.cpu_s, row.usage.loop_cpu_s - first.usage.loop_cpu_s);
  }
}

// The outcomes, the head's state afterwards, and the one-line summary.
void PrintSummary(const BenchOptions& b, const Measured& m, const std::string& window) {
  const SimOptions& o = b.sim;
  const SimResult& r = m.result;
  const Row& first = m.rows.front();
  const Row& last = m.rows.back();
  // VmHWM is updated lazily by the kernel: the peak is the most of it, the samples and wait4's.
  int64_t peak_kib = std::max(last.usage.hwm_kib, m.final.max_rss_kib);
  for (const Row& row : m.rows) peak_kib = std::max(peak_kib, row.usage.rss_kib);
  const double cpu = last.usage.cpu_s - first.usage.cpu_s;
  const double loop_cpu = last.usage.loop_cpu_s - first.usage.loop_cpu_s;
  std::vector<std::string> rss;
  rss.push_back(absl::StrFormat("start %.1f", MiB(first.usage.rss_kib)));
  for (size_t i = 1; i < m.rows.size(); ++i) {
    rss.push_back(
        absl::StrFormat("%s %.1f", CountLabel(m.rows[i].exits), MiB(m.rows[i].usage.rss_kib)));
  }
  std::vector<std::string> others;
  for (const auto& [name, n] : r.other_outcomes) others.push_back(absl::StrCat(n, " ", name));
  std::printf(
      "  outcomes: %lld COMPLETED%s%s; %lld Started, %lld Reports answered; at most "
      "%lld trials submitted and not yet started; the peers sent %lld heartbeats\n",
      static_cast<long long>(r.completed), others.empty() ? "" : ", ",
      absl::StrJoin(others, ", ").c_str(), static_cast<long long>(r.started),
      static_cast<long long>(r.reports), static_cast<long long>(r.max_queued),
      static_cast<long long>(r.heartbeats_sent));
  std::printf(
      "  head afterwards: %d live agents, %d runs held; exit code %d, %.2f s CPU in "
      "all (wait4), max RSS %.1f MiB (wait4)\n",
      m.status.live_agents, m.status.runs, m.final.exit_code, m.final.cpu_s,
      MiB(m.final.max_rss_kib));
  std::printf(
      "trials %lld  agents %dx%d  %s  wall %.2f s  trials/s %.0f  head cpu %.2f s (%.0f us/trial, "
      "poll loop %.2f s)  head rss MiB: %s  peak %.1f\n",
      static_cast<long long>(b.total), o.agents, o.slots, window.c_str(), r.seconds,
      static_cast<double>(b.total) / r.seconds, cpu, 1e6 * cpu / static_cast<double>(b.total),
      loop_cpu, absl::StrJoin(rss, "  ").c_str(), MiB(peak_kib));
}

int Main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  BenchOptions b;
  if (const int exit_code = ParseOptions(args, b); exit_code >= 0) return exit_code;
  absl::StatusOr<Measured> m = Measure(b);
  if (!m.ok()) {
    PrintError(kProgram, m.status());
    return 1;
  }
  const SimOptions& o = b.sim;
  const std::string window = o.window > 0 ? absl::StrCat("window ", o.window)
                             : o.rounds == 1
                                 ? "all up-front"
                                 : absl::StrCat("up-front in ", o.rounds, " rounds of ", o.trials);
  std::printf(
      "%s: %lld trials, %d agents x %d slots, %s, %d report(s) per trial, head "
      "heartbeat %lld ms%s\n",
      kProgram, static_cast<long long>(b.total), o.agents, o.slots, window.c_str(),
      o.reports_per_trial, static_cast<long long>(b.heartbeat_ms),
      b.head_log.empty() ? "" : ", head logging INFO to a file");
  PrintSamples(m->rows);
  PrintSummary(b, *m, window);
  const bool ok = m->result.completed == b.total && m->status.live_agents == o.agents &&
                  m->status.runs == 0 && m->final.exit_code == 0;
  if (!ok) std::fprintf(stderr, "%s: FAILED: not every trial completed cleanly\n", kProgram);
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace bench
}  // namespace tunefleet

int main(int argc, char** argv) {
  return tunefleet::RunMain(/*role=*/"", tunefleet::bench::Main, argc, argv);
}
