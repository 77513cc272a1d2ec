// trainer/data/task_data.h's issue-50 row kinds: a teacher's margins (kMargin, joint and apart),
// a teacher's embedding (kVector), a query's documents (kList: pairs row by row, targets padded
// with -inf), and a cross-encoder's in-batch grid (pair_grid: each anchor's positive first,
// then the other rows' candidates or a seeded draw of them, then its own negatives); and
// column_reader.h's JSONL lists that feed them.
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trainer/data/column_reader.h"
#include "trainer/data/task_data.h"
#include "trainer/data/wordpiece_tokenizer.h"

namespace tunefleet {
namespace trainer {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const WordPieceTokenizer& Tiny() {
  static const WordPieceTokenizer* tokenizer = [] {
    auto t = WordPieceTokenizer::FromTokens(
        {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "c", "d", "e", "f", "g"}, "tiny");
    EXPECT_TRUE(t.ok()) << t.status();
    auto* out = new WordPieceTokenizer(*std::move(t));
    out->set_special_template(SpecialTemplate::Bert(2, 3));
    return out;
  }();
  return *tokenizer;
}

Example Row(std::string a, std::string b, std::vector<std::string> negatives = {}) {
  Example e{std::move(a), std::move(b)};
  e.negatives = std::move(negatives);
  return e;
}

std::vector<int64_t> Ids(const torch::Tensor& row) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < row.size(0); ++i) {
    if (row[i].item<int64_t>() != 0) out.push_back(row[i].item<int64_t>());
  }
  return out;
}

std::string Write(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(RankingRowsTest, MarginsFromANumberAListOrScores) {
  const DataKind kind{"margin", RowTarget::kMargin};
  Example one = Row("a", "b", {"c"});
  one.score = -0.5;  // any real number
  Example per_negative = Row("a", "b", {"c", "d"});
  per_negative.values = {0.25, 0.75};
  Example scores = Row("a", "b", {"c", "d"});
  scores.values = {1.0, 0.25, 0.5};  // positive, then each negative: margins 0.75, 0.5
  auto data = TaskData::Make(kind, {one}, "jsonl", Tiny(), 128, "m.jsonl");
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_FLOAT_EQ(data->Batch({0}).targets[0][0].item<float>(), -0.5f);
  auto two = TaskData::Make(kind, {per_negative, scores}, "jsonl", Tiny(), 128, "m.jsonl");
  ASSERT_TRUE(two.ok()) << two.status();
  const torch::Tensor t = two->Batch({0, 1}).targets;
  EXPECT_EQ(t.sizes(), (std::vector<int64_t>{2, 2}));
  EXPECT_FLOAT_EQ(t[1][0].item<float>(), 0.75f);
  EXPECT_FLOAT_EQ(t[1][1].item<float>(), 0.5f);

  Example wrong = Row("a", "b", {"c", "d"});
  wrong.values = {1.0, 2.0, 3.0, 4.0};
  auto bad = TaskData::Make(kind, {wrong}, "jsonl", Tiny(), 128, "m.jsonl");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("m.jsonl: row 1 has 4 label values for 2 negatives; task type margin "
                        "needs a margin per negative"));
  auto no_negative = TaskData::Make(kind, {Row("a", "b")}, "jsonl", Tiny(), 128, "m.jsonl");
  EXPECT_THAT(no_negative.status().message(), HasSubstr("row 1 has no negative"));
}

