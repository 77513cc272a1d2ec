#include "bench/optuna_policy.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace tunefleet {
namespace bench {
namespace {

using Json = nlohmann::json;

// The external value of an Optuna param: the choice's index for string choices.
double FromOptuna(const hpo::Distribution& d, const Json& v) {
  if (v.is_string()) {
    for (size_t i = 0; i < d.labels.size(); ++i) {
      if (d.labels[i] == v.get<std::string>()) return static_cast<double>(i);
    }
    return NAN;
  }
  return v.get<double>();
}

}  // namespace

absl::StatusOr<std::unique_ptr<OptunaPolicy>> OptunaPolicy::Launch(const Options& o) {
  int to_child[2], from_child[2];
  if (::pipe2(to_child, O_CLOEXEC) != 0 || ::pipe2(from_child, O_CLOEXEC) != 0) {
    return absl::InternalError("cannot make pipes for Optuna");
  }
  const pid_t pid = ::fork();
  if (pid < 0) return absl::InternalError("cannot fork Optuna's process");
  if (pid == 0) {
    ::dup2(to_child[0], 0);
    ::dup2(from_child[1], 1);
    ::close(to_child[0]);
    ::close(to_child[1]);
    ::close(from_child[0]);
    ::close(from_child[1]);
    ::execl(o.python.c_str(), o.python.c_str(), o.script.c_str(), static_cast<char*>(nullptr));
    std::_Exit(127);
  }
  ::close(to_child[0]);
  ::close(from_child[1]);
  std::unique_ptr<OptunaPolicy> p(new OptunaPolicy());
  p->pid_ = pid;
  p->to_ = ::fdopen(to_child[1], "w");
  p->from_ = ::fdopen(from_child[0], "r");
  p->space_ = o.space;
  Json space = Json::object();
  for (const auto& [name, d] : o.space) space[name] = d.ToOptunaJson();
  Json study = {{"op", "study"},
                {"name", o.study_name},
                {"maximize", o.maximize},
                {"sampler", o.sampler},
                {"seed", o.seed},
                {"tpe", Json::parse(o.tpe_json)},
                {"pruner", Json::parse(o.pruner_json)},
                {"space", space}};
  RETURN_IF_ERROR(p->Call(study.dump()).status());
  return p;
}

OptunaPolicy::~OptunaPolicy() {
  if (to_ != nullptr) std::fclose(to_);
  if (from_ != nullptr) std::fclose(from_);
  if (pid_ > 0) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, &status, 0);
    }
  }
}

absl::StatusOr<std::string> OptunaPolicy::Call(const std::string& line) {
  if (std::fputs((line + "\n").c_str(), to_) < 0 || std::fflush(to_) != 0) {
    return absl::UnavailableError("Optuna's process is gone (is optuna 3.1 installed?)");
  }
  std::string answer;
  char buf[4096];
  while (std::fgets(buf, sizeof(buf), from_) != nullptr) {
    answer += buf;
    if (!answer.empty() && answer.back() == '\n') return answer;
  }
  return absl::UnavailableError(
      absl::StrCat("Optuna's process ended without answering ", line.substr(0, 80)));
}

absl::StatusOr<std::optional<Policy::Started>> OptunaPolicy::Start() {
  ASSIGN_OR_RETURN(std::string answer, Call(R"({"op": "ask"})"));
  const Json j = Json::parse(answer);
  Started s;
  s.trial = j.at("trial").get<int64_t>();
  for (const auto& [name, value] : j.at("params").items()) {
    auto d = space_.find(name);
    if (d == space_.end()) return absl::InternalError("Optuna answered an unknown param " + name);
    s.params[name] = FromOptuna(d->second, value);
  }
  return std::optional<Started>(std::move(s));
}

absl::StatusOr<bool> OptunaPolicy::Report(int64_t trial, int64_t samples, double value,
                                          bool final) {
  const Json report = {
      {"op", "report"}, {"trial", trial}, {"step", samples}, {"value", value}, {"final", final}};
  ASSIGN_OR_RETURN(std::string answer, Call(report.dump()));
  return Json::parse(answer).at("prune").get<bool>();
}

absl::Status OptunaPolicy::End(int64_t trial, bool completed) {
  const Json tell = {{"op", "tell"}, {"trial", trial}, {"completed", completed}};
  return Call(tell.dump()).status();
}

}  // namespace bench
}  // namespace tunefleet
