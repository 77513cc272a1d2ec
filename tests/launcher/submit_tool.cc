// A bare control-plane client for tests: registers with a head as a client and submits one
// trial exactly as given, bypassing hpo's checks (as a hostile or buggy client would), then
// prints how the run ended (answering every report with CONTINUE).
//
//   submit_tool --head ENDPOINT [--env K=V,...] [--log_dir DIR] [--timeout_s S] ARG...
//
// ARG... is the trainer's argv. Prints "welcome" once registered, then "exit OUTCOME: REASON";
// exit code 0 when the run ended, 3 when the head refused the client, 4 on a timeout.
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "comm/codec.h"
#include "comm/proto/messages.pb.h"
#include "comm/zmq_channel.h"

namespace {

int Main(int argc, char** argv) {
  std::string head, env, log_dir;
  int timeout_s = 30;
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--head" && i + 1 < argc) {
      head = argv[++i];
    } else if (a == "--env" && i + 1 < argc) {
      env = argv[++i];
    } else if (a == "--log_dir" && i + 1 < argc) {
      log_dir = argv[++i];
    } else if (a == "--timeout_s" && i + 1 < argc) {
      timeout_s = std::stoi(argv[++i]);
    } else {
      args.push_back(a);
    }
  }
  if (head.empty()) {
    std::cerr << "usage: submit_tool --head ENDPOINT [--env K=V,...] [--log_dir DIR] ARG...\n";
    return 2;
  }
  namespace comm = tunefleet::comm;
  zmq::context_t context(1);
  zmq::socket_t socket(context, zmq::socket_type::dealer);
  comm::ConfigureSocket(socket, /*router=*/false);
  socket.connect(head);
  comm::Envelope hello;
  hello.mutable_register_()->set_role(comm::CLIENT);
  hello.mutable_register_()->set_name("submit_tool/" + std::to_string(::getpid()));
  hello.mutable_register_()->set_pid(::getpid());
  (void)comm::Send(socket, hello);
  const absl::Time deadline = absl::Now() + absl::Seconds(timeout_s);
  absl::Time next_heartbeat = absl::Now();
  bool submitted = false;
  while (absl::Now() < deadline) {
    zmq::pollitem_t item{static_cast<void*>(socket), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::milliseconds(100));
    if (absl::Now() >= next_heartbeat) {
      comm::Envelope hb;
      hb.mutable_heartbeat();
      (void)comm::Send(socket, hb);
      next_heartbeat = absl::Now() + absl::Milliseconds(300);
    }
    while (auto received = comm::TryReceive(socket, /*router=*/false)) {
      if (!received->envelope.ok()) continue;
      const comm::Envelope& e = *received->envelope;
      if (e.body_case() == comm::Envelope::kRefused) {
        std::cout << "refused: " << e.refused().reason() << std::endl;
        return 3;
      }
      if (e.body_case() == comm::Envelope::kWelcome && !submitted) {
        std::cout << "welcome" << std::endl;
        comm::Envelope submit;
        comm::TrialSpec* spec = submit.mutable_submit()->mutable_trial();
        spec->set_trial(0);
        spec->set_sweep("submit-tool");
        spec->set_world_size(1);
        spec->set_log_dir(log_dir);
        for (const std::string& a : args) spec->add_argv(a);
        for (absl::string_view kv : absl::StrSplit(env, ',', absl::SkipEmpty())) {
          const size_t eq = kv.find('=');
          (*spec->mutable_env())[std::string(kv.substr(0, eq))] =
              eq == absl::string_view::npos ? "" : std::string(kv.substr(eq + 1));
        }
        (void)comm::Send(socket, submit);
        submitted = true;
      }
      if (e.body_case() == comm::Envelope::kReport) {  // go on, as hpo without a pruner says
        comm::Envelope decision;
        decision.mutable_decision()->set_run_id(e.report().run_id());
        decision.mutable_decision()->set_trial(e.report().trial());
        decision.mutable_decision()->set_step(e.report().step());
        decision.mutable_decision()->set_action(comm::Decision::CONTINUE);
        (void)comm::Send(socket, decision);
      }
      if (e.body_case() == comm::Envelope::kExit) {
        std::cout << "exit " << comm::Exit::Outcome_Name(e.exit().outcome()) << ": "
                  << e.exit().reason() << std::endl;
        return 0;
      }
    }
  }
  std::cout << (submitted ? "timeout waiting for the run's end" : "timeout: no welcome")
            << std::endl;
  return 4;
}

}  // namespace

int main(int argc, char** argv) { return Main(argc, argv); }
