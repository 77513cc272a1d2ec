#include "hpo/config/trainer_query.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/binary_path.h"
#include "common/child_process.h"
#include "nlohmann/json.hpp"

namespace tunefleet {
namespace hpo {

AskTrainer TrainerBinary(const std::string& binary) {
  return [binary](const TrainerQuery& q) -> absl::StatusOr<std::string> {
    std::string path = binary;
    if (path.empty()) {
      absl::StatusOr<std::string> found = FindSiblingBinary("trainer/trainer");
      if (!found.ok()) return absl::FailedPreconditionError(found.status().message());
      path = *found;
    }
    ProcessSpec spec;
    spec.binary = path;
    spec.args = {"train", "--config", q.config, "--dry_run", "--json"};
    for (const std::string& c : q.checks) spec.args.push_back("--check=" + c);
    spec.args.insert(spec.args.end(), q.overrides.begin(), q.overrides.end());
    spec.env = {{"WORLD_SIZE", std::to_string(q.world_size)}};
    spec.capture_stdout = true;
    absl::StatusOr<std::unique_ptr<ChildProcess>> child = ChildProcess::Start(spec);
    if (!child.ok()) return child.status();
    (*child)->DrainUntilClosed();
    (*child)->Wait();
    if ((*child)->succeeded()) return (*child)->captured_stdout();
    const std::string err = (*child)->StderrTail();
    const std::string line = err.substr(0, err.find('\n'));
    absl::string_view message = line;
    if ((*child)->exit_code() == 2 && absl::ConsumePrefix(&message, "trainer train: error: ")) {
      return absl::InvalidArgumentError(message);
    }
    return absl::FailedPreconditionError(
        absl::StrCat(path, " train --dry_run --json ",
                     (*child)->term_signal() == 0
                         ? absl::StrCat("exited ", (*child)->exit_code())
                         : absl::StrCat("was killed by signal ", (*child)->term_signal()),
                     line.empty() ? "" : ": ", line));
  };
}

namespace {

bool IsString(const nlohmann::ordered_json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string();
}

// The dry run's "files" (a list of {key, path, kind}); false when malformed.
bool ParseFiles(const nlohmann::ordered_json& files, std::vector<TrainerFile>* out) {
  if (!files.is_array()) return false;
  for (const nlohmann::ordered_json& f : files) {
    if (!IsString(f, "key") || !IsString(f, "path") || !IsString(f, "kind")) return false;
    const std::string kind = f["kind"].get<std::string>();
    if (kind != "file" && kind != "folder") return false;
    out->push_back(
        TrainerFile{f["key"].get<std::string>(), f["path"].get<std::string>(), kind == "folder"});
  }
  return true;
}

// The dry run's "preflight" (trainer/commands/train_preflight.h); false when malformed.
bool ParsePreflight(const nlohmann::ordered_json& p, TrainerPreflight* out) {
  if (!p.is_object() || !p.contains("model")) return false;
  const nlohmann::ordered_json& m = p["model"];
  if (!IsString(m, "key") || !IsString(m, "path") || !IsString(m, "error") ||
      !m.contains("parameters") || !m["parameters"].is_number_integer()) {
    return false;
  }
  out->model_key = m["key"].get<std::string>();
  out->model_path = m["path"].get<std::string>();
  out->model_error = m["error"].get<std::string>();
  out->parameters = m["parameters"].get<int64_t>();
  if (!p.contains("models") || !p["models"].is_array()) return false;
  for (const nlohmann::ordered_json& o : p["models"]) {
    if (!IsString(o, "path") || !IsString(o, "error")) return false;
    out->other_models[o["path"].get<std::string>()] = o["error"].get<std::string>();
  }
  if (!p.contains("least_tokens") || !p["least_tokens"].is_number_integer()) return false;
  out->least_tokens = p["least_tokens"].get<int64_t>();
  if (!p.contains("memory") || !p["memory"].is_array()) return false;
  for (const nlohmann::ordered_json& b : p["memory"]) {
    if (!b.is_object() || !b.contains("batch") || !b["batch"].is_number_integer() ||
        !b.contains("least_bytes") || !b["least_bytes"].is_number() || !b.contains("bytes") ||
        !b["bytes"].is_number()) {
      return false;
    }
    out->memory[b["batch"].get<int64_t>()] =
        BatchMemory{b["least_bytes"].get<double>(), b["bytes"].get<double>()};
  }
  return true;
}

}  // namespace

absl::StatusOr<TrainerAnswer> ParseTrainerAnswer(const std::string& text) {
  const nlohmann::ordered_json j =
      nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  auto bad = [&](const std::string& why) {
    return absl::FailedPreconditionError(
        absl::StrCat("the trainer's dry run answered ", why, ": ", text.substr(0, 200)));
  };
  if (!j.is_object()) return bad("no JSON object");
  TrainerAnswer a;
  for (auto [name, field] :
       {std::pair{"world_size", &a.world_size}, std::pair{"train_examples", &a.train_examples},
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
    a.key_names.push_back(key);
  }
  if (j.contains("checks") && j["checks"].is_array()) {
    for (const nlohmann::ordered_json& c : j["checks"]) {
      if (!c.is_object() || !c.contains("override") || !c["override"].is_string() ||
          !c.contains("error") || !c["error"].is_string()) {
        return bad("a malformed check");
      }
      a.checks.emplace_back(c["override"].get<std::string>(), c["error"].get<std::string>());
    }
  }
  if (!j.contains("files") || !ParseFiles(j["files"], &a.preflight.files)) {
    return bad("no files");
  }
  if (!j.contains("preflight") || !ParsePreflight(j["preflight"], &a.preflight)) {
    return bad("no preflight");
  }
  return a;
}

absl::StatusOr<TrainerAnswer> QueryTrainer(const AskTrainer& ask, const TrainerQuery& query) {
  absl::StatusOr<std::string> json = ask(query);
  if (!json.ok()) return json.status();
  absl::StatusOr<TrainerAnswer> answer = ParseTrainerAnswer(*json);
  if (answer.ok() && answer->checks.size() != query.checks.size()) {
    return absl::FailedPreconditionError(absl::StrCat("the trainer's dry run answered ",
                                                      answer->checks.size(), " checks of ",
                                                      query.checks.size()));
  }
  return answer;
}

}  // namespace hpo
}  // namespace tunefleet
