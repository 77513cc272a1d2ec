// trainer/distributed/agent_client.h against a fake agent (a ROUTER on loopback): the trainer
// registers, each Report carries its step and its samples (Report.samples, the sweep's resource
// axis) and waits for the Decision on that step (CONTINUE: go on, STOP: stop); ReportFinal marks
// the final value. The synthetic trainer (trainer/data/synthetic.h) reports step s at s *
// samples_per_step and its final value at steps * samples_per_step, whatever its batch size.
#include "trainer/distributed/agent_client.h"

#include <stdlib.h>

#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "comm/proto/messages.pb.h"
#include "comm/zmq_channel.h"
#include "gtest/gtest.h"
#include "trainer/data/synthetic.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr uint64_t kRunId = 7;
constexpr int64_t kTrial = 3;

// An agent's trainer socket: receives what the client sends, answers with Decisions.
class FakeAgent {
 public:
  FakeAgent() : context_(1), router_(context_, zmq::socket_type::router) {
    comm::ConfigureSocket(router_, /*router=*/true);
    router_.bind("tcp://127.0.0.1:*");
    ::setenv("TUNEFLEET_AGENT_ENDPOINT", comm::LastEndpoint(router_).c_str(), 1);
    ::setenv("TUNEFLEET_RUN_ID", std::to_string(kRunId).c_str(), 1);
    ::setenv("TUNEFLEET_TRIAL", std::to_string(kTrial).c_str(), 1);
    ::setenv("TUNEFLEET_DECISION_TIMEOUT_MS", "10000", 1);
  }

  // The next envelope, within 10 s (nullopt after).
  std::optional<comm::Envelope> Next() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      zmq::pollitem_t item{static_cast<void*>(router_), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, std::chrono::milliseconds(100));
      if (auto received = comm::TryReceive(router_, /*router=*/true)) {
        EXPECT_TRUE(received->envelope.ok()) << received->envelope.status();
        if (!received->envelope.ok()) continue;
        identity_ = received->identity;
        return *received->envelope;
      }
    }
    return std::nullopt;
  }

  // The next Report (skipping the trainer's Register).
  std::optional<comm::Report> NextReport() {
    while (std::optional<comm::Envelope> e = Next()) {
      if (e->body_case() == comm::Envelope::kReport) return e->report();
    }
    return std::nullopt;
  }

  void Decide(int64_t step, comm::Decision::Action action) {
    comm::Envelope e;
    comm::Decision* d = e.mutable_decision();
    d->set_run_id(kRunId);
    d->set_trial(kTrial);
    d->set_step(step);
    d->set_action(action);
    ASSERT_TRUE(comm::SendTo(router_, identity_, e).ok());
  }

  // Receives the next Report, expects it to be of `step` at `samples`, and answers it with
  // `action`; returns it (nullopt, and a failed expectation, when none came).
  std::optional<comm::Report> AnswerReport(int64_t step, int64_t samples,
                                           comm::Decision::Action action) {
    std::optional<comm::Report> r = NextReport();
    EXPECT_TRUE(r.has_value()) << "no report of step " << step;
    if (!r.has_value()) return r;
    EXPECT_EQ(r->step(), step);
    EXPECT_EQ(r->samples(), samples);
    Decide(step, action);
    return r;
  }

 private:
  zmq::context_t context_;
  zmq::socket_t router_;
  std::string identity_;
};

TEST(AgentClient, ReportsCarryStepAndSamples) {
  FakeAgent agent;
  auto client = AgentClient::FromEnvironment();
  ASSERT_TRUE(client.ok()) << client.status();
  ASSERT_NE(*client, nullptr);
  AgentClient* c = client->get();

  auto first = std::async(std::launch::async, [c] {
    return c->Report(5, 80, {{"eval/spearman", 0.25}});
  });
  std::optional<comm::Report> r = agent.AnswerReport(5, 80, comm::Decision::CONTINUE);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->run_id(), kRunId);
  EXPECT_EQ(r->trial(), kTrial);
  EXPECT_FALSE(r->final());
  EXPECT_EQ(r->metrics().at("eval/spearman"), 0.25);
  absl::StatusOr<bool> stop = first.get();
  ASSERT_TRUE(stop.ok()) << stop.status();
  EXPECT_FALSE(*stop);

  auto second = std::async(std::launch::async, [c] {
    return c->Report(10, 240, {{"eval/spearman", 0.3}});
  });
  agent.AnswerReport(10, 240, comm::Decision::STOP);
  stop = second.get();
  ASSERT_TRUE(stop.ok()) << stop.status();
  EXPECT_TRUE(*stop);

  auto last = std::async(std::launch::async, [c] {
    return c->ReportFinal(40, 640, {{"eval/spearman", 0.5}});
  });
  r = agent.AnswerReport(40, 640, comm::Decision::CONTINUE);
  EXPECT_TRUE(r.has_value() && r->final());
  EXPECT_TRUE(last.get().ok());
}

TEST(Synthetic, ReportsSamplesPerStepWhateverTheBatchSize) {
  FakeAgent agent;
  auto client = AgentClient::FromEnvironment();
  ASSERT_TRUE(client.ok()) << client.status();
  ASSERT_NE(*client, nullptr);
  SyntheticOptions o;
  o.steps = 3;
  o.batch_size = 128;
  o.samples_per_step = 100;
  AgentClient* c = client->get();
  auto run = std::async(std::launch::async, [&o, c] { return RunSynthetic(o, c); });
  std::vector<std::vector<int64_t>> got;  // step, samples, final
  for (int i = 0; i < 3; ++i) {
    std::optional<comm::Report> r = agent.NextReport();
    ASSERT_TRUE(r.has_value()) << "report " << i;
    got.push_back({r->step(), r->samples(), r->final() ? 1 : 0});
    EXPECT_DOUBLE_EQ(r->metrics().at(o.metric), SyntheticValue(o, r->step()));
    agent.Decide(r->step(), comm::Decision::CONTINUE);
  }
  EXPECT_TRUE(run.get().ok());
  EXPECT_EQ(got, (std::vector<std::vector<int64_t>>{
                     {1, 100, 0}, {2, 200, 0}, {3, 300, 1}}));  // the last step: final only
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
