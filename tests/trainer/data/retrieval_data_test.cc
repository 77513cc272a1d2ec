// trainer/data/retrieval_data.h: BEIR's queries/corpus/qrels files (the shipped STS-B dev set,
// and small files: numeric ids, qrels scores <= 0, queries without a relevant entry dropped, the
// header optional; every error naming file:line), retrieval sets from (anchor, positive,
// negatives) rows, and the tokenized form.
#include "trainer/data/retrieval_data.h"

#include <fstream>
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

constexpr char kQueries[] =
    "{\"_id\": \"q1\", \"text\": \"what is a cat\"}\n"
    "{\"_id\": 2, \"text\": \"dogs\", \"metadata\": {}}\n"
    "\n"
    "{\"_id\": \"q3\", \"text\": \"no relevant entry\"}\n";
constexpr char kCorpus[] =
    "\xEF\xBB\xBF{\"_id\": \"d1\", \"title\": \"Cats\", \"text\": \"A cat is an animal.\"}\r\n"
    "{\"_id\": \"d2\", \"text\": \"Dogs bark.\"}\n"
    "{\"_id\": 3, \"text\": \"Cats purr.\"}\n";

TEST(ReadRetrievalFiles, BeirLayout) {
  const std::string q = Write("q.jsonl", kQueries), c = Write("c.jsonl", kCorpus);
  const std::string qrels = Write("qrels.tsv",
                                  "query-id\tcorpus-id\tscore\n"
                                  "q1\td1\t1\n"
                                  "q1\t3\t2\n"
                                  "2\td2\t1\n"
                                  "2\td1\t0\n"     // not relevant
                                  "q3\td2\t0\n"    // q3 has none: dropped
                                  "q1\td1\t1\n");  // again: one entry
  auto set = ReadRetrievalFiles(q, c, qrels);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_THAT(set->query_ids, ElementsAre("q1", "2"));
  EXPECT_THAT(set->queries, ElementsAre("what is a cat", "dogs"));
  EXPECT_THAT(set->corpus_ids, ElementsAre("d1", "d2", "3"));
  // "text" only: the title is not prepended.
  EXPECT_THAT(set->corpus, ElementsAre("A cat is an animal.", "Dogs bark.", "Cats purr."));
  ASSERT_EQ(set->relevant.size(), 2u);
  EXPECT_THAT(set->relevant[0], ElementsAre(0, 2));
  EXPECT_THAT(set->relevant[1], ElementsAre(1));
  // Without the header line.
  auto bare = ReadRetrievalFiles(q, c, Write("bare.tsv", "q1\td1\t1\n"));
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_THAT(bare->query_ids, ElementsAre("q1"));
}

TEST(ReadRetrievalFiles, ErrorsNameFileAndLine) {
  const std::string q = Write("eq.jsonl", kQueries), c = Write("ec.jsonl", kCorpus);
  auto error = [&](const std::string& queries, const std::string& corpus,
                   const std::string& qrels) {
    auto set = ReadRetrievalFiles(queries, corpus, qrels, nullptr);
    EXPECT_FALSE(set.ok());
    return std::string(set.status().message());
  };
  const std::string h = "query-id\tcorpus-id\tscore\n";
  std::string path = Write("e1.tsv", h + "q1\td1\t1\nq9\td1\t1\n");
  EXPECT_EQ(error(q, c, path), path + ":3: query id 'q9' is not in " + q);
  path = Write("e2.tsv", h + "q1\td9\t1\n");
  EXPECT_EQ(error(q, c, path), path + ":2: corpus id 'd9' is not in " + c);
  path = Write("e3.tsv", h + "q1\td1\n");
  EXPECT_THAT(error(q, c, path), HasSubstr(path + ":2: expected 3 tab-separated columns"));
  path = Write("e4.tsv", h + "q1\td1\thigh\n");
  EXPECT_EQ(error(q, c, path), path + ":2: score 'high' is not a number");
  path = Write("e5.tsv", h + "q3\td1\t0\n");
  EXPECT_THAT(error(q, c, path),
              HasSubstr(path + ": no query of " + q + " has a relevant corpus entry (score > 0)"));
  const std::string ok_qrels = Write("ok.tsv", "q1\td1\t1\n");
  path = Write("dup.jsonl",
               "{\"_id\": \"d1\", \"text\": \"a\"}\n{\"_id\": \"d1\", \"text\": \"b\"}\n");
  EXPECT_EQ(error(q, path, ok_qrels),
            path + ":2: duplicate corpus entry id 'd1' (first on line 1)");
  path = Write("noid.jsonl", "{\"text\": \"a\"}\n");
  EXPECT_EQ(error(path, c, ok_qrels), path + ":1: \"_id\" is missing");
  path = Write("notext.jsonl", "{\"_id\": \"q1\", \"title\": \"a\"}\n");
  EXPECT_EQ(error(path, c, ok_qrels), path + ":1: \"text\" is missing");
  path = Write("empty.jsonl", "{\"_id\": \"d1\", \"text\": \"\"}\n");
  EXPECT_EQ(error(q, path, ok_qrels), path + ":1: \"text\" of corpus entry 'd1' is empty");
  path = Write("badid.jsonl", "{\"_id\": null, \"text\": \"a\"}\n");
  EXPECT_EQ(error(path, c, ok_qrels), path + ":1: \"_id\" is not a string or a number (null)");
  path = Write("notjson.jsonl", "{\"_id\": \"q1\", \"text\": \"a\"}\n[1, 2]\n");
  EXPECT_EQ(error(path, c, ok_qrels), path + ":2: not a JSON object");
  path = ::testing::TempDir() + "/missing.jsonl";
  EXPECT_THAT(error(q, path, ok_qrels), HasSubstr(path));
}

