// trainer/data/task_data.h with hard negatives: the mnrl kind takes (anchor, positive,
// negative...) rows with one TextBatch per negative column, padded like the positives; other
// kinds refuse them; lengths, tokens and text keys count every text.
#include "trainer/data/task_data.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trainer/data/wordpiece_tokenizer.h"

namespace tunefleet {
namespace trainer {
namespace {

using ::testing::HasSubstr;

const WordPieceTokenizer& Tiny() {
  static const WordPieceTokenizer* tokenizer = [] {
    auto t = WordPieceTokenizer::FromTokens(
        {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "c", "d", "e", "f", "g"}, "tiny");
    EXPECT_TRUE(t.ok()) << t.status();
    return new WordPieceTokenizer(*std::move(t));
  }();
  return *tokenizer;
}

Example Row(std::string a, std::string b, std::vector<std::string> negatives,
            int label = kNoLabel) {
  Example e{std::move(a), std::move(b)};
  e.label = label;
  e.negatives = std::move(negatives);
  return e;
}

const DataKind kMnrl{"mnrl", RowTarget::kPositivePairs};

TEST(TaskDataTest, PositivePairsWithNegatives) {
  const std::vector<Example> rows = {
      Row("a", "b c", {"d", "e f g"}), Row("a b c d", "b", {"c d e", "f"}),
      Row("a", "b", {"c", "d"}, /*label=*/0),  // not a positive pair: dropped
  };
  auto data = TaskData::Make(kMnrl, rows, "jsonl", Tiny(), 128, "triplets.jsonl");
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->size(), 2);
  EXPECT_EQ(data->num_negatives(), 2);
  // [CLS] text [SEP]: 2 + words.
  EXPECT_EQ(data->tokens(0), 3 + 4 + 3 + 5);
  const ExampleLengths lengths = data->Lengths();
  EXPECT_EQ(lengths.first, (std::vector<int64_t>{3, 6}));
  EXPECT_EQ(lengths.second, (std::vector<int64_t>{5, 5}));  // the longest of b and negatives

