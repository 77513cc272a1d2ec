// A fake trainer for the agent's tests: `fake_trainer train ARGS` runs one fake trial as a fresh
// rank would; `fake_trainer worker` is a warm worker speaking the real protocol (Register WORKER,
// RunTrial, TrialDone; launcher/agent/warm_workers.h). A trial's arguments after `train`:
//   exit=N     end with exit code N (after "error: boom" on stderr when N != 0)
//   report=1   register as a TRAINER on TUNEFLEET_AGENT_ENDPOINT, send one final Report and
//              wait (up to 5 s) for its Decision
//   sleep_ms=N wait that long first
//   die=1      SIGKILL itself mid-trial (the whole worker, when warm)
// Each trial writes "fake trial T run R pid P config C" to its log (stdout).
// Worker env: TUNEFLEET_FAKE_NO_REGISTER=1 makes it never register (sleeps).
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "absl/strings/numbers.h"
#include "comm/proto/messages.pb.h"
#include "comm/zmq_channel.h"

namespace {

using tunefleet::comm::Envelope;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

zmq::socket_t Connect(zmq::context_t& context) {
  zmq::socket_t socket(context, zmq::socket_type::dealer);
  tunefleet::comm::ConfigureSocket(socket, /*router=*/false);
  socket.set(zmq::sockopt::linger, 2000);  // a retiring worker's TrialDone must get out
  socket.connect(Env("TUNEFLEET_AGENT_ENDPOINT"));
  return socket;
}

int RunTrial(zmq::context_t& context, const std::vector<std::string>& argv) {
  std::map<std::string, std::string> args;
  std::string config;
  for (size_t i = 1; i < argv.size(); ++i) {
    if (argv[i] == "--config" && i + 1 < argv.size()) {
      config = argv[++i];
    } else if (size_t eq = argv[i].find('='); eq != std::string::npos) {
      args[argv[i].substr(0, eq)] = argv[i].substr(eq + 1);
    }
  }
  std::cout << "fake trial " << Env("TUNEFLEET_TRIAL") << " run " << Env("TUNEFLEET_RUN_ID")
            << " pid " << ::getpid() << " config " << config << std::endl;
  int sleep_ms = 0, exit_code = 0;
  (void)absl::SimpleAtoi(args["sleep_ms"], &sleep_ms);
  (void)absl::SimpleAtoi(args["exit"], &exit_code);
  std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
  if (args["die"] == "1") ::kill(::getpid(), SIGKILL);
  if (args["report"] == "1") {
    uint64_t run_id = 0;
    int64_t trial = 0;
    (void)absl::SimpleAtoi(Env("TUNEFLEET_RUN_ID"), &run_id);
    (void)absl::SimpleAtoi(Env("TUNEFLEET_TRIAL"), &trial);
    zmq::socket_t socket = Connect(context);
    Envelope reg;
    reg.mutable_register_()->set_role(tunefleet::comm::TRAINER);
    reg.mutable_register_()->set_run_id(run_id);
    reg.mutable_register_()->set_rank(0);
    reg.mutable_register_()->set_pid(::getpid());
    (void)tunefleet::comm::Send(socket, reg);
    Envelope report;
    report.mutable_report()->set_run_id(run_id);
    report.mutable_report()->set_trial(trial);
    report.mutable_report()->set_step(1);
    (*report.mutable_report()->mutable_metrics())["loss"] = 0.5;
    report.mutable_report()->set_final(true);
    (void)tunefleet::comm::Send(socket, report);
    // As the real AgentClient: the final value is acknowledged (a Decision) before the end.
    bool answered = false;
    for (int i = 0; i < 100 && !answered; ++i) {
      zmq::pollitem_t item = {static_cast<void*>(socket), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, std::chrono::milliseconds(50));
      while (auto received = tunefleet::comm::TryReceive(socket, false)) {
        answered = answered || (received->envelope.ok() && received->envelope->has_decision());
      }
    }
    std::cout << (answered ? "decision received" : "no decision") << std::endl;
  }
  if (exit_code != 0) std::cerr << "error: boom (exit " << exit_code << ")" << std::endl;
  return exit_code;
}

int Worker() {
  if (Env("TUNEFLEET_FAKE_NO_REGISTER") == "1") {
    std::this_thread::sleep_for(std::chrono::hours(1));
    return 0;
  }
  zmq::context_t context(1);
  zmq::socket_t socket = Connect(context);
  int slot = 0, max_trials = 16;
  (void)absl::SimpleAtoi(Env("TUNEFLEET_WORKER_SLOT"), &slot);
  (void)absl::SimpleAtoi(Env("TUNEFLEET_WORKER_MAX_TRIALS"), &max_trials);
  Envelope reg;
  reg.mutable_register_()->set_role(tunefleet::comm::WORKER);
  reg.mutable_register_()->set_pid(::getpid());
  reg.mutable_register_()->set_slot(slot);
  if (!tunefleet::comm::Send(socket, reg).ok()) return 1;
  std::cerr << "fake worker " << ::getpid() << " registered for slot " << slot << std::endl;
  for (int done = 0;;) {
    zmq::pollitem_t item = {static_cast<void*>(socket), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::milliseconds(100));
    std::optional<tunefleet::comm::Received> received = tunefleet::comm::TryReceive(socket, false);
    if (!received.has_value() || !received->envelope.ok() || !received->envelope->has_run_trial()) {
      continue;
    }
    const tunefleet::comm::RunTrial& rt = received->envelope->run_trial();
    for (const auto& [k, v] : rt.env()) ::setenv(k.c_str(), v.c_str(), 1);
    const int saved_out = ::dup(1), saved_err = ::dup(2);
    const int log = ::open(rt.log_path().c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    ::dup2(log, 1);
    ::dup2(log, 2);
    const int exit_code =
        RunTrial(context, std::vector<std::string>(rt.argv().begin(), rt.argv().end()));
    std::cout.flush();
    ::dup2(saved_out, 1);
    ::dup2(saved_err, 2);
    ::close(saved_out);
    ::close(saved_err);
    ::close(log);
    for (const auto& [k, v] : rt.env()) ::unsetenv(k.c_str());
    ++done;
    Envelope reply;
    tunefleet::comm::TrialDone* td = reply.mutable_trial_done();
    td->set_run_id(rt.run_id());
    td->set_exit_code(exit_code);
    td->set_retiring(exit_code != 0 || done >= max_trials);
    if (exit_code != 0) td->set_stderr_tail("error: boom (from TrialDone)\n");
    (void)tunefleet::comm::Send(socket, reply);
    if (td->retiring()) return 0;
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "worker") return Worker();
  if (!args.empty() && args[0] == "train") {
    zmq::context_t context(1);
    return RunTrial(context, args);
  }
  std::cerr << "usage: fake_trainer worker | train ARGS" << std::endl;
  return 2;
}
