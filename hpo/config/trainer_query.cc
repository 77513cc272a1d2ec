#include "hpo/config/trainer_query.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/binary_path.h"
#include "nlohmann/json.hpp"

extern char** environ;

namespace tunefleet {
namespace hpo {
namespace {

struct Output {
  int exit_status = 0;  // waitpid's
  std::string out, err;
};

// Runs `argv` with `env` added to this process's environment; collects stdout and stderr.
absl::StatusOr<Output> RunCollecting(const std::vector<std::string>& argv,
                                     const std::vector<std::string>& env) {
  std::vector<std::string> env_strings = env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('=') + 1);
    bool replaced = false;
    for (const std::string& mine : env) replaced |= absl::StartsWith(mine, name);
    if (!replaced) env_strings.push_back(entry);
  }
  std::vector<char*> raw_argv, raw_env;
  for (const std::string& a : argv) raw_argv.push_back(const_cast<char*>(a.c_str()));
  for (const std::string& e : env_strings) raw_env.push_back(const_cast<char*>(e.c_str()));
  raw_argv.push_back(nullptr);
  raw_env.push_back(nullptr);
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return absl::InternalError(std::strerror(errno));
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return absl::InternalError(std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  pid_t pid = -1;
  const int spawned =
      ::posix_spawn(&pid, raw_argv[0], &actions, nullptr, raw_argv.data(), raw_env.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  Output result;
  if (spawned == 0) {
    pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
    std::string* into[2] = {&result.out, &result.err};
    int open = 2;
    while (open > 0) {
      if (::poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        break;
      }
      for (int i = 0; i < 2; ++i) {
        if (fds[i].fd < 0 || fds[i].revents == 0) continue;
        char buf[65536];
        const ssize_t n = ::read(fds[i].fd, buf, sizeof(buf));
        if (n > 0) {
          into[i]->append(buf, static_cast<size_t>(n));
        } else if (n == 0 || errno != EINTR) {
          fds[i].fd = -1;
          --open;
        }
      }
    }
    while (::waitpid(pid, &result.exit_status, 0) < 0 && errno == EINTR) {
    }
  }
  ::close(out_pipe[0]);
  ::close(err_pipe[0]);
  if (spawned != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot run ", argv[0], ": ", std::strerror(spawned)));
  }
  return result;
}

}  // namespace

AskTrainer TrainerBinary(const std::string& binary) {
  return [binary](const TrainerQuery& q) -> absl::StatusOr<std::string> {
    std::string path = binary;
    if (path.empty()) {
      absl::StatusOr<std::string> found = FindSiblingBinary("trainer/trainer");
      if (!found.ok()) return absl::FailedPreconditionError(found.status().message());
      path = *found;
    }
    std::vector<std::string> argv = {path, "train", "--config", q.config, "--dry_run", "--json"};
    for (const std::string& c : q.checks) argv.push_back("--check=" + c);
    argv.insert(argv.end(), q.overrides.begin(), q.overrides.end());
    absl::StatusOr<Output> run =
        RunCollecting(argv, {absl::StrCat("WORLD_SIZE=", q.world_size)});
    if (!run.ok()) return run.status();
    const int status = run->exit_status;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return run->out;
    const std::string line = run->err.substr(0, run->err.find('\n'));
    absl::string_view message = line;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 2 &&
        absl::ConsumePrefix(&message, "trainer train: error: ")) {
      return absl::InvalidArgumentError(message);
    }
    return absl::FailedPreconditionError(absl::StrCat(
        path, " train --dry_run --json ",
        WIFEXITED(status) ? absl::StrCat("exited ", WEXITSTATUS(status))
                          : absl::StrCat("was killed by signal ", WTERMSIG(status)),
        line.empty() ? "" : ": ", line));
  };
}

absl::StatusOr<TrainerAnswer> ParseTrainerAnswer(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  auto bad = [&](const std::string& why) {
    return absl::FailedPreconditionError(
        absl::StrCat("the trainer's dry run answered ", why, ": ", text.substr(0, 200)));
  };
  if (!j.is_object()) return bad("no JSON object");
  TrainerAnswer a;
  for (auto [name, field] : {std::pair{"world_size", &a.world_size},
                             std::pair{"train_examples", &a.train_examples},
                             std::pair{"samples_per_epoch", &a.samples_per_epoch}}) {
    if (!j.contains(name) || !j[name].is_number_integer()) return bad(absl::StrCat("no ", name));
    *field = j[name].get<int64_t>();
  }
  if (j.contains("data_error") && j["data_error"].is_string()) {
    a.data_error = j["data_error"].get<std::string>();
  }
  if (!j.contains("keys") || !j["keys"].is_object()) return bad("no keys");
  for (const auto& [key, value] : j["keys"].items()) {
    a.keys[key] = value.is_string() ? value.get<std::string>() : value.dump();
  }
  if (j.contains("checks") && j["checks"].is_array()) {
    for (const nlohmann::json& c : j["checks"]) {
      if (!c.is_object() || !c.contains("override") || !c["override"].is_string() ||
          !c.contains("error") || !c["error"].is_string()) {
        return bad("a malformed check");
      }
      a.checks.emplace_back(c["override"].get<std::string>(), c["error"].get<std::string>());
    }
  }
  return a;
}

absl::StatusOr<TrainerAnswer> QueryTrainer(const AskTrainer& ask, const TrainerQuery& query) {
  absl::StatusOr<std::string> json = ask(query);
  if (!json.ok()) return json.status();
  absl::StatusOr<TrainerAnswer> answer = ParseTrainerAnswer(*json);
  if (answer.ok() && answer->checks.size() != query.checks.size()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the trainer's dry run answered ", answer->checks.size(), " checks of ",
                     query.checks.size()));
  }
  return answer;
}

}  // namespace hpo
}  // namespace tunefleet