TEST(RankingRowsTest, JointMarginRowsPairTheQueryWithEachText) {
  Example e = Row("a", "b c", {"d"});
  e.score = 0.5;
  auto data = TaskData::Make(DataKind{"cross_encoder_margin", RowTarget::kMargin, true}, {e},
                             "jsonl", Tiny(), 128, "m.jsonl");
  ASSERT_TRUE(data.ok()) << data.status();
  const TaskBatch b = data->Batch({0});
  EXPECT_FALSE(b.second.input_ids.defined());
  EXPECT_THAT(Ids(b.first.input_ids[0]), ElementsAre(2, 5, 3, 6, 7, 3));  // [CLS] a [SEP] b c [SEP]
  ASSERT_EQ(b.negatives.size(), 1u);
  EXPECT_THAT(Ids(b.negatives[0].input_ids[0]), ElementsAre(2, 5, 3, 8, 3));
  EXPECT_EQ(data->Lengths().first, (std::vector<int64_t>{6}));
}

TEST(RankingRowsTest, VectorTargetsMustShareTheirWidth) {
  const DataKind kind{"embedding", RowTarget::kVector};
  Example x{"a b"}, y{"c"};
  x.values = {0.5, -1.0};
  y.values = {1.0, 2.0};
  auto data = TaskData::Make(kind, {x, y}, "jsonl", Tiny(), 128, "e.jsonl");
  ASSERT_TRUE(data.ok()) << data.status();
  const TaskBatch b = data->Batch({1, 0});
  EXPECT_EQ(b.targets.sizes(), (std::vector<int64_t>{2, 2}));
  EXPECT_FLOAT_EQ(b.targets[1][1].item<float>(), -1.0f);
  EXPECT_FALSE(b.second.input_ids.defined());
  y.values = {1.0};
  auto bad = TaskData::Make(kind, {x, y}, "jsonl", Tiny(), 128, "e.jsonl");
  EXPECT_THAT(bad.status().message(), HasSubstr("e.jsonl: row 2 has 1 numbers, but row 1 has 2"));
}

TEST(RankingRowsTest, ListsBatchEveryPairRowByRow) {
  Example q1{"a"}, q2{"b c"};
  q1.docs = {"d", "e f"};
  q1.values = {1, 0};
  q2.docs = {"g"};
  q2.values = {2};
  auto data = TaskData::Make(DataKind{"cross_encoder_list", RowTarget::kList, true}, {q1, q2},
                             "jsonl", Tiny(), 128, "l.jsonl");
  ASSERT_TRUE(data.ok()) << data.status();
  const TaskBatch b = data->Batch({1, 0});
  EXPECT_EQ(b.group_sizes, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(b.first.input_ids.size(0), 3);
  EXPECT_THAT(Ids(b.first.input_ids[0]), ElementsAre(2, 6, 7, 3, 11, 3));
  EXPECT_THAT(Ids(b.first.input_ids[2]), ElementsAre(2, 5, 3, 9, 10, 3));
  EXPECT_FLOAT_EQ(b.targets[0][0].item<float>(), 2.0f);
  EXPECT_TRUE(std::isinf(b.targets[0][1].item<float>()));
  EXPECT_LT(b.targets[0][1].item<float>(), 0);
  q2.values = {1, 2};
  auto bad = TaskData::Make(DataKind{"cross_encoder_list", RowTarget::kList, true}, {q1, q2},
                            "jsonl", Tiny(), 128, "l.jsonl");
  EXPECT_THAT(bad.status().message(), HasSubstr("row 2 has 1 documents but 2 relevance labels"));
  auto pairs = TaskData::Make(DataKind{"cross_encoder_list", RowTarget::kList, true},
                              {Row("a", "b")}, "jsonl", Tiny(), 128, "l.jsonl");
  EXPECT_THAT(pairs.status().message(), HasSubstr("has no list of documents"));
}

TEST(RankingRowsTest, GridPutsThePositiveFirstThenTheBatchThenOwnNegatives) {
  DataKind kind{"cross_encoder_mnrl", RowTarget::kPositivePairs, true};
  kind.pair_grid = true;
  const std::vector<Example> rows = {Row("a", "b", {"c"}), Row("d", "e", {"f"}),
                                     Row("g", "a", {"b"})};
  auto data = TaskData::Make(kind, rows, "jsonl", Tiny(), 128, "t.jsonl");
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->TextKeys(0).size(), 3u);  // each text apart
  const TaskBatch b = data->Batch({0, 1, 2});
  EXPECT_EQ(b.group_sizes, (std::vector<int64_t>{6, 6, 6}));  // rows x candidate columns
  // Row 0: (a, b), then (a, e) (a, a) (a, f) (a, b) from rows 1 and 2, then (a, c).
  const int64_t a = 5, bb = 6, c = 7, e = 9, f = 10;
  EXPECT_THAT(Ids(b.first.input_ids[0]), ElementsAre(2, a, 3, bb, 3));
  EXPECT_THAT(Ids(b.first.input_ids[1]), ElementsAre(2, a, 3, e, 3));
  EXPECT_THAT(Ids(b.first.input_ids[3]), ElementsAre(2, a, 3, f, 3));
  EXPECT_THAT(Ids(b.first.input_ids[5]), ElementsAre(2, a, 3, c, 3));

  kind.grid_negatives = 2;  // a draw of 2 of the 4 others, the same for the same rows
  auto drawn = TaskData::Make(kind, rows, "jsonl", Tiny(), 128, "t.jsonl");
  ASSERT_TRUE(drawn.ok());
  const TaskBatch d1 = drawn->Batch({0, 1, 2}), d2 = drawn->Batch({0, 1, 2});
  EXPECT_EQ(d1.group_sizes, (std::vector<int64_t>{4, 4, 4}));
  EXPECT_TRUE(torch::equal(d1.first.input_ids, d2.first.input_ids));
  EXPECT_THAT(Ids(d1.first.input_ids[0]), ElementsAre(2, a, 3, bb, 3));
  EXPECT_THAT(Ids(d1.first.input_ids[3]), ElementsAre(2, a, 3, c, 3));
}

