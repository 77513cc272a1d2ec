#include "comm/head_session.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "comm/codec.h"
#include "comm/curve_auth.h"
#include "common/logging.h"

namespace tunefleet {
namespace comm {

HeadSession::HeadSession(zmq::context_t& context, Options options,
                         std::function<Envelope()> make_register)
    : context_(context),
      options_(std::move(options)),
      make_register_(std::move(make_register)),
      liveness_(kDefaultHeartbeatInterval, absl::InfinitePast()) {}

HeadSession::~HeadSession() = default;

absl::Status HeadSession::Connect(absl::Time now) {
  try {
    auto socket = std::make_unique<zmq::socket_t>(context_, zmq::socket_type::dealer);
    ConfigureSocket(*socket, /*router=*/false);
    if (!options_.keys_dir.empty()) {
      absl::StatusOr<ClientKeys> keys = LoadClientKeys(options_.keys_dir);
      if (!keys.ok()) return keys.status();
      MakeCurveClient(*socket, *keys);
    }
    socket->connect(options_.head);
    if (socket_ == nullptr) liveness_ = Liveness(kDefaultHeartbeatInterval, now);
    socket_ = std::move(socket);  // the old one closes without lingering (ConfigureSocket)
  } catch (const zmq::error_t& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot connect to head ", options_.head, ": ", e.what()));
  }
  Register(now);
  return absl::OkStatus();
}

void HeadSession::Register(absl::Time now) {
  Envelope envelope = make_register_();
  envelope.mutable_register_()->set_previous_session(session_);
  Send(envelope, now);
  registered_at_ = now;
  if (state_ != State::kLost) state_ = State::kRegistering;
}

void HeadSession::Send(const Envelope& envelope, absl::Time now) {
  if (socket_ == nullptr) return;
  absl::Status s = comm::Send(*socket_, envelope);
  if (!s.ok()) {
    TF_LOG(WARNING) << "cannot send " << BodyName(envelope) << " to the head: " << s.message();
    return;
  }
  liveness_.Sent(now);
}

std::optional<Received> HeadSession::Receive(absl::Time now) {
  if (socket_ == nullptr) return std::nullopt;
  std::optional<Received> received = TryReceive(*socket_, /*router=*/false);
  if (received.has_value()) liveness_.Heard(now);
  return received;
}

HeadSession::Welcomed HeadSession::OnWelcome(const Welcome& welcome, absl::Time now) {
  const uint32_t ms = welcome.heartbeat_interval_ms();
  liveness_ = Liveness(ms > 0 ? absl::Milliseconds(ms) : kDefaultHeartbeatInterval, now);
  Welcomed welcomed;
  welcomed.first = session_.empty();
  welcomed.was_lost = state_ == State::kLost;
  welcomed.restarted = welcome.session() != session_;
  welcomed.lost_at = lost_at_;
  session_ = welcome.session();
  state_ = State::kWelcomed;
  return welcomed;
}

HeadSession::Refusal HeadSession::Classify(const Refused& refused) const {
  if (refused.reason() != kRefusedRegisterFirst) return Refusal::kOther;
  if (!session_.empty() && refused.session() != session_) return Refusal::kHeadRestarted;
  return Refusal::kUnknownToHead;
}

bool HeadSession::Lose(absl::Time now) {
  const bool first = state_ != State::kLost;
  if (first) lost_at_ = now;
  state_ = State::kLost;
  return first;
}

HeadSession::Tick HeadSession::Poll(absl::Time now, Mode mode) {
  Tick tick;
  if (welcomed() && liveness_.HeartbeatDue(now)) {
    Envelope heartbeat;
    heartbeat.mutable_heartbeat();
    Send(heartbeat, now);
  }
  if (mode != Mode::kIdle && !welcomed() && session_.empty() &&
      now - registered_at_ > options_.register_timeout) {
    tick.status = absl::DeadlineExceededError(absl::StrCat(
        "no answer from the head at ", options_.head, " for ",
        absl::FormatDuration(options_.register_timeout),
        options_.keys_dir.empty()
            ? absl::StrCat(" (if the head runs with --keys, give ", options_.who, " --keys too)")
            : absl::StrCat(" (is ", options_.who,
                           "'s client key in the head's authorized_keys?)")));
    return tick;
  }
  if (welcomed() && !liveness_.Alive(now)) {
    tick.lost = absl::StrCat("lost the head at ", options_.head, " (no heartbeat for ",
                             absl::FormatDuration(liveness_.interval() * kDefaultLiveness), ")");
    if (mode == Mode::kFailFast) {
      tick.status = absl::UnavailableError(tick.lost);
      return tick;
    }
    Lose(now);
    registered_at_ = absl::InfinitePast();  // register again at once
  }
  if (mode != Mode::kIdle && lost()) {
    if (now - lost_at_ > options_.head_grace) {
      tick.status = absl::UnavailableError(absl::StrCat("the head at ", options_.head,
                                                        " did not come back within ",
                                                        absl::FormatDuration(options_.head_grace)));
    } else if (now - registered_at_ >= options_.reregister_every) {
      tick.status = Connect(now);
    }
  }
  return tick;
}

}  // namespace comm
}  // namespace tunefleet
