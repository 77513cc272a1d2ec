// The trainer's files, checked before any trial starts: the model folder (config.json,
// vocab.txt), task.train, task.eval and model.head, each one line naming the key and the path.
// The files and the model folder's check come from the trainer's dry run ("files" and
// "preflight"): here the trainer's own check of the folder (ModelFolderError), and the whole
// dry run (in-process) for a sweep.
#include "hpo/config/trainer_files.h"

#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hpo/config/trainer_query.h"
#include "tests/hpo/trainer_in_process.h"
#include "trainer/commands/train_preflight.h"

namespace tunefleet {
namespace hpo {
namespace {

using ::testing::HasSubstr;

// A config.json the trainer reads (bert-tiny's shape).
constexpr char kConfig[] = R"({"model_type": "bert", "vocab_size": 30522, "hidden_size": 128,
  "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 512, "hidden_act": "gelu",
  "max_position_embeddings": 512, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
  "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "pad_token_id": 0})";

class TrainerFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/trainer_files_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ::mkdir(dir_.c_str(), 0755);
    ::mkdir((dir_ + "/model").c_str(), 0755);
    Write(dir_ + "/model/config.json", kConfig);
    Write(dir_ + "/model/vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n");
    Write(dir_ + "/train.csv", "x\n");
    Write(dir_ + "/dev.csv", "x\n");
    Write(dir_ + "/head.safetensors", "x");
    config_["model.path"] = dir_ + "/model";
    config_["task.train"] = dir_ + "/train.csv";
    config_["task.eval"] = dir_ + "/dev.csv";
  }
  static void Write(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
  }
  // What the trainer's dry run lists for the keys of config_ (set ones only, in its order).
  TrainerPreflight Preflight() const {
    TrainerPreflight p;
    for (const char* key : {"model.path", "model.head", "task.train", "task.eval",
                            "task.eval_queries", "task.eval_corpus", "task.eval_qrels"}) {
      auto it = config_.find(key);
      if (it == config_.end() || it->second.empty()) continue;
      p.files.push_back(TrainerFile{key, it->second, std::string(key) == "model.path"});
    }
    p.model_key = "model.path";
    p.model_path = config_.at("model.path");
    p.model_error = trainer::ModelFolderError(p.model_path);
    return p;
  }
  std::string Check() { return std::string(CheckTrainerFiles(Preflight()).message()); }

  std::string dir_;
  std::map<std::string, std::string> config_;  // the trainer's resolved keys
};

TEST_F(TrainerFilesTest, AllPresentIsOk) {
  EXPECT_TRUE(CheckTrainerFiles(Preflight()).ok()) << Check();
  config_["task.eval"].clear();  // optional
  config_["model.head"] = dir_ + "/head.safetensors";
  EXPECT_TRUE(CheckTrainerFiles(Preflight()).ok()) << Check();
}

TEST_F(TrainerFilesTest, AMissingModelFolder) {
  config_["model.path"] = dir_ + "/no-model";
  EXPECT_EQ(Check(), "model.path: " + dir_ + "/no-model: no such folder");
  config_["model.path"] = dir_ + "/train.csv";
  EXPECT_EQ(Check(), "model.path: " + dir_ + "/train.csv: not a folder");
}

TEST_F(TrainerFilesTest, AModelFolderWithoutItsFiles) {
  ::unlink((dir_ + "/model/vocab.txt").c_str());
  EXPECT_EQ(Check(), "model.path: " + dir_ +
                         "/model has no tokenizer: none of tokenizer.json, "
                         "vocab.txt, sentencepiece.bpe.model");
  ::unlink((dir_ + "/model/config.json").c_str());
  EXPECT_EQ(Check(), "model.path: " + dir_ + "/model: the model folder holds no config.json");
}

TEST_F(TrainerFilesTest, ATokenizerTheTrainerCannotRead) {
  ::unlink((dir_ + "/model/tokenizer.json").c_str());  // a previous run's
  Write(dir_ + "/model/vocab.txt", "[PAD]\nhello\n");
  EXPECT_THAT(Check(),
              HasSubstr(dir_ + "/model/vocab.txt: vocab lacks the special token(s) [CLS]"));
  ::unlink((dir_ + "/model/vocab.txt").c_str());
  Write(dir_ + "/model/tokenizer.json", "{\"model\": {\"type\": \"BPE\"}}");
  EXPECT_THAT(Check(), HasSubstr(dir_ + "/model/tokenizer.json: key \"model.type\" is \"BPE\""));
  ::unlink((dir_ + "/model/tokenizer.json").c_str());
}

// What every trial would fail on is refused before the sweep.
TEST_F(TrainerFilesTest, AConfigJsonTheTrainerCannotRead) {
  Write(dir_ + "/model/config.json", "{\"hidden_size\": ");
  EXPECT_THAT(Check(),
              ::testing::StartsWith("model.path: " + dir_ + "/model/config.json: invalid JSON"));
  Write(dir_ + "/model/config.json", "{}");
  EXPECT_EQ(Check(), "model.path: " + dir_ + "/model/config.json: key \"vocab_size\" is missing");
}

TEST_F(TrainerFilesTest, MissingDataAndHead) {
  config_["task.train"] = dir_ + "/nope.csv";
  EXPECT_EQ(Check(), "task.train: " + dir_ + "/nope.csv: no such file");
  config_["task.train"] = dir_ + "/model";
  EXPECT_EQ(Check(), "task.train: " + dir_ + "/model: is a folder, not a file");
  config_["task.train"] = dir_ + "/train.csv";
  config_["task.eval"] = dir_ + "/nope-dev.csv";
  EXPECT_EQ(Check(), "task.eval: " + dir_ + "/nope-dev.csv: no such file");
  config_["task.eval"] = dir_ + "/dev.csv";
  config_["model.head"] = dir_ + "/nope.safetensors";
  EXPECT_EQ(Check(), "model.head: " + dir_ + "/nope.safetensors: no such file");
  config_["model.head"].clear();
  // Retrieval evaluation's three files, when set.
  config_["task.eval_queries"] = dir_ + "/dev.csv";
  config_["task.eval_corpus"] = dir_ + "/dev.csv";
  config_["task.eval_qrels"] = dir_ + "/nope-qrels.tsv";
  EXPECT_EQ(Check(), "task.eval_qrels: " + dir_ + "/nope-qrels.tsv: no such file");
  config_["task.eval_qrels"] = dir_ + "/dev.csv";
  EXPECT_EQ(Check(), "");
}

// Root reads every file through CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH: as root (CI), the check
// runs in a child that has given both up, so mode 0 keeps it out as it keeps out any user.
std::string CheckWithoutFileCapabilities(const std::function<std::string()>& check) {
  if (::geteuid() != 0) return check();
  int fds[2];
  if (::pipe(fds) != 0) return "pipe failed";
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2] = {};
    if (::syscall(SYS_capget, &header, data) != 0) ::_exit(1);
    for (int cap : {CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH}) {
      data[cap / 32].effective &= ~(1u << (cap % 32));
      data[cap / 32].permitted &= ~(1u << (cap % 32));
    }
    if (::syscall(SYS_capset, &header, data) != 0) ::_exit(1);
    const std::string said = check();
    const ssize_t size = static_cast<ssize_t>(said.size());
    ::_exit(::write(fds[1], said.data(), said.size()) == size ? 0 : 1);
  }
  ::close(fds[1]);
  std::string said;
  char buffer[512];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof(buffer))) > 0;) said.append(buffer, n);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!ok) return "the child could not drop capabilities";
  return said;
}

