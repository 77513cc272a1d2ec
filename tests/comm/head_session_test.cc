// HeadSession against a tiny ROUTER "head" on an ipc:// socket in /tmp: what the session sends
// and which state it is in, with time passed as an argument (no test waits for a heartbeat).
#include "comm/head_session.h"

#include <stdlib.h>
#include <unistd.h>

#include <optional>
#include <string>

#include <zmq.hpp>

#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "comm/codec.h"
#include "comm/zmq_channel.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace comm {
namespace {

using ::testing::Test;

const absl::Time kT0 = absl::FromUnixSeconds(1700000000);

class HeadSessionTest : public Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/head_session_test-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
    endpoint_ = "ipc://" + dir_ + "/head.sock";
    head_.set(zmq::sockopt::linger, 0);
    head_.bind(endpoint_);
  }
  void TearDown() override {
    ::unlink((dir_ + "/head.sock").c_str());
    ::rmdir(dir_.c_str());
  }

  HeadSession::Options SessionOptions() {
    HeadSession::Options options;
    options.head = endpoint_;
    options.who = "this agent";
    options.register_timeout = absl::Seconds(30);
    options.head_grace = absl::Seconds(20);
    return options;
  }
  std::unique_ptr<HeadSession> MakeSession(HeadSession::Options options) {
    return std::make_unique<HeadSession>(context_, std::move(options), [] {
      Envelope envelope;
      envelope.mutable_register_()->set_role(AGENT);
      envelope.mutable_register_()->set_name("a");
      return envelope;
    });
  }

  // The next message the head got, waiting up to `wait` for it; the sender's identity in `from`.
  std::optional<Envelope> HeadReceives(absl::Duration wait = absl::Seconds(5)) {
    zmq::pollitem_t items[] = {{static_cast<void*>(head_), 0, ZMQ_POLLIN, 0}};
    zmq::poll(items, 1, std::chrono::milliseconds(absl::ToInt64Milliseconds(wait)));
    std::optional<Received> received = TryReceive(head_, /*router=*/true);
    if (!received.has_value() || !received->envelope.ok()) return std::nullopt;
    from_ = received->identity;
    return *received->envelope;
  }
  bool HeadGetsNothing() { return !HeadReceives(absl::Milliseconds(100)).has_value(); }

  // Registers `session` and welcomes it at kT0 (session "s1", 1 s heartbeats).
  void Welcome(HeadSession& session, const std::string& id = "s1", absl::Time at = kT0) {
    Envelope welcome;
    welcome.mutable_welcome()->set_session(id);
    welcome.mutable_welcome()->set_heartbeat_interval_ms(1000);
    session.OnWelcome(welcome.welcome(), at);
  }

  zmq::context_t context_{1};
  zmq::socket_t head_{context_, zmq::socket_type::router};
  std::string dir_;
  std::string endpoint_;
  std::string from_;
};

TEST_F(HeadSessionTest, ConnectSendsRegisterAndAWelcomeComesBack) {
  auto session = MakeSession(SessionOptions());
  ASSERT_TRUE(session->Connect(kT0).ok());
  EXPECT_EQ(session->state(), HeadSession::State::kRegistering);
  std::optional<Envelope> got = HeadReceives();
  ASSERT_TRUE(got.has_value());
  ASSERT_EQ(got->body_case(), Envelope::kRegister);
  EXPECT_EQ(got->register_().name(), "a");
  EXPECT_EQ(got->register_().previous_session(), "");

  // The round trip: the head answers on the ROUTER, the session reads it.
  Envelope welcome;
  welcome.mutable_welcome()->set_session("s1");
  welcome.mutable_welcome()->set_heartbeat_interval_ms(500);
  ASSERT_TRUE(SendTo(head_, from_, welcome).ok());
  std::optional<Received> received;
  for (int i = 0; i < 50 && !received.has_value(); ++i) {
    zmq::pollitem_t items[] = {{static_cast<void*>(session->socket()), 0, ZMQ_POLLIN, 0}};
    zmq::poll(items, 1, std::chrono::milliseconds(100));
    received = session->Receive(kT0);
  }
  ASSERT_TRUE(received.has_value());
  ASSERT_TRUE(received->envelope.ok());
  const HeadSession::Welcomed w = session->OnWelcome(received->envelope->welcome(), kT0);
  EXPECT_TRUE(w.first);
  EXPECT_FALSE(w.was_lost);
  EXPECT_TRUE(session->welcomed());
  EXPECT_EQ(session->session(), "s1");
  EXPECT_EQ(session->liveness().interval(), absl::Milliseconds(500));
}

