// trainer/data/rerank_data.h: the shipped data/rerank/stsb-dev.jsonl, small files (a positive
// as a string or a list, no negatives, other keys ignored), every error naming file:line and
// the key, and the tokenized form (each (query, document) pair one text, queries in order).
#include "trainer/data/rerank_data.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trainer/data/tokenizer_folder.h"

namespace tunefleet {
namespace trainer {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Write(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(RerankDataTest, ReadsTheShippedSet) {
  auto queries = ReadRerankFile("data/rerank/stsb-dev.jsonl", nullptr);
  ASSERT_TRUE(queries.ok()) << queries.status();
  EXPECT_EQ(queries->size(), 100u);
  for (const RerankQuery& q : *queries) {
    ASSERT_EQ(q.docs.size(), q.relevant.size());
    EXPECT_GE(q.docs.size(), 10u);
    EXPECT_EQ(q.relevant.front(), 1);  // positives first
    EXPECT_EQ(q.relevant.back(), 0);
  }
}

TEST(RerankDataTest, PositivesThenNegatives) {
  const std::string path = Write("small.jsonl",
                                 "{\"query\": \"q1\", \"positive\": \"p\", \"negative\": [\"n1\", "
                                 "\"n2\"], \"id\": 7}\n"
                                 "\n"
                                 "{\"query\": \"q2\", \"positive\": [\"a\", \"b\"]}\n");
  auto queries = ReadRerankFile(path, nullptr);
  ASSERT_TRUE(queries.ok()) << queries.status();
  ASSERT_EQ(queries->size(), 2u);
  EXPECT_THAT((*queries)[0].docs, ElementsAre("p", "n1", "n2"));
  EXPECT_THAT((*queries)[0].relevant, ElementsAre(1, 0, 0));
  EXPECT_THAT((*queries)[1].docs, ElementsAre("a", "b"));
  EXPECT_THAT((*queries)[1].relevant, ElementsAre(1, 1));
}

TEST(RerankDataTest, ErrorsNameTheLineAndKey) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"query\": \"q\", \"positive\": \"p\"}\nnot json\n", "bad.jsonl:2: not a JSON object"},
      {"{\"positive\": \"p\"}\n", "bad.jsonl:1: \"query\" is missing"},
      {"{\"query\": \"\", \"positive\": \"p\"}\n", "bad.jsonl:1: \"query\" is not a non-empty"},
      {"{\"query\": \"q\"}\n", "bad.jsonl:1: \"positive\" is missing"},
      {"{\"query\": \"q\", \"positive\": [1]}\n", "bad.jsonl:1: \"positive\" holds 1"},
      {"{\"query\": \"q\", \"positive\": \"p\", \"negative\": \"n\"}\n",
       "bad.jsonl:1: \"negative\" is not a list of strings"},
      {"{\"query\": \"q\", \"positive\": []}\n", "bad.jsonl:1: no documents to rank"},
      {"\n", "bad.jsonl: no examples"},
  };
  for (const auto& [text, want] : cases) {
    const std::string path = Write("bad.jsonl", text);
    auto queries = ReadRerankFile(path, nullptr);
    ASSERT_FALSE(queries.ok()) << text;
    EXPECT_THAT(std::string(queries.status().message()), HasSubstr(want)) << text;
  }
}

TEST(RerankDataTest, TokenizesEachPairAsOneText) {
  auto tokenizer = LoadFolderTokenizer("data/bert-tiny-random");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  std::vector<RerankQuery> queries = {{"a cat", {"a dog", "a car"}, {1, 0}},
                                      {"sun", {"moon"}, {1}}};
  const RerankData d = TokenizeRerank(queries, **tokenizer, 128, "x.jsonl");
  EXPECT_EQ(d.size(), 2);
  EXPECT_THAT(d.first, ElementsAre(0, 2));
  ASSERT_EQ(d.pairs.size(), 3u);
  const Encoding want = (*tokenizer)->EncodePair("a cat", "a car", 128);
  EXPECT_EQ(d.pairs[1].ids, want.ids);
  EXPECT_EQ(d.pairs[1].token_type_ids, want.token_type_ids);
  EXPECT_EQ(d.pad_id, (*tokenizer)->pad_id());
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
