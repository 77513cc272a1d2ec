// SweepDriver against a tiny ROUTER "head" on an ipc:// socket in /tmp: what a Submit carries
// (resources.reuse_workers / worker_max_trials as TrialSpec.reuse_worker / worker_max_trials),
// and what a Started does to the journal: rank 0's warm worker becomes the trial's user attr
// "worker", a fresh trainer ("") records none, and Optuna 3.1 (/usr/bin/python3) reads it;
// what a sweep whose stdout is no terminal prints as its trials end. journal_optuna_test
// compares the rest of Optuna's view with hpo's.
#include "hpo/sweep_driver.h"

#include <stdlib.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include <zmq.hpp>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "comm/codec.h"
#include "comm/zmq_channel.h"
#include "common/signals.h"
#include "gtest/gtest.h"
#include "hpo/journal/journal_replay.h"
#include "tests/hpo/hpo_test_util.h"
#include "tests/test_util/temp_dir.h"

namespace tunefleet {
namespace hpo {
namespace {

constexpr char kWarm[] = "local/slot-0/w-4242#3";

// What `python3 -c script journal` prints (stdout and stderr), and its exit status in *status.
std::string Python(const std::string& script, const std::string& journal, int* status) {
  const std::string command =
      absl::StrCat("/usr/bin/python3 -c '", script, "' '", journal, "' 2>&1");
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    *status = -1;
    return "cannot start /usr/bin/python3";
  }
  std::string out;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0;) out.append(buffer, n);
  *status = ::pclose(pipe);
  return out;
}

// Each trial's user attr "worker" as Optuna reads the journal: "NUMBER=WORKER" lines, "None"
// where it has none.
constexpr char kOptunaWorkers[] =
    "import sys, warnings\n"
    "warnings.simplefilter(\"ignore\")\n"
    "import optuna\n"
    "optuna.logging.set_verbosity(optuna.logging.WARNING)\n"
    "s = optuna.storages.JournalStorage(optuna.storages.JournalFileStorage(sys.argv[1]))\n"
    "for t in optuna.load_study(study_name=None, storage=s).get_trials(deepcopy=False):\n"
    "    print(t.number, t.user_attrs.get(\"worker\"), sep=\"=\")\n";

int CountOf(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class SweepDriverTest : public ::testing::Test {
 protected:
  // The journal in the test's own folder (kept for a failing test to be read), the head's
  // socket in a short one.
  void SetUp() override {
    dir_ = FreshTestDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    endpoint_ = "ipc://" + sockets_.path() + "/head.sock";
    head_.set(zmq::sockopt::linger, 0);
    head_.bind(endpoint_);
  }

  SweepConfig Config(const std::string& resources) {
    return ConfigFromYaml(
        absl::StrCat("name: warm\n"
                     "metric: {name: m, goal: maximize}\n"
                     "trainer: {synthetic: {steps: 2, samples_per_step: 50}}\n",
                     resources,
                     "parameters:\n"
                     "  lr: {distribution: log_uniform, min: 1.0e-5, max: 1.0e-3}\n"
                     "  batch_size: {values: [16, 32]}\n"
                     "search: {method: random, random: {trials: 2, seed: 1}}\n"
                     "max_concurrent_trials: 1\n"
                     "journal: ",
                     dir_, "/journal.log\n"),
        "warm.yaml");
  }

  // The next message the head got (waiting up to 10 s); the sender's identity in from_.
  std::optional<comm::Envelope> HeadReceives() {
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (absl::Now() < deadline) {
      zmq::pollitem_t items[] = {{static_cast<void*>(head_), 0, ZMQ_POLLIN, 0}};
      zmq::poll(items, 1, std::chrono::milliseconds(100));
      std::optional<comm::Received> received = comm::TryReceive(head_, /*router=*/true);
      if (!received.has_value() || !received->envelope.ok()) continue;
      if (received->envelope->body_case() == comm::Envelope::kHeartbeat) continue;
      from_ = received->identity;
      return *received->envelope;
    }
    return std::nullopt;
  }
  // The next message, which must be a `body`; a failed expectation and nullopt otherwise.
  std::optional<comm::Envelope> Expect(comm::Envelope::BodyCase body) {
    std::optional<comm::Envelope> e = HeadReceives();
    EXPECT_TRUE(e.has_value()) << "the head got nothing";
    if (!e.has_value()) return std::nullopt;
    EXPECT_EQ(e->body_case(), body) << comm::BodyName(*e);
    if (e->body_case() != body) return std::nullopt;
    return e;
  }
  void HeadSends(const comm::Envelope& e) { ASSERT_TRUE(comm::SendTo(head_, from_, e).ok()); }

  void Welcome() {
    ASSERT_TRUE(Expect(comm::Envelope::kRegister).has_value());
    comm::Envelope welcome;
    welcome.mutable_welcome()->set_session("s1");
    welcome.mutable_welcome()->set_heartbeat_interval_ms(60000);  // no liveness in this test
    HeadSends(welcome);
  }

  // Runs the submitted trial: Started on slot 0 with `worker` ("" for a fresh process), a final
  // report of `value`, then a completed Exit. The Submit's spec goes to *spec.
  void RunTrial(const std::string& worker, double value, comm::TrialSpec* spec) {
    std::optional<comm::Envelope> submit = Expect(comm::Envelope::kSubmit);
    ASSERT_TRUE(submit.has_value());
    *spec = submit->submit().trial();
    const int64_t trial = spec->trial();
    comm::Envelope started;
    comm::Started* s = started.mutable_started();
    s->set_run_id(static_cast<uint64_t>(trial) + 1);
    s->set_trial(trial);
    s->set_agent("local");
    s->add_ranks(0);
    s->add_pids(4242);
    s->add_slots(0);
    s->add_workers(worker);
    HeadSends(started);
    comm::Envelope report;
    comm::Report* r = report.mutable_report();
    r->set_run_id(static_cast<uint64_t>(trial) + 1);
    r->set_trial(trial);
    r->set_step(2);
    r->set_samples(100);
    (*r->mutable_metrics())["m"] = value;
    r->set_final(true);
    HeadSends(report);
    ASSERT_TRUE(Expect(comm::Envelope::kDecision).has_value());
    comm::Envelope exit;
    exit.mutable_exit()->set_run_id(static_cast<uint64_t>(trial) + 1);
    exit.mutable_exit()->set_trial(trial);
    exit.mutable_exit()->set_outcome(comm::Exit::COMPLETED);
    HeadSends(exit);
  }

  // Runs a two-trial sweep of `config`: trial 0 in the warm worker kWarm, trial 1 in a fresh
  // process. The Submits' specs go to specs[0..1]; returns the journal's text.
  std::string Sweep(const SweepConfig& config, comm::TrialSpec specs[2]) {
    SweepDriver::Options options;
    options.head = endpoint_;
    options.connect_timeout = absl::Seconds(10);
    options.head_grace = absl::ZeroDuration();
    absl::Status result = absl::UnknownError("did not run");
    std::thread run([&] {
      SweepDriver driver(config, options, &signals_);
      result = driver.Run();
    });
    Welcome();
    RunTrial(kWarm, 0.5, &specs[0]);
    RunTrial("", 0.6, &specs[1]);
    run.join();
    EXPECT_TRUE(result.ok()) << result;
    std::ifstream in(config.journal);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  // Before the ZeroMQ contexts start their threads (SignalFd blocks the signal in this thread);
  // SIGUSR2 is one nothing sends.
  SignalFd signals_{SIGUSR2};
  zmq::context_t context_{1};
  ShortTempDir sockets_{"sd"};
  zmq::socket_t head_{context_, zmq::socket_type::router};
  std::string dir_;
  std::string endpoint_;
  std::string from_;
};

TEST_F(SweepDriverTest, AWarmTrialRecordsItsWorkerAndAFreshOneNone) {
  const SweepConfig config = Config("");
  comm::TrialSpec specs[2];
  const std::string journal = Sweep(config, specs);
  for (const comm::TrialSpec& spec : specs) {
    EXPECT_TRUE(spec.reuse_worker());  // the default
    EXPECT_EQ(spec.worker_max_trials(), 16);
  }
  // One "worker" attr, trial 0's, written as the other user attrs are.
  EXPECT_EQ(CountOf(journal, "\"worker\""), 1) << journal;
  EXPECT_EQ(CountOf(journal, absl::StrCat("{\"worker\": \"", kWarm, "\"}")), 1) << journal;
  absl::StatusOr<JournalContents> contents = ReadJournal(config.journal);
  ASSERT_TRUE(contents.ok()) << contents.status();
  ASSERT_EQ(contents->study.trials.size(), 2u);
  EXPECT_EQ(contents->study.trials[0].worker, kWarm);
  EXPECT_EQ(contents->study.trials[1].worker, "");
  EXPECT_EQ(contents->study.trials[0].placement, "local:0");  // unchanged beside it
  EXPECT_EQ(contents->study.trials[0].state, TrialState::kComplete);
  EXPECT_EQ(contents->study.trials[1].state, TrialState::kComplete);
  int status = 0;
  const std::string optuna = Python(kOptunaWorkers, config.journal, &status);
  EXPECT_EQ(status, 0) << optuna;
  EXPECT_EQ(optuna, absl::StrCat("0=", kWarm, "\n1=None\n"));
}

TEST_F(SweepDriverTest, ReuseWorkersFalseSubmitsFreshTrials) {
  comm::TrialSpec specs[2];
  Sweep(Config("resources: {reuse_workers: false, worker_max_trials: 5}\n"), specs);
  for (const comm::TrialSpec& spec : specs) {
    EXPECT_FALSE(spec.reuse_worker());
    EXPECT_EQ(spec.worker_max_trials(), 5);
  }
}

// The file's text ("" when it does not exist).
std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Not on a terminal (stdout piped to a file), each trial's line comes as the trial ends, not
// at the end of the sweep, and nothing is redrawn (no escape sequences).
TEST_F(SweepDriverTest, NotOnATerminalALinePerTrialAsItEnds) {
  const SweepConfig config = Config("");
  const std::string out_path = dir_ + "/stdout.txt";
  std::ofstream out(out_path);
  SweepDriver::Options options;
  options.head = endpoint_;
  options.connect_timeout = absl::Seconds(10);
  options.head_grace = absl::ZeroDuration();
  options.live = false;
  options.out = &out;
  absl::Status result = absl::UnknownError("did not run");
  std::thread run([&] {
    SweepDriver driver(config, options, &signals_);
    result = driver.Run();
  });
  Welcome();
  comm::TrialSpec specs[2];
  RunTrial(kWarm, 0.5, &specs[0]);
  // Trial 0's line, before trial 1 even started.
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (ReadText(out_path).find("trial 0 COMPLETE") == std::string::npos &&
         absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  const std::string first = ReadText(out_path);
  EXPECT_NE(first.find("trial 0 COMPLETE  lr="), std::string::npos) << first;
  EXPECT_EQ(first.find("trial 1 "), std::string::npos) << first;
  RunTrial("", 0.6, &specs[1]);
  run.join();
  EXPECT_TRUE(result.ok()) << result;
  const std::string all = ReadText(out_path);
  for (const char* line : {"trial 0 COMPLETE  lr=", "trial 1 COMPLETE  lr="}) {
    const size_t at = all.find(line);
    ASSERT_NE(at, std::string::npos) << all;
    const std::string rest = all.substr(at, all.find('\n', at) - at);
    EXPECT_NE(rest.find(" s  on local:0"), std::string::npos) << rest;  // how long, and where
  }
  EXPECT_EQ(all.find('\x1b'), std::string::npos) << all;
}

// A head that dropped this sweep (its heartbeats came late) answers each message sent before
// hpo notices with "register first": hpo registers again once, however many refusals come,
// submits its running trial again (resubmit), and the sweep ends as usual.
TEST_F(SweepDriverTest, RegistersAgainWhenTheHeadDroppedIt) {
  const SweepConfig config = Config("");
  SweepDriver::Options options;
  options.head = endpoint_;
  options.connect_timeout = absl::Seconds(10);
  options.head_grace = absl::Seconds(30);
  absl::Status result = absl::UnknownError("did not run");
  std::thread run([&] {
    SweepDriver driver(config, options, &signals_);
    result = driver.Run();
  });
  Welcome();
  std::optional<comm::Envelope> first = Expect(comm::Envelope::kSubmit);
  comm::Envelope refused;
  refused.mutable_refused()->set_reason(comm::kRefusedRegisterFirst);
  refused.mutable_refused()->set_session("s1");
  for (int i = 0; i < 3; ++i) HeadSends(refused);
  std::optional<comm::Envelope> again = Expect(comm::Envelope::kRegister);
  if (again.has_value()) {
    EXPECT_EQ(again->register_().previous_session(), "s1");
  }
  comm::Envelope welcome;
  welcome.mutable_welcome()->set_session("s1");
  welcome.mutable_welcome()->set_heartbeat_interval_ms(60000);
  HeadSends(welcome);
  comm::TrialSpec specs[2];
  RunTrial(kWarm, 0.5, &specs[0]);  // its Submit: the resubmission
  RunTrial("", 0.6, &specs[1]);
  run.join();
  EXPECT_TRUE(result.ok()) << result;
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(specs[0].trial(), first->submit().trial().trial());
  EXPECT_EQ(specs[1].trial(), specs[0].trial() + 1);
  absl::StatusOr<JournalContents> contents = ReadJournal(config.journal);
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_EQ(contents->study.trials.size(), 2u);  // nothing ran twice
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