TEST_F(HeadSessionTest, HeartbeatsWhenNothingElseWasSentForAnInterval) {
  auto session = MakeSession(SessionOptions());
  ASSERT_TRUE(session->Connect(kT0).ok());
  ASSERT_TRUE(HeadReceives().has_value());  // the Register
  // Not welcomed yet: no heartbeat however long it waits (short of the register timeout).
  EXPECT_TRUE(session->Poll(kT0 + absl::Seconds(5), HeadSession::Mode::kWait).status.ok());
  EXPECT_TRUE(HeadGetsNothing());

  Welcome(*session);
  session->Receive(kT0);
  EXPECT_TRUE(session->Poll(kT0 + absl::Milliseconds(900), HeadSession::Mode::kWait).status.ok());
  EXPECT_TRUE(HeadGetsNothing());
  session->Poll(kT0 + absl::Seconds(1), HeadSession::Mode::kWait);
  std::optional<Envelope> hb = HeadReceives();
  ASSERT_TRUE(hb.has_value());
  EXPECT_EQ(hb->body_case(), Envelope::kHeartbeat);

  // Anything sent counts: a report at 1.5 s puts the next heartbeat at 2.5 s.
  Envelope report;
  report.mutable_report()->set_trial(1);
  session->Send(report, kT0 + absl::Milliseconds(1500));
  ASSERT_TRUE(HeadReceives().has_value());
  session->Poll(kT0 + absl::Seconds(2), HeadSession::Mode::kWait);
  EXPECT_TRUE(HeadGetsNothing());
  session->Poll(kT0 + absl::Milliseconds(2500), HeadSession::Mode::kWait);
  hb = HeadReceives();
  ASSERT_TRUE(hb.has_value());
  EXPECT_EQ(hb->body_case(), Envelope::kHeartbeat);
}

TEST_F(HeadSessionTest, SilentHeadIsLostThenRegisteredAgainEveryFewSeconds) {
  auto session = MakeSession(SessionOptions());
  ASSERT_TRUE(session->Connect(kT0).ok());
  ASSERT_TRUE(HeadReceives().has_value());
  Welcome(*session);
  // Heard at kT0; alive until 3 intervals have passed.
  HeadSession::Tick tick = session->Poll(kT0 + absl::Milliseconds(2900), HeadSession::Mode::kWait);
  EXPECT_TRUE(tick.lost.empty());
  EXPECT_TRUE(session->welcomed());
  while (HeadReceives(absl::Milliseconds(100)).has_value()) {
  }  // the heartbeats

  const absl::Time lost_at = kT0 + absl::Seconds(3);
  tick = session->Poll(lost_at, HeadSession::Mode::kWait);
  EXPECT_EQ(tick.lost, "lost the head at " + endpoint_ + " (no heartbeat for 3s)");
  EXPECT_TRUE(tick.status.ok());
  EXPECT_TRUE(session->lost());
  EXPECT_EQ(session->lost_at(), lost_at);
  // At once: a fresh socket and a Register naming the session it had.
  std::optional<Envelope> again = HeadReceives();
  ASSERT_TRUE(again.has_value());
  ASSERT_EQ(again->body_case(), Envelope::kRegister);
  EXPECT_EQ(again->register_().previous_session(), "s1");
  // No heartbeats while lost; the next Register 3 s later.
  tick = session->Poll(lost_at + absl::Seconds(2), HeadSession::Mode::kWait);
  EXPECT_TRUE(tick.lost.empty());
  EXPECT_TRUE(HeadGetsNothing());
  session->Poll(lost_at + absl::Seconds(3), HeadSession::Mode::kWait);
  again = HeadReceives();
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->body_case(), Envelope::kRegister);
  EXPECT_FALSE(session->Lose(lost_at + absl::Seconds(4)));  // lost already: lost_at stays
  EXPECT_EQ(session->lost_at(), lost_at);

  // A restarted head welcomes it.
  Envelope welcome;
  welcome.mutable_welcome()->set_session("s2");
  const HeadSession::Welcomed w = session->OnWelcome(welcome.welcome(), lost_at + absl::Seconds(5));
  EXPECT_FALSE(w.first);
  EXPECT_TRUE(w.was_lost);
  EXPECT_TRUE(w.restarted);
  EXPECT_EQ(w.lost_at, lost_at);
  EXPECT_TRUE(session->welcomed());
  EXPECT_EQ(session->liveness().interval(), kDefaultHeartbeatInterval);  // the Welcome named none
}