  // The plan's pad lengths (already multiples) for the second texts and every negative column.
  TaskBatch batch = data->Batch({1, 0}, /*pad_multiple=*/4, PadLengths{0, 12});
  EXPECT_EQ(batch.size, 2);
  EXPECT_EQ(batch.first.input_ids.sizes(), (std::vector<int64_t>{2, 8}));
  EXPECT_EQ(batch.second.input_ids.sizes(), (std::vector<int64_t>{2, 12}));
  ASSERT_EQ(batch.negatives.size(), 2u);
  EXPECT_EQ(batch.negatives[0].input_ids.sizes(), (std::vector<int64_t>{2, 12}));
  EXPECT_EQ(batch.negatives[1].input_ids.sizes(), (std::vector<int64_t>{2, 12}));
  // Row 0 of the batch is example 1: its first negative "c d e".
  EXPECT_EQ(batch.negatives[0].attention_mask[0].sum().item<int64_t>(), 5);
  EXPECT_EQ(batch.negatives[1].attention_mask[1].sum().item<int64_t>(), 5);  // "e f g"
  EXPECT_TRUE(batch.negatives[0].padded);
  // Without pad lengths each column pads to its own longest.
  TaskBatch own = data->Batch({0, 1});
  EXPECT_EQ(own.negatives[0].input_ids.size(1), 5);
  EXPECT_EQ(own.negatives[1].input_ids.size(1), 5);
  EXPECT_EQ(own.second.input_ids.size(1), 4);
  EXPECT_EQ(data->Batch({0, 1}, /*pad_multiple=*/4).negatives[0].input_ids.size(1), 8);
  TaskBatch moved = own.To(torch::kCPU);
  ASSERT_EQ(moved.negatives.size(), 2u);
  EXPECT_TRUE(moved.negatives[1].input_ids.equal(own.negatives[1].input_ids));
}

TEST(TaskDataTest, PairsHaveNoNegativeBatches) {
  auto data = TaskData::Make(kMnrl, {Row("a", "b", {}), Row("c", "d", {})}, "jsonl", Tiny(), 128,
                             "pairs.jsonl");
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->num_negatives(), 0);
  EXPECT_TRUE(data->Batch({0, 1}).negatives.empty());
  EXPECT_EQ(data->Lengths().second, (std::vector<int64_t>{3, 3}));
}

TEST(TaskDataTest, NegativesCountMustAgree) {
  auto data = TaskData::Make(kMnrl, {Row("a", "b", {"c"}), Row("a", "b", {"c"}), Row("a", "b", {})},
                             "jsonl", Tiny(), 128, "ragged.jsonl");
  ASSERT_FALSE(data.ok());
  EXPECT_EQ(data.status().message(),
            "ragged.jsonl: row 3 has 2 text columns, but row 1 has 3 (task type mnrl needs the "
            "same number of negatives on every row)");
}

TEST(TaskDataTest, OtherKindsRefuseNegatives) {
  Example pair = Row("a", "b", {}, /*label=*/1), scored = Row("a", "b", {"c"}, /*label=*/1);
  pair.score = scored.score = 3;
  for (const DataKind& kind :
       {DataKind{"sts", RowTarget::kScore}, DataKind{"nli", RowTarget::kLabel},
        DataKind{"classification", RowTarget::kLabel, /*joint_pair=*/true},
        DataKind{"mnrl", RowTarget::kPositivePairs, /*joint_pair=*/true}}) {
    auto data = TaskData::Make(kind, {pair, scored}, "stsb", Tiny(), 128, "three.csv");
    ASSERT_FALSE(data.ok()) << kind.task;
    EXPECT_EQ(data.status().message(), "three.csv: row 2 has 3 text columns; task type " +
                                           kind.task + " takes 2 (choose them with task.columns)");
  }
}

TEST(TaskDataTest, TextKeysHashTokenIds) {
  const std::vector<Example> rows = {
      Row("a b", "c", {"d"}),
      Row("A  B", "d", {"c"}),  // the same ids as "a b" (uncased, whitespace)
      Row("b a", "c", {"d"}),
  };
  auto data = TaskData::Make(kMnrl, rows, "jsonl", Tiny(), 128, "keys.jsonl");
  ASSERT_TRUE(data.ok()) << data.status();
  const std::vector<uint64_t> k0 = data->TextKeys(0), k1 = data->TextKeys(1),
                              k2 = data->TextKeys(2);
  ASSERT_EQ(k0.size(), 3u);
  EXPECT_EQ(k0[0], k1[0]);
  EXPECT_EQ(k0[1], k1[2]);  // "c" as positive and as negative
  EXPECT_EQ(k0[2], k1[1]);
  EXPECT_NE(k0[0], k2[0]);  // order matters
  EXPECT_NE(k0[1], k0[2]);
  // Pinned: FNV-1a 64 over the ids [CLS]=2 c=7 [SEP]=3 as 4-byte little-endian integers, so any
  // process on any platform agrees.
  uint64_t h = 0xcbf29ce484222325ULL;
  for (uint32_t id : {2u, 7u, 3u}) {
    for (int shift = 0; shift < 32; shift += 8) {
      h ^= (id >> shift) & 0xFF;
      h *= 0x100000001b3ULL;
    }
  }
  EXPECT_EQ(k0[1], h);
  EXPECT_EQ(k0[1], 0x46034af488c304c3ULL) << std::hex << k0[1];

  // A joint pair is one text: one key.
  auto joint = TaskData::Make(DataKind{"classification", RowTarget::kLabel, true},
                              {Row("a", "b", {}, 1)}, "jsonl", Tiny(), 128, "joint.jsonl");
  ASSERT_TRUE(joint.ok()) << joint.status();
  EXPECT_EQ(joint->TextKeys(0).size(), 1u);
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
