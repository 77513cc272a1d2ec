#include "tests/trainer/testing/trainer_test_util.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>

#include "gtest/gtest.h"
#include "trainer/io/safetensors.h"

namespace tunefleet {
namespace trainer {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  EXPECT_TRUE(out.good()) << "cannot write " << path;
}

std::string FirstLines(const std::string& source, int rows, const std::string& name) {
  const std::string path = TestTempPath(name);
  std::ifstream in(source);
  std::ofstream out(path);
  std::string line;
  for (int i = 0; i < rows && std::getline(in, line); ++i) out << line << "\n";
  return path;
}

std::vector<nlohmann::json> ReadJsonLines(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

double RelErr(double got, double want) {
  return std::abs(got - want) / std::max(std::abs(want), 1e-12);
}

TrainerConfig TinyStsConfig(const std::string& train, const std::string& eval) {
  TrainerConfig c;
  c.source = "test";
  c.model.path = "data/bert-tiny-random";
  c.model.dropout = 0.0;
  c.task.type = "sts";
  c.task.train = train;
  c.task.eval = eval;
  c.task.format = "stsb";
  c.train.batch_size = 16;
  c.train.grad_accum = 2;
  c.train.lr = 1e-4;
  c.train.precision = "fp32";
  c.train.log_every_steps = 1;
  c.output.save = "none";
  return c;
}

TrainerConfig GoldenTrainerConfig(const nlohmann::json& g, const std::string& type,
                                  const std::string& data, const std::string& format,
                                  const std::string& out) {
  TrainerConfig c;
  c.source = "golden";
  c.model.path = "data/bert-tiny-random";
  c.model.pooling = "mean";
  c.model.max_seq_len = 128;
  c.model.dropout = g.at("dropout").get<double>();
  c.task.type = type;
  c.task.train = data;
  c.task.format = format;
  c.train.epochs = 0;
  c.train.max_steps = g.at("steps").get<int64_t>();
  c.train.batch_size = g.at("batch").get<int64_t>();
  c.train.lr = g.at("lr").get<double>();
  c.train.weight_decay = g.at("weight_decay").get<double>();
  c.train.warmup_ratio = 0.0;
  c.train.schedule = "constant";
  c.train.max_grad_norm = g.at("max_grad_norm").get<double>();
  c.train.precision = "fp32";
  c.train.shuffle = false;
  c.train.batch_sampler = "default";  // the goldens trained on the file's order
  c.train.log_every_steps = 1;
  c.output.dir = out;
  c.output.save = "last";
  c.output.checkpoint = false;
  return c;
}

const BertCheckpoint& TinyBertCheckpoint() {
  static const BertCheckpoint* checkpoint = [] {
    auto c = LoadBertCheckpoint("data/bert-tiny-random");
    EXPECT_TRUE(c.ok()) << c.status();
    return new BertCheckpoint(std::move(c).value());
  }();
  return *checkpoint;
}

void WriteTinyBertFolder(const std::string& dir,
                         const std::map<std::string, torch::Tensor>& tensors) {
  WriteAll(dir + "/config.json", ReadAll("data/bert-tiny-random/config.json"));
  EXPECT_TRUE(WriteSafetensors(dir + "/model.safetensors", tensors).ok());
}

}  // namespace trainer
}  // namespace tunefleet