TEST_F(HeadSessionTest, GivesUpWhenTheHeadStaysAwayPastTheGrace) {
  auto session = MakeSession(SessionOptions());
  ASSERT_TRUE(session->Connect(kT0).ok());
  Welcome(*session);
  const absl::Time lost_at = kT0 + absl::Seconds(3);
  ASSERT_FALSE(session->Poll(lost_at, HeadSession::Mode::kWait).lost.empty());
  EXPECT_TRUE(session->Poll(lost_at + absl::Seconds(20), HeadSession::Mode::kWait).status.ok());
  const HeadSession::Tick tick =
      session->Poll(lost_at + absl::Seconds(21), HeadSession::Mode::kWait);
  EXPECT_TRUE(absl::IsUnavailable(tick.status));
  EXPECT_EQ(tick.status.message(), "the head at " + endpoint_ + " did not come back within 20s");
}

TEST_F(HeadSessionTest, FailFastGivesUpOnASilentHeadAndIdleOnlyNotesIt) {
  auto fast = MakeSession(SessionOptions());
  ASSERT_TRUE(fast->Connect(kT0).ok());
  Welcome(*fast);
  HeadSession::Tick tick = fast->Poll(kT0 + absl::Seconds(3), HeadSession::Mode::kFailFast);
  EXPECT_TRUE(absl::IsUnavailable(tick.status));
  EXPECT_TRUE(absl::StartsWith(tick.status.message(), "lost the head at "));

  auto idle = MakeSession(SessionOptions());
  ASSERT_TRUE(idle->Connect(kT0).ok());
  while (HeadReceives(absl::Milliseconds(200)).has_value()) {
  }
  Welcome(*idle);
  tick = idle->Poll(kT0 + absl::Seconds(3), HeadSession::Mode::kIdle);
  EXPECT_FALSE(tick.lost.empty());
  EXPECT_TRUE(tick.status.ok());
  EXPECT_TRUE(idle->lost());
  std::optional<Envelope> last = HeadReceives();  // the heartbeat due before it noticed
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->body_case(), Envelope::kHeartbeat);
  // Winding down: neither a Register nor a give-up, however long.
  EXPECT_TRUE(idle->Poll(kT0 + absl::Hours(1), HeadSession::Mode::kIdle).status.ok());
  EXPECT_TRUE(HeadGetsNothing());
}

TEST_F(HeadSessionTest, FirstRegisterUnansweredIsGivenUpOn) {
  auto session = MakeSession(SessionOptions());
  ASSERT_TRUE(session->Connect(kT0).ok());
  EXPECT_TRUE(session->Poll(kT0 + absl::Seconds(30), HeadSession::Mode::kWait).status.ok());
  EXPECT_TRUE(session->Poll(kT0 + absl::Hours(1), HeadSession::Mode::kIdle).status.ok());
  const HeadSession::Tick tick = session->Poll(kT0 + absl::Seconds(31), HeadSession::Mode::kWait);
  EXPECT_TRUE(absl::IsDeadlineExceeded(tick.status));
  EXPECT_EQ(tick.status.message(),
            "no answer from the head at " + endpoint_ +
                " for 30s (if the head runs with --keys, give this agent --keys too)");

  // Once welcomed, a Register the head forgot never times out (the head answers it).
  Welcome(*session);
  session->Register(kT0 + absl::Seconds(32));
  EXPECT_EQ(session->state(), HeadSession::State::kRegistering);
  EXPECT_TRUE(session->Poll(kT0 + absl::Hours(1), HeadSession::Mode::kWait).status.ok());
}

TEST_F(HeadSessionTest, ClassifiesRefusals) {
  auto session = MakeSession(SessionOptions());
  Refused refused;
  refused.set_reason(kRefusedRegisterFirst);
  refused.set_session("s2");
  // Before any Welcome: the head simply does not know this peer.
  EXPECT_EQ(session->Classify(refused), HeadSession::Refusal::kUnknownToHead);
  Welcome(*session);
  EXPECT_EQ(session->Classify(refused), HeadSession::Refusal::kHeadRestarted);
  refused.set_session("s1");
  EXPECT_EQ(session->Classify(refused), HeadSession::Refusal::kUnknownToHead);
  refused.set_reason("protocol version 1, this head speaks 2");
  EXPECT_EQ(session->Classify(refused), HeadSession::Refusal::kOther);
}

TEST_F(HeadSessionTest, BadKeyFolderFailsToConnect) {
  HeadSession::Options options = SessionOptions();
  options.keys_dir = dir_ + "/no-such-keys";
  auto session = MakeSession(options);
  EXPECT_FALSE(session->Connect(kT0).ok());
}

}  // namespace
}  // namespace comm
}  // namespace tunefleet
