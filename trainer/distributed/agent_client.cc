#include "trainer/distributed/agent_client.h"

#include <unistd.h>

#include <cstdlib>
#include <optional>

#include <zmq.hpp>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "comm/codec.h"
#include "comm/proto/messages.pb.h"
#include "comm/zmq_channel.h"
#include "common/logging.h"

namespace tunefleet {
namespace trainer {

struct AgentClient::Impl {
  Impl() : context_(1) {}
  absl::Status Send(int64_t step, int64_t samples, const std::map<std::string, double>& metrics,
                    bool final);
  // Waits for the Decision on `step` (or any STOP); nullopt after the timeout.
  std::optional<comm::Decision::Action> AwaitDecision(int64_t step);

  zmq::context_t context_;
  std::unique_ptr<zmq::socket_t> socket_;
  uint64_t run_id_ = 0;
  int64_t trial_ = -1;
  int rank_ = 0;
  absl::Duration decision_timeout_ = absl::Seconds(60);
  bool timeout_logged_ = false;
};

AgentClient::AgentClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
  trial_ = impl_->trial_;
}

AgentClient::~AgentClient() = default;

absl::StatusOr<std::unique_ptr<AgentClient>> AgentClient::FromEnvironment() {
  const char* endpoint = std::getenv("TUNEFLEET_AGENT_ENDPOINT");
  if (endpoint == nullptr || *endpoint == '\0') return std::unique_ptr<AgentClient>();
  auto client = std::make_unique<Impl>();
  auto read = [](const char* name, auto* out) {
    const char* v = std::getenv(name);
    return v != nullptr && absl::SimpleAtoi(v, out);
  };
  if (!read("TUNEFLEET_RUN_ID", &client->run_id_) || !read("TUNEFLEET_TRIAL", &client->trial_)) {
    return absl::InvalidArgumentError(
        "TUNEFLEET_AGENT_ENDPOINT is set but TUNEFLEET_RUN_ID or TUNEFLEET_TRIAL is missing");
  }
  read("RANK", &client->rank_);
  int64_t timeout_ms = 0;
  if (read("TUNEFLEET_DECISION_TIMEOUT_MS", &timeout_ms) && timeout_ms > 0) {
    client->decision_timeout_ = absl::Milliseconds(timeout_ms);
  }
  try {
    client->socket_ = std::make_unique<zmq::socket_t>(client->context_, zmq::socket_type::dealer);
    comm::ConfigureSocket(*client->socket_, /*router=*/false);
    client->socket_->connect(endpoint);
  } catch (const zmq::error_t& e) {
    return absl::UnavailableError(
        absl::StrCat("cannot reach the agent at ", endpoint, ": ", e.what()));
  }
  comm::Envelope hello;
  comm::Register* r = hello.mutable_register_();
  r->set_role(comm::TRAINER);
  r->set_run_id(client->run_id_);
  r->set_rank(client->rank_);
  r->set_pid(::getpid());
  absl::Status s = comm::Send(*client->socket_, hello);
  if (!s.ok()) return s;
  return std::unique_ptr<AgentClient>(new AgentClient(std::move(client)));
}

absl::Status AgentClient::Impl::Send(int64_t step, int64_t samples,
                                     const std::map<std::string, double>& metrics, bool final) {
  comm::Envelope envelope;
  comm::Report* report = envelope.mutable_report();
  report->set_run_id(run_id_);
  report->set_trial(trial_);
  report->set_rank(rank_);
  report->set_step(step);
  report->set_samples(samples);
  report->set_final(final);
  for (const auto& [k, v] : metrics) (*report->mutable_metrics())[k] = v;
  return comm::Send(*socket_, envelope);
}

std::optional<comm::Decision::Action> AgentClient::Impl::AwaitDecision(int64_t step) {
  const absl::Time deadline = absl::Now() + decision_timeout_;
  while (true) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) break;
    zmq::pollitem_t item{static_cast<void*>(*socket_), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::milliseconds(absl::ToInt64Milliseconds(left) + 1));
    while (auto received = comm::TryReceive(*socket_, /*router=*/false)) {
      if (!received->envelope.ok()) continue;
      const comm::Envelope& e = *received->envelope;
      if (e.body_case() != comm::Envelope::kDecision) continue;
      if (e.decision().action() == comm::Decision::STOP) return comm::Decision::STOP;
      if (e.decision().step() == step) return comm::Decision::CONTINUE;
      // An older step's CONTINUE: keep waiting.
    }
  }
  if (!timeout_logged_) {
    TF_LOG(WARNING) << "no decision within " << absl::FormatDuration(decision_timeout_)
                    << " of reporting step " << step << "; continuing";
    timeout_logged_ = true;
  }
  return std::nullopt;
}

absl::StatusOr<bool> AgentClient::Report(int64_t step, int64_t samples,
                                         const std::map<std::string, double>& metrics) {
  absl::Status sent = impl_->Send(step, samples, metrics, /*final=*/false);
  if (!sent.ok()) return sent;
  return impl_->AwaitDecision(step) == comm::Decision::STOP;
}

absl::Status AgentClient::ReportFinal(int64_t step, int64_t samples,
                                      const std::map<std::string, double>& metrics) {
  absl::Status sent = impl_->Send(step, samples, metrics, /*final=*/true);
  if (!sent.ok()) return sent;
  // hpo acknowledges the final value with a Decision; waiting for it means the value reached
  // hpo before this process exits (and before the agent reports the exit).
  impl_->AwaitDecision(step);
  return absl::OkStatus();
}

}  // namespace trainer
}  // namespace tunefleet
