// trainer/data/batch_plan.h on real data: STS-B's 5,749 training pairs tokenized with the uncased
// vocabulary (max_len 128), 8 epochs, the default CUDA-graph buckets. The work a run pads to (the
// tokens of every rank's padded batches) should grow little with the number of ranks: each rank
// pads a step's batch to the global batch's longest text, so a poorly grouped global batch of
// 4 x 128 pads hundreds of short pairs to the longest. Under transformers' megabatch rule alone
// (n / (4 x global batch), here 2 batches) 4 ranks of 128 padded 78% more than one; with the
// floor of 8 batches, 27% (printed by this test).
#include <cstdio>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "trainer/data/batch_plan.h"
#include "trainer/data/datasets.h"
#include "trainer/data/task_data.h"
#include "trainer/data/wordpiece_tokenizer.h"

namespace tunefleet {
namespace trainer {
namespace {

const ExampleLengths& StsbLengths() {
  static const ExampleLengths* lengths = [] {
    auto tokenizer = WordPieceTokenizer::FromVocabFile("data/bert-uncased-vocab/vocab.txt");
    EXPECT_TRUE(tokenizer.ok()) << tokenizer.status();
    auto examples = ReadStsb("data/stsbenchmark/sts-train.csv");
    EXPECT_TRUE(examples.ok()) << examples.status();
    auto data = TaskData::Make(DataKind{"sts", RowTarget::kScore}, *examples, "stsb", *tokenizer,
                               128, "sts-train");
    EXPECT_TRUE(data.ok()) << data.status();
    return new ExampleLengths(data->Lengths());
  }();
  return *lengths;
}

// Tokens of every rank's padded batches over 8 epochs.
int64_t PaddedTokens(int world, int64_t batch, bool group) {
  BatchPlanOptions o;
  o.batch_size = batch;
  o.world = world;
  o.group_by_length = group;
  o.pad_multiple = 8;
  o.buckets = GraphBuckets(128, 8);
  int64_t tokens = 0;
  for (int64_t epoch = 0; epoch < 8; ++epoch) {
    for (int rank = 0; rank < world; ++rank) {
      o.rank = rank;
      const EpochPlan plan = PlanEpoch(StsbLengths(), epoch, o);
      for (size_t k = 0; k < plan.pads.size(); ++k) {
        const int64_t rows =
            std::min<int64_t>(batch, static_cast<int64_t>(plan.order.size()) - k * batch);
        tokens += rows * (plan.pads[k].first + plan.pads[k].second);
      }
    }
  }
  return tokens;
}

TEST(BatchPlanStsbTest, MoreRanksPadLittleMore) {
  ASSERT_EQ(StsbLengths().size(), 5749);
  int64_t real = 0;
  for (int64_t i = 0; i < StsbLengths().size(); ++i) {
    real += StsbLengths().first[i] + StsbLengths().second[i];
  }
  for (int64_t batch : {32, 128}) {
    const double one = static_cast<double>(PaddedTokens(1, batch, true));
    for (int world : {2, 4}) {
      const double many = static_cast<double>(PaddedTokens(world, batch, true));
      std::printf(
          "batch %lld: %d ranks pad %.2f M tokens, one rank %.2f M (%+.0f%%); real %.2f M\n",
          static_cast<long long>(batch), world, many / 1e6, one / 1e6, 100 * (many / one - 1),
          8 * real / 1e6);
      EXPECT_LT(many, one * 1.35) << "batch " << batch << ", " << world << " ranks";
    }
    // Grouping pads far less than shuffled batches do.
    EXPECT_LT(one, 0.6 * static_cast<double>(PaddedTokens(1, batch, false))) << "batch " << batch;
  }
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
