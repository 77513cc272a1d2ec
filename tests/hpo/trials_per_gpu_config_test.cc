// Several trials per GPU in the sweep YAML (issue 36): resources.gpus_per_trial 1/N and
// resources.trials_per_gpu N mean the same, one rank a trial; other fractions, disagreeing
// values and sharing with several ranks are errors naming the file, line and key. hpo sends
// each shared trial the trainer's memory estimate (TrialMemoryMib).
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hpo/config/sweep_config.h"
#include "hpo/config/sweep_preflight.h"
#include "tests/hpo/trainer_in_process.h"

namespace tunefleet {
namespace hpo {
namespace {

std::string Sweep(const std::string& resources,
                  const std::string& trainer = "trainer: {synthetic: {steps: 4, memory_mib: 1500}}",
                  const std::string& batch_sizes = "[32]") {
  const std::string path = ::testing::TempDir() + "/tpg_sweep.yaml";
  std::ofstream(path) << "name: t\nmetric: {name: eval/spearman, goal: maximize}\n"
                      << trainer << "\n"
                      << resources << "\nparameters:\n  lr: {values: [1.0e-4]}\n"
                      << "  batch_size: {values: " << batch_sizes << "}\nsearch: {method: grid}\n";
  return path;
}

TEST(TrialsPerGpuConfigTest, AFractionOfAGpuIsOneRankSharing) {
  for (const auto& [text, share] : std::vector<std::pair<std::string, int64_t>>{
           {"resources: {gpus_per_trial: 0.5}", 2},
           {"resources: {gpus_per_trial: 0.25}", 4},
           {"resources: {trials_per_gpu: 8}", 8},
           {"resources: {gpus_per_trial: 0.25, trials_per_gpu: 4}", 4},
           {"resources: {gpus_per_trial: 1}", 1},
           {"resources: {gpus_per_trial: 2}", 1}}) {
    absl::StatusOr<SweepConfig> c = LoadSweepConfigInProcess(Sweep(text));
    ASSERT_TRUE(c.ok()) << text << ": " << c.status();
    EXPECT_EQ(c->trials_per_gpu, share) << text;
    EXPECT_EQ(c->gpus_per_trial, text == "resources: {gpus_per_trial: 2}" ? 2 : 1) << text;
  }
  absl::StatusOr<SweepConfig> c = LoadSweepConfigInProcess(Sweep("resources: {gpus_per_trial: 1}"),
                                                           {"resources.trials_per_gpu=4"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->trials_per_gpu, 4);
}

TEST(TrialsPerGpuConfigTest, BadSharesNameTheKey) {
  for (const auto& [text, message] : std::vector<std::pair<std::string, std::string>>{
           {"resources: {gpus_per_trial: 0.3}",
            "resources.gpus_per_trial: 0.3 is not 1/N of a GPU: use 0.5, 0.25, ... or "
            "resources.trials_per_gpu: N"},
           {"resources: {gpus_per_trial: 1.5}",
            "resources.gpus_per_trial: 1.5 is neither a number of ranks nor 1/N of a GPU"},
           {"resources: {gpus_per_trial: 0.5, trials_per_gpu: 4}",
            "resources.trials_per_gpu: 4 disagrees with gpus_per_trial: 0.5 (2 trials to a GPU): "
            "give one"},
           {"resources: {gpus_per_trial: 2, trials_per_gpu: 2}",
            "resources.trials_per_gpu: trials share a GPU only with one rank each, not "
            "gpus_per_trial: 2"},
           {"resources: {trials_per_gpu: 0}", "resources.trials_per_gpu: must be >= 1, got 0"}}) {
    const std::string path = Sweep(text);
    absl::StatusOr<SweepConfig> c = LoadSweepConfigInProcess(path);
    ASSERT_FALSE(c.ok()) << "accepted: " << text;
    EXPECT_EQ(std::string(c.status().message()), path + ":4: " + message);
  }
}

TEST(TrialsPerGpuConfigTest, TheMemoryEstimateGrowsWithTheBatch) {
  absl::StatusOr<SweepConfig> synthetic =
      LoadSweepConfigInProcess(Sweep("resources: {trials_per_gpu: 4}"));
  ASSERT_TRUE(synthetic.ok()) << synthetic.status();
  EXPECT_EQ(TrialMemoryMib(*synthetic, 32), 1500);  // what the synthetic trainer declares
  const std::string trainer = "trainer: {config: configs/sbert_stsb.yaml}";  // from the root
  absl::StatusOr<SweepConfig> real =
      LoadSweepConfigInProcess(Sweep("resources: {trials_per_gpu: 4}", trainer, "[16, 128]"));
  ASSERT_TRUE(real.ok()) << real.status();
  const double small = TrialMemoryMib(*real, 16), large = TrialMemoryMib(*real, 128);
  EXPECT_GT(small, 0);
  EXPECT_GT(large, 2 * small);              // activations dominate bert-tiny's 4.4M parameters
  EXPECT_EQ(TrialMemoryMib(*real, 64), 0);  // a batch size the sweep does not search
}

// The shipped sweeps: configs/lr.yaml shares GPUs 4 ways; configs/lr5.yaml, the README's
// five-parameter example, searches warmup, weight decay and dropout with random_then_local.
TEST(TrialsPerGpuConfigTest, ShippedSweeps) {
  absl::StatusOr<SweepConfig> lr = LoadSweepConfigInProcess("configs/lr.yaml");
  ASSERT_TRUE(lr.ok()) << lr.status();
  EXPECT_EQ(lr->trials_per_gpu, 4);
  EXPECT_EQ(lr->method, "random_then_grid");
  absl::StatusOr<SweepConfig> five = LoadSweepConfigInProcess("configs/lr5.yaml");
  ASSERT_TRUE(five.ok()) << five.status();
  EXPECT_EQ(five->method, "random_then_local");
  ASSERT_EQ(five->params.size(), 3u);
  EXPECT_EQ(five->params[0].name, "train.warmup_ratio");
  EXPECT_EQ(five->params[2].name, "model.dropout");
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
