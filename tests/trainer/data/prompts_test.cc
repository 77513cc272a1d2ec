// trainer/data/prompts.h: the text columns prompts go by, each column's prompt prepended to its
// texts, and the prompt length pooling leaves out (sentence-transformers' _get_prompt_length:
// [CLS] and the prompt's tokens, not the final [SEP]).
#include "trainer/data/prompts.h"

#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "trainer/data/wordpiece_tokenizer.h"

namespace tunefleet {
namespace trainer {
namespace {

using Names = std::vector<std::string>;

const WordPieceTokenizer& Tiny() {
  static const WordPieceTokenizer* tokenizer = [] {
    auto t = WordPieceTokenizer::FromTokens(
        {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "query", "passage", ":", "a", "b"}, "tiny");
    EXPECT_TRUE(t.ok()) << t.status();
    return new WordPieceTokenizer(*std::move(t));
  }();
  return *tokenizer;
}

std::string WriteFile(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(PromptsTest, PromptLengthCountsClsAndThePromptNotTheFinalSep) {
  // [CLS] query : [SEP]
  EXPECT_EQ(PromptLength(Tiny(), "query: ", 128), 3);
  EXPECT_EQ(PromptLength(Tiny(), "passage:", 128), 3);
  EXPECT_EQ(PromptLength(Tiny(), "", 128), 0);
  // Truncated to max_len: [CLS] query [SEP].
  EXPECT_EQ(PromptLength(Tiny(), "query: a b", 3), 2);
  EXPECT_EQ(PromptLengths(Tiny(), {"query: ", "", "a b"}, 128), (std::vector<int64_t>{3, 0, 3}));
}

TEST(PromptsTest, ApplyPromptsPrependsEachColumnsPrompt) {
  Example e{"a", "b"};
  e.negatives = {"c", "d"};
  std::vector<Example> rows = {e};
  ApplyPrompts({"query: ", "passage: ", "", "passage: "}, &rows);
  EXPECT_EQ(rows[0].a, "query: a");
  EXPECT_EQ(rows[0].b, "passage: b");
  EXPECT_EQ(rows[0].negatives, (Names{"c", "passage: d"}));
  ApplyPrompts({"x"}, &rows);  // columns beyond the prompts keep their texts
  EXPECT_EQ(rows[0].a, "xquery: a");
  EXPECT_EQ(rows[0].b, "passage: b");
}

TEST(PromptsTest, ColumnPromptsByNameOrOneForAll) {
  const Names columns = {"anchor", "positive", "negative"};
  EXPECT_EQ(ColumnPrompts(Prompts{"", {{"anchor", "q: "}, {"negative", "p: "}}}, columns),
            (Names{"q: ", "", "p: "}));
  EXPECT_EQ(ColumnPrompts(Prompts{"q: ", {}}, columns), (Names{"q: ", "q: ", "q: "}));
}

TEST(PromptsTest, CheckPromptColumnsNamesTheColumnAndTheFile) {
  const Prompts prompts{"", {{"anchor", "q: "}, {"query", "q: "}}};
  EXPECT_TRUE(CheckPromptColumns(prompts, {"query", "anchor"}, "t.yaml", "d.jsonl").ok());
  EXPECT_EQ(std::string(
                CheckPromptColumns(prompts, {"anchor", "positive"}, "t.yaml", "d.jsonl").message()),
            "t.yaml: task.prompts: column \"query\" is not a text column of d.jsonl (anchor, "
            "positive)");
  EXPECT_TRUE(CheckPromptColumns(Prompts{"q: ", {}}, {"a", "b"}, "t.yaml", "d.jsonl").ok());
}

TEST(PromptsTest, TextColumnNamesAsTheReadersPickThem) {
  const std::string jsonl = WriteFile(
      "p.jsonl",
      "\xEF\xBB\xBF\n{\"anchor\": \"a\", \"score\": 1, \"positive\": \"b\", \"neg\": \"c\"}\n");
  auto names = TextColumnNames(jsonl, "jsonl", {});
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_EQ(*names, (Names{"anchor", "positive", "neg"}));
  names = TextColumnNames(jsonl, "jsonl", ColumnOptions{{}, "neg"});  // a label column
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_EQ(*names, (Names{"anchor", "positive"}));
  const std::string csv = WriteFile("p.csv", "\"query\",label,\"doc,1\",\r\nq,1,d,\n");
  names = TextColumnNames(csv, "csv", {});
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_EQ(*names, (Names{"query", "doc,1"}));
  const std::string tsv = WriteFile("p.tsv", "s1\ts2\tscore\nx\ty\t1\n");
  names = TextColumnNames(tsv, "tsv", {});
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_EQ(*names, (Names{"s1", "s2"}));
  names = TextColumnNames(tsv, "tsv", ColumnOptions{{"s2", "s1"}, ""});  // task.columns
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_EQ(*names, (Names{"s2", "s1"}));
  names = TextColumnNames("no-such-file.csv", "stsb", {});  // fixed formats: not read
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_EQ(*names, (Names{"sentence1", "sentence2"}));
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