TEST_F(TrainerFilesTest, AnUnreadableFile) {
  ::chmod((dir_ + "/train.csv").c_str(), 0);
  EXPECT_THAT(CheckWithoutFileCapabilities([this] { return Check(); }),
              HasSubstr("task.train: " + dir_ + "/train.csv: not readable"));
}

TEST_F(TrainerFilesTest, RelativePathsAreTakenFromTheWorkingDirectory) {
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof(cwd)), nullptr);
  ASSERT_EQ(::chdir(dir_.c_str()), 0);
  config_["model.path"] = "model";
  config_["task.train"] = "train.csv";
  config_["task.eval"] = "dev.csv";
  EXPECT_TRUE(CheckTrainerFiles(Preflight()).ok()) << Check();
  config_["task.train"] = "missing/train.csv";
  EXPECT_EQ(Check(), "task.train: missing/train.csv: no such file");
  ASSERT_EQ(::chdir(cwd), 0);
}

// What the trainer's dry run (in-process) says of `config` with `overrides` and `checks`.
TrainerPreflight Resolved(const std::string& config, const std::vector<std::string>& overrides,
                          const std::vector<std::string>& checks = {}) {
  TrainerQuery query;
  query.config = config;
  query.overrides = overrides;
  query.checks = checks;
  absl::StatusOr<TrainerAnswer> answer = QueryTrainer(InProcessTrainer(), query);
  EXPECT_TRUE(answer.ok()) << answer.status();
  return answer.ok() ? answer->preflight : TrainerPreflight();
}

// A sweep: its trainer config as the trainer resolved it with the sweep's overrides, and
// searched values checked.
TEST_F(TrainerFilesTest, ASweepNamesItsFileAndTheTrainerConfig) {
  const std::string trainer = dir_ + "/train.yaml";
  Write(trainer, "model: {path: " + dir_ +
                     "/model}\n"
                     "task: {type: sts, train: " +
                     dir_ + "/train.csv, eval: " + dir_ +
                     "/dev.csv, "
                     "format: stsb}\n"
                     "train: {batch_size: 32}\n");
  SweepConfig sweep;
  sweep.source = "s.yaml";
  sweep.trainer.config = trainer;
  sweep.trainer.preflight = Resolved(trainer, {});
  EXPECT_TRUE(CheckSweepTrainerFiles(sweep).ok()) << CheckSweepTrainerFiles(sweep);
  sweep.trainer.preflight = Resolved(trainer, {"model.path=" + dir_ + "/missing-model"});
  EXPECT_EQ(CheckSweepTrainerFiles(sweep).message(), "s.yaml: trainer config " + trainer +
                                                         ": model.path: " + dir_ +
                                                         "/missing-model: no such folder");
  sweep.trainer.preflight = Resolved(trainer, {});
  ParamSpec p;
  p.name = "task.train";
  p.distribution = "categorical";
  p.labels = {dir_ + "/train.csv", dir_ + "/other.csv"};
  p.line = 7;
  sweep.params = {p};
  EXPECT_EQ(CheckSweepTrainerFiles(sweep).message(),
            "s.yaml:7: parameters.task.train: " + dir_ + "/other.csv: no such file");
  // A searched model folder: the trainer's check of each value it was asked about.
  ::mkdir((dir_ + "/empty-model").c_str(), 0755);
  p.name = "model.path";
  p.labels = {dir_ + "/model", dir_ + "/empty-model"};
  p.line = 8;
  sweep.params = {p};
  sweep.trainer.preflight = Resolved(trainer, {}, {"model.path=" + dir_ + "/empty-model"});
  EXPECT_EQ(CheckSweepTrainerFiles(sweep).message(),
            "s.yaml:8: parameters.model.path: " + dir_ +
                "/empty-model: the model folder holds no config.json");
  // The synthetic trainer names no files.
  sweep.trainer.synthetic = true;
  EXPECT_TRUE(CheckSweepTrainerFiles(sweep).ok());
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
