// train.strategy zero1 against ddp, on 2 forked Gloo ranks training bert-tiny-random on STS-B
// (fp32, dropout 0, file order, 2 micro-batches of 8 a step, clipping, warm-up and a linear
// schedule):
//   - zero1 logs ddp's losses, gradient norms and evaluations within 1e-5 relative, and ends
//     with each rank holding about half of the AdamW state ddp holds;
//   - a checkpoint written under zero1 resumes under ddp, and one written under ddp resumes under
//     zero1: interrupted after step 9 (its last checkpoint at step 6's evaluation) and resumed
//     under the other strategy, each run ends with the uninterrupted ddp run's lines.
#include <cmath>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/test_util/forked_ranks.h"
#include "tests/trainer/testing/trainer_test_util.h"
#include "trainer/train/train_loop.h"

namespace tunefleet {
namespace trainer {
namespace {

using Json = nlohmann::json;

TrainerConfig Config(const std::string& name, const std::string& strategy) {
  static const std::string train =
      FirstLines("data/stsbenchmark/sts-train.csv", 320, "zero1-sts-train-320.csv");
  static const std::string dev =
      FirstLines("data/stsbenchmark/sts-dev.csv", 100, "zero1-sts-dev-100.csv");
  TrainerConfig c = TinyStsConfig(train, dev);
  c.train.epochs = 0;
  c.train.max_steps = 16;
  c.train.batch_size = 8;  // x 2 micro-batches x 2 ranks
  c.train.warmup_ratio = 0.1;
  c.train.max_grad_norm = 1.0;
  c.train.eval_every_steps = 6;
  c.train.log_every_steps = 1;
  c.train.strategy = strategy;
  c.output.dir = FreshTestDir("zero1-" + name);
  c.output.save = "none";
  c.output.checkpoint = true;
  c.output.checkpoint_every_s = 0;  // a checkpoint at every evaluation
  return c;
}

// Trains `c` on 2 ranks (resuming, or stopping after `interrupt_after` steps as a killed run
// would); each rank's exit code. Rank 0 writes its summary's optimizer figures to
// OUTPUT_DIR/optimizer.json.
std::vector<int> Train2(const TrainerConfig& c, bool resume = false, int64_t interrupt_after = 0) {
  return RunForkedRanks(2, [&](comm::ProcessGroup& g) {
    torch::set_num_threads(1);
    TrainOptions o;
    o.group = &g;
    o.quiet = true;
    o.resume = resume;
    o.interrupt_after_steps = interrupt_after;
    auto summary = RunTraining(c, o);
    if (!summary.ok()) {
      std::fprintf(stderr, "rank %d: %s\n", g.rank(),
                   std::string(summary.status().message()).c_str());
      return 1;
    }
    if (g.rank() == 0) {
      WriteAll(c.output.dir + "/optimizer.json",
               Json{{"bytes", summary->optimizer_state_bytes},
                    {"unsharded", summary->optimizer_state_unsharded_bytes},
                    {"shards", summary->optimizer_shards}}
                   .dump());
    }
    return 0;
  });
}

// Every line of b's metrics.jsonl agrees with a's (same steps) within `tol` relative.
void ExpectSameLines(const std::string& a, const std::string& b, double tol) {
  const std::vector<Json> la = ReadJsonLines(a + "/metrics.jsonl");
  const std::vector<Json> lb = ReadJsonLines(b + "/metrics.jsonl");
  ASSERT_EQ(la.size(), lb.size()) << a << " vs " << b;
  ASSERT_EQ(la.size(), 16u);
  for (size_t i = 0; i < la.size(); ++i) {
    EXPECT_EQ(la[i]["step"], lb[i]["step"]);
    EXPECT_EQ(la[i]["samples"], lb[i]["samples"]);
    for (const char* key : {"train/loss", "train/grad_norm", "lr", "eval/pearson"}) {
      ASSERT_EQ(la[i].contains(key), lb[i].contains(key)) << key << " at line " << i;
      if (!la[i].contains(key)) continue;
      EXPECT_LE(RelErr(lb[i][key].get<double>(), la[i][key].get<double>()), tol)
          << key << " at step " << la[i]["step"] << ": " << la[i][key] << " vs " << lb[i][key];
    }
  }
}

TEST(Zero1Train, MatchesDdpAndHoldsHalfTheOptimizerState) {
  const TrainerConfig ddp = Config("ddp", "ddp"), zero1 = Config("zero1", "zero1");
  ASSERT_EQ(Train2(ddp), std::vector<int>(2, 0));
  ASSERT_EQ(Train2(zero1), std::vector<int>(2, 0));
  ExpectSameLines(ddp.output.dir, zero1.output.dir, 1e-5);

  const Json d = Json::parse(ReadAll(ddp.output.dir + "/optimizer.json"));
  const Json z = Json::parse(ReadAll(zero1.output.dir + "/optimizer.json"));
  EXPECT_EQ(d["shards"], 1);
  EXPECT_EQ(z["shards"], 2);
  EXPECT_EQ(d["bytes"], d["unsharded"]);
  EXPECT_EQ(z["unsharded"], d["bytes"]);
  // Half, but for the step counts (4 bytes a parameter under ddp, a bucket under zero1: 39
  // parameters here) and a float of padding a bucket.
  const double half = d["bytes"].get<double>() / 2;
  EXPECT_NEAR(z["bytes"].get<double>(), half, 39 * 4) << z.dump() << " " << d.dump();
}

TEST(Zero1Train, CheckpointsResumeAcrossStrategies) {
  const TrainerConfig straight = Config("straight", "ddp");
  ASSERT_EQ(Train2(straight), std::vector<int>(2, 0));
  for (const auto& [first, then] :
       std::vector<std::pair<std::string, std::string>>{{"zero1", "ddp"}, {"ddp", "zero1"}}) {
    SCOPED_TRACE(first + " then " + then);
    const TrainerConfig a = Config(first + "-then-" + then, first);
    ASSERT_EQ(Train2(a, false, /*interrupt_after=*/9), std::vector<int>(2, 0));
    EXPECT_EQ(ReadJsonLines(a.output.dir + "/metrics.jsonl").size(), 9u);
    TrainerConfig b = a;
    b.train.strategy = then;
    ASSERT_EQ(Train2(b, /*resume=*/true), std::vector<int>(2, 0));
    ExpectSameLines(straight.output.dir, a.output.dir, 1e-5);
  }
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