TEST(RankingRowsTest, JsonlListsAndVectorLabels) {
  auto lists = ReadColumns(Write("lists.jsonl",
                                 "{\"query\": \"q\", \"docs\": [\"x\", \"y\"], "
                                 "\"labels\": [1, 0]}\n"),
                           "jsonl");
  ASSERT_TRUE(lists.ok()) << lists.status();
  EXPECT_EQ((*lists)[0].a, "q");
  EXPECT_THAT((*lists)[0].docs, ElementsAre("x", "y"));
  EXPECT_THAT((*lists)[0].values, ElementsAre(1.0, 0.0));

  auto vectors = ReadColumns(Write("vec.jsonl",
                                   "{\"text\": \"t\", \"label\": [0.5, -2]}\n"
                                   "{\"text\": \"u\", \"label\": [1, 2]}\n"),
                             "jsonl");
  ASSERT_TRUE(vectors.ok()) << vectors.status();
  EXPECT_EQ((*vectors)[1].a, "u");
  EXPECT_TRUE((*vectors)[1].b.empty());
  EXPECT_THAT((*vectors)[0].values, ElementsAre(0.5, -2.0));

  auto bad = ReadColumns(Write("bad.jsonl",
                               "{\"query\": \"q\", \"docs\": [\"x\"], \"labels\": [1]}\n"
                               "{\"query\": \"q\", \"docs\": [\"x\", 3], \"labels\": [1, 0]}\n"),
                         "jsonl");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("bad.jsonl:2: column \"docs\": holds 3"));
  auto bad_label = ReadColumns(
      Write("bad2.jsonl",
            "{\"text\": \"t\", \"label\": [1]}\n{\"text\": \"t\", \"label\": [\"x\"]}\n"),
      "jsonl");
  EXPECT_THAT(bad_label.status().message(),
              HasSubstr("bad2.jsonl:2: column \"label\": holds \"x\""));
  auto one_text = ReadColumns(Write("one.jsonl", "{\"text\": \"t\", \"label\": 1}\n"), "jsonl");
  EXPECT_FALSE(one_text.ok());  // one text column needs a list label
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