TEST(ReadRetrievalFiles, ShippedStsbDev) {
  auto set = ReadRetrievalFiles("data/retrieval/stsb-dev/queries.jsonl",
                                "data/retrieval/stsb-dev/corpus.jsonl",
                                "data/retrieval/stsb-dev/qrels.tsv");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->queries.size(), 262u);
  EXPECT_EQ(set->corpus.size(), 2650u);
  EXPECT_EQ(set->query_ids.front(), "q0");
  EXPECT_EQ(set->queries.front(), "A man with a hard hat is dancing.");
  EXPECT_EQ(set->corpus.front(), "A man wearing a hard hat is dancing.");
  EXPECT_EQ(set->corpus_ids.back(), "c2649");
  EXPECT_THAT(set->relevant.front(), ElementsAre(0));
  size_t judgements = 0;
  for (const auto& r : set->relevant) judgements += r.size();
  EXPECT_EQ(judgements, 263u);
  ASSERT_EQ(set->query_ids[77], "q77");
  EXPECT_THAT(set->relevant[77], ElementsAre(600, 625));
}

TEST(RetrievalFromPairs, AnchorsPositivesAndNegatives) {
  std::vector<Example> rows(5);
  rows[0].a = "cat";
  rows[0].b = "a cat";
  rows[0].negatives = {"a dog", "a cow"};
  rows[1].a = "dog";
  rows[1].b = "a dog";
  rows[2].a = "cat";
  rows[2].b = "kitten";
  rows[3].a = "cow";  // labelled 0: its b is in the corpus, but not relevant; cow is dropped
  rows[3].b = "milk";
  rows[3].label = 0;
  rows[4].a = "cat";
  rows[4].b = "a cat";  // again: one corpus entry, one relevant
  auto set = RetrievalFromPairs(rows, "pairs.tsv");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_THAT(set->queries, ElementsAre("cat", "dog"));
  EXPECT_THAT(set->query_ids, ElementsAre("q1", "q2"));
  EXPECT_THAT(set->corpus, ElementsAre("a cat", "a dog", "a cow", "kitten", "milk"));
  EXPECT_THAT(set->corpus_ids, ElementsAre("d1", "d2", "d3", "d4", "d5"));
  ASSERT_EQ(set->relevant.size(), 2u);
  EXPECT_THAT(set->relevant[0], ElementsAre(0, 3));
  EXPECT_THAT(set->relevant[1], ElementsAre(1));

  EXPECT_EQ(RetrievalFromPairs({}, "none.tsv").status().message(), "none.tsv: no examples");
  std::vector<Example> negative_only(1);
  negative_only[0].a = "x";
  negative_only[0].b = "y";
  negative_only[0].label = 0;
  EXPECT_THAT(RetrievalFromPairs(negative_only, "neg.tsv").status().message(),
              HasSubstr("neg.tsv: no anchor with a positive"));
}

TEST(TokenizeRetrieval, EncodesEachTextAlone) {
  auto tokenizer = LoadFolderTokenizer("data/bert-tiny-random");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  std::vector<Example> rows(2);
  rows[0].a = "a man is playing a flute";
  rows[0].b = "a man plays the flute";
  rows[1].a = "a woman is slicing an onion";
  rows[1].b = "a woman cuts an onion";
  auto set = RetrievalFromPairs(rows, "pairs");
  ASSERT_TRUE(set.ok()) << set.status();
  const RetrievalData data = TokenizeRetrieval(*set, **tokenizer, 6, "pairs");
  EXPECT_EQ(data.size(), 2);
  ASSERT_EQ(data.corpus.size(), 2u);
  EXPECT_EQ(data.queries[0].ids, (*tokenizer)->Encode("a man is playing a flute", 6).ids);
  EXPECT_EQ(data.corpus[1].ids, (*tokenizer)->Encode("a woman cuts an onion", 6).ids);
  EXPECT_EQ(data.queries[0].ids.size(), 6u);  // truncated to max_len
  EXPECT_EQ(data.pad_id, (*tokenizer)->pad_id());
  EXPECT_EQ(data.source, "pairs");
  EXPECT_THAT(data.set.relevant[1], ElementsAre(1));
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
