// trainer/data/column_reader.h: jsonl, csv and tsv files in sentence-transformers' layout (text
// columns by name or in file order, negatives, the label columns), csv quoting as Python's csv
// module reads it, and every error naming file:line and the column.
#include "trainer/data/column_reader.h"

#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trainer/data/datasets.h"

namespace tunefleet {
namespace trainer {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string Write(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(ColumnReaderTest, JsonlDefaultColumnsInFileOrderWithNegatives) {
  // The first object's key order decides (not the alphabetical order); later objects may order
  // their keys otherwise; "score" and "label" are never text.
  const std::string path = Write(
      "triplets.jsonl",
      "{\"query\": \"q1\", \"pos\": \"p1\", \"label\": 1, \"neg\": \"n1\", \"hard\": \"h1\"}\n"
      "\n"
      "{\"hard\": \"h2\", \"neg\": \"n2\", \"pos\": \"p2\", \"query\": \"q2\", \"x\": 3}\n");
  auto rows = ReadColumns(path, "jsonl");
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].a, "q1");
  EXPECT_EQ((*rows)[0].b, "p1");
  EXPECT_THAT((*rows)[0].negatives, ElementsAre("n1", "h1"));
  EXPECT_EQ((*rows)[0].label, 1);
  EXPECT_FALSE((*rows)[0].HasScore());
  EXPECT_EQ((*rows)[0].texts(), 4u);
  EXPECT_EQ((*rows)[1].a, "q2");
  EXPECT_EQ((*rows)[1].b, "p2");
  EXPECT_THAT((*rows)[1].negatives, ElementsAre("n2", "h2"));
  EXPECT_FALSE((*rows)[1].HasLabel());
}

// The repository's AllNLI-style triplets (data/sick-triplets): anchor, positive, one negative.
TEST(ColumnReaderTest, SickTriplets) {
  auto train = ReadColumns("data/sick-triplets/train.jsonl", "jsonl");
  ASSERT_TRUE(train.ok()) << train.status();
  EXPECT_EQ(train->size(), 383u);
  EXPECT_EQ(train->front().a, "A lone biker is jumping in the air");
  EXPECT_EQ(train->front().b, "A biker is jumping in the air, alone");
  EXPECT_THAT(train->front().negatives, ElementsAre("There is no biker jumping in the air"));
  for (const Example& e : *train) {
    ASSERT_EQ(e.negatives.size(), 1u);
    ASSERT_FALSE(e.HasLabel() || e.HasScore());
  }
  auto dev = ReadColumns("data/sick-triplets/dev.jsonl", "jsonl");
  ASSERT_TRUE(dev.ok()) << dev.status();
  EXPECT_EQ(dev->size(), 5u);
}

TEST(ColumnReaderTest, OldSentencePairJsonlReadsAsBefore) {
  auto jsonl = ReadDataset(
      Write("pairs.jsonl",
            "{\"sentence1\": \"a \\\"q\\\"\", \"sentence2\": \"b\", \"label\": 2}\n"
            "\n{\"sentence1\": \"c\", \"sentence2\": \"d\", \"score\": 4.5}\n"
            "{\"score\": 0.5, \"sentence2\": \"f\", \"sentence1\": \"e\", \"label\": 0}\n"),
      "jsonl");
  ASSERT_TRUE(jsonl.ok()) << jsonl.status();
  ASSERT_EQ(jsonl->size(), 3u);
  EXPECT_EQ((*jsonl)[0].a, "a \"q\"");
  EXPECT_EQ((*jsonl)[0].b, "b");
  EXPECT_EQ((*jsonl)[0].label, 2);
  EXPECT_FALSE((*jsonl)[0].HasScore());
  EXPECT_TRUE((*jsonl)[0].negatives.empty());
  EXPECT_DOUBLE_EQ((*jsonl)[1].score, 4.5);
  EXPECT_FALSE((*jsonl)[1].HasLabel());
  EXPECT_EQ((*jsonl)[2].a, "e");
  EXPECT_EQ((*jsonl)[2].b, "f");
  EXPECT_EQ((*jsonl)[2].label, 0);
  EXPECT_DOUBLE_EQ((*jsonl)[2].score, 0.5);
}

TEST(ColumnReaderTest, ColumnsChosenByNameAndReordered) {
  const std::string path = Write("chosen.jsonl",
                                 "{\"id\": 7, \"a\": \"x\", \"b\": \"y\", \"c\": \"z\", "
                                 "\"note\": \"ignored\"}\n");
  auto rows = ReadColumns(path, "jsonl", ColumnOptions{{"c", "a", "b"}, ""});
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].a, "z");
  EXPECT_EQ((*rows)[0].b, "x");
  EXPECT_THAT((*rows)[0].negatives, ElementsAre("y"));

  const std::string csv = Write("chosen.csv", "id,anchor,negative,positive\n1,q,n,p\n");
  auto pairs = ReadColumns(csv, "csv", ColumnOptions{{"anchor", "positive"}, ""});
  ASSERT_TRUE(pairs.ok()) << pairs.status();
  EXPECT_EQ((*pairs)[0].a, "q");
  EXPECT_EQ((*pairs)[0].b, "p");
  EXPECT_TRUE((*pairs)[0].negatives.empty());
}

TEST(ColumnReaderTest, CsvQuoting) {
  // As Python's csv.reader: quoted commas, "" for a quote, a quoted field over line breaks
  // (blank lines in it kept), a quote inside an unquoted field is text, CRLF, a BOM, blank
  // lines between rows skipped; a row's line is where it starts.
  const std::string path = Write("quoted.csv",
                                 "\xEF\xBB\xBF"
                                 "anchor,positive,score\r\n"
                                 "\"a, with comma\",\"say \"\"hi\"\"\",0.5\r\n"
                                 "\n"
                                 "\"two\nlines\n\nand a blank\",plain,1\n"
                                 "5\" tall,\"x\"y,\n"
                                 "\"\"\"quoted\"\"\",\"\",0\n");
  auto rows = ReadColumns(path, "csv");
  ASSERT_FALSE(rows.ok());  // the last row's positive is an empty quoted field
  EXPECT_EQ(rows.status().message(), path + ":9: column \"positive\": is empty");

  const std::string good = Write("quoted_ok.csv",
                                 "\xEF\xBB\xBF"
                                 "anchor,positive,score\r\n"
                                 "\"a, with comma\",\"say \"\"hi\"\"\",0.5\r\n"
                                 "\n"
                                 "\"two\nlines\n\nand a blank\",plain,1\n"
                                 "5\" tall,\"x\"y,\n");
  rows = ReadColumns(good, "csv");
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0].a, "a, with comma");
  EXPECT_EQ((*rows)[0].b, "say \"hi\"");
  EXPECT_DOUBLE_EQ((*rows)[0].score, 0.5);
  EXPECT_EQ((*rows)[1].a, "two\nlines\n\nand a blank");
  EXPECT_EQ((*rows)[1].b, "plain");
  EXPECT_DOUBLE_EQ((*rows)[1].score, 1.0);
  EXPECT_FALSE((*rows)[1].HasLabel());  // "score" sets no label
  EXPECT_EQ((*rows)[2].a, "5\" tall");
  EXPECT_EQ((*rows)[2].b, "xy");        // after the closing quote, text goes on
  EXPECT_FALSE((*rows)[2].HasScore());  // an empty score: unset

  auto open = ReadColumns(Write("open.csv", "a,b\nx,\"never\nclosed\n"), "csv");
  ASSERT_FALSE(open.ok());
  EXPECT_THAT(std::string(open.status().message()), HasSubstr("open.csv:2: a quoted field"));
}

TEST(ColumnReaderTest, TsvHasNoQuoting) {
  const std::string path = Write("named.tsv",
                                 "sentence1\tsentence2\tlabel\n"
                                 "\"a\"\t\"b, c\"\t1\r\n"
                                 "\n"
                                 "d\te\t\n"
                                 "f\tg\n");
  auto rows = ReadColumns(path, "tsv");
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0].a, "\"a\"");
  EXPECT_EQ((*rows)[0].b, "\"b, c\"");
  EXPECT_EQ((*rows)[0].label, 1);
  EXPECT_FALSE((*rows)[0].HasScore());
  EXPECT_FALSE((*rows)[1].HasLabel());  // empty
  EXPECT_FALSE((*rows)[2].HasLabel());  // the row ends before it
}

TEST(ColumnReaderTest, ExplicitLabelColumn) {
  // label_column sets score, and label when the number is a non-negative integer (the old tsv
  // rule); "score" and "label" are then ordinary columns, not text by default, and ignored.
  const std::string path = Write("explicit.tsv",
                                 "s1\tsim\ts2\tlabel\n"
                                 "a\t1\tb\tx\n"
                                 "c\t0.25\td\ty\n"
                                 "e\t3.0\tf\tz\n");
  auto rows = ReadColumns(path, "tsv", ColumnOptions{{}, "sim"});
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0].a, "a");
  EXPECT_EQ((*rows)[0].b, "b");
  EXPECT_TRUE((*rows)[0].negatives.empty());
  EXPECT_DOUBLE_EQ((*rows)[0].score, 1.0);
  EXPECT_EQ((*rows)[0].label, 1);
  EXPECT_DOUBLE_EQ((*rows)[1].score, 0.25);
  EXPECT_FALSE((*rows)[1].HasLabel());
  EXPECT_EQ((*rows)[2].label, 3);

  const std::string jsonl = Write("explicit.jsonl",
                                  "{\"q\": \"a\", \"d\": \"b\", \"rel\": 2}\n"
                                  "{\"q\": \"c\", \"d\": \"d\", \"rel\": 0.5}\n");
  auto j = ReadColumns(jsonl, "jsonl", ColumnOptions{{}, "rel"});
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ((*j)[0].label, 2);
  EXPECT_DOUBLE_EQ((*j)[0].score, 2.0);
  EXPECT_FALSE((*j)[1].HasLabel());
  EXPECT_DOUBLE_EQ((*j)[1].score, 0.5);
}

TEST(ColumnReaderTest, ScoreAndLabelFoundByName) {
  const std::string path = Write("both.csv",
                                 "label,premise,score,hypothesis\n"
                                 "2,p1,0.75,h1\n"
                                 "1.0,p2,,h2\n");
  auto rows = ReadColumns(path, "csv");
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].a, "p1");
  EXPECT_EQ((*rows)[0].b, "h1");
  EXPECT_EQ((*rows)[0].label, 2);
  EXPECT_DOUBLE_EQ((*rows)[0].score, 0.75);
  EXPECT_EQ((*rows)[1].label, 1);
  EXPECT_FALSE((*rows)[1].HasScore());
  // Neither: both unset.
  auto plain = ReadColumns(Write("plain.csv", "a,b\nx,y\n"), "csv");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE((*plain)[0].HasLabel());
  EXPECT_FALSE((*plain)[0].HasScore());
}

TEST(ColumnReaderTest, InvalidUtf8IsReplacedWithOneWarning) {
  const std::string path = Write("bad_utf8.csv", "a,b\n\"caf\xE9\",x\ny,\"\xFF\nz\"\n");
  std::ostringstream warnings;
  auto rows = ReadColumns(path, "csv", {}, &warnings);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ((*rows)[0].a, "caf\xEF\xBF\xBD");
  EXPECT_EQ((*rows)[1].b, "\xEF\xBF\xBD\nz");
  EXPECT_THAT(warnings.str(),
              StartsWith("trainer: warning: " + path + ":2: invalid UTF-8 (2 lines"));
}

struct BadCase {
  const char* format;
  ColumnOptions options;
  const char* text;
  const char* error;  // the whole message after "PATH:"
};

TEST(ColumnReaderTest, ErrorsNameFileLineAndColumn) {
  const BadCase cases[] = {
      // A missing column.
      {"jsonl",
       {},
       "{\"anchor\": \"a\", \"negative\": \"n\", \"positive\": \"p\"}\n\n"
       "{\"anchor\": \"a\", \"positive\": \"p\"}\n",
       "3: column \"negative\": missing"},
      {"csv", {{"a", "b", "c"}, ""}, "a,b,c\nx,y,z\nx,y\n", "3: column \"c\": missing"},
      {"tsv", {}, "a\tb\nx\n", "2: column \"b\": missing"},
      // An empty text.
      {"jsonl",
       {},
       "{\"anchor\": \"a\", \"positive\": \"\"}\n",
       "1: column \"positive\": is empty"},
      {"csv", {}, "anchor,positive\na,b\n,b\n", "3: column \"anchor\": is empty"},
      {"tsv", {}, "anchor\tpositive\na\t\n", "2: column \"positive\": is empty"},
      // A text that is not a string.
      {"jsonl",
       {},
       "{\"anchor\": \"a\", \"positive\": 3}\n",
       "1: column \"positive\": is not a string (3)"},
      {"jsonl",
       {{"b", "a"}, ""},
       "{\"a\": \"x\", \"b\": null}\n",
       "1: column \"b\": is not a string (null)"},
      // A label or score that is no number.
      {"jsonl",
       {},
       "{\"a\": \"x\", \"b\": \"y\", \"label\": \"yes\"}\n",
       "1: column \"label\": \"yes\" is not a non-negative integer"},
      {"jsonl",
       {},
       "{\"a\": \"x\", \"b\": \"y\", \"label\": 0.5}\n",
       "1: column \"label\": 0.5 is not a non-negative integer (a score? name its column "
       "\"score\", or "
       "make it the label column)"},
      {"jsonl",
       {},
       "{\"a\": \"x\", \"b\": \"y\", \"score\": \"high\"}\n",
       "1: column \"score\": \"high\" is not a number"},
      {"csv",
       {},
       "a,b,label\nx,y,1\nx,y,yes\n",
       "3: column \"label\": 'yes' is not a non-negative integer"},
      {"csv",
       {},
       "a,b,label\nx,y,-1\n",
       "2: column \"label\": '-1' is not a non-negative integer (a score? name its column "
       "\"score\", or "
       "make it the label column)"},
      {"tsv", {}, "a\tb\tscore\nx\ty\tfive\n", "2: column \"score\": 'five' is not a number"},
      {"tsv", {{}, "sim"}, "a\tb\tsim\nx\ty\t1x\n", "2: column \"sim\": '1x' is not a number"},
      {"jsonl",
       {{}, "sim"},
       "{\"a\": \"x\", \"b\": \"y\", \"sim\": true}\n",
       "1: column \"sim\": true is not a number"},
      // The explicit label column in every row.
      {"jsonl",
       {{}, "sim"},
       "{\"a\": \"x\", \"b\": \"y\", \"sim\": 1}\n{\"a\": \"x\", \"b\": \"y\"}\n",
       "2: column \"sim\": missing"},
      {"csv", {{}, "sim"}, "a,b,sim\nx,y,\n", "2: column \"sim\": is empty"},
      // Fewer than 2 text columns.
      {"jsonl",
       {},
       "{\"text\": \"x\", \"label\": 1}\n",
       "1: 1 text column (\"text\"); at least 2 are needed, the first two being the pair (the "
       "first object's keys: \"text\", \"label\")"},
      {"csv",
       {},
       "score,label\n1,1\n",
       "1: 0 text columns; at least 2 are needed, the first two being the pair (the header's "
       "columns: \"score\", \"label\")"},
      {"tsv",
       {{}, "sim"},
       "text\tsim\tscore\nx\t1\t2\n",
       "1: 1 text column (\"text\"); at least 2 are needed, the first two being the pair (the "
       "header's columns: \"text\", \"sim\", \"score\")"},
      // A column the options name is not in the header.
      {"csv",
       {{"anchor", "positive", "negative"}, ""},
       "anchor,positive\na,p\n",
       "1: column \"negative\" is not in the header (\"anchor\", \"positive\")"},
      {"tsv",
       {{}, "sim"},
       "a\tb\tscore\nx\ty\t1\n",
       "1: label column \"sim\" is not in the header (\"a\", \"b\", \"score\")"},
      // A header line: required, names once, no numbers; no more fields than it names.
      {"tsv",
       {},
       "a\tb\t0.5\nc\td\t1\n",
       "1: the header names a column \"0.5\": tsv files need a first line naming the columns "
       "(e.g. anchor, positive, label)"},
      {"csv", {}, "a,b,a\nx,y,z\n", "1: the header names column \"a\" twice"},
      {"tsv",
       {},
       "a\tb\nx\ty\tz\n",
       "2: 3 fields, but the header names 2 columns (tsv has no quoting: a tab in a text starts "
       "a new field)"},
      {"jsonl", {}, "{\"a\": \"x\", \"b\": \"y\"}\n[1]\n", "2: not a JSON object"},
      {"jsonl", {}, "{\"a\": \"x\", \"b\": \n", "1: not a JSON object"},
  };
  int i = 0;
  for (const BadCase& c : cases) {
    const std::string path = Write("bad" + std::to_string(i++) + "." + c.format, c.text);
    auto result = ReadColumns(path, c.format, c.options, nullptr);
    ASSERT_FALSE(result.ok()) << c.format << ": " << c.text;
    EXPECT_EQ(result.status().message(), path + ":" + c.error) << c.text;
  }
}

TEST(ColumnReaderTest, NoExamples) {
  for (const auto& [format, text, what] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"csv", "", ": no examples (and no header line naming the columns)"},
           {"tsv", "a\tb\n\n", ": no examples (only the header line)"},
           {"jsonl", "\n", ": no examples"}}) {
    const std::string path = Write("empty." + format, text);
    auto rows = ReadColumns(path, format);
    ASSERT_FALSE(rows.ok()) << format;
    EXPECT_EQ(rows.status().message(), path + what);
  }
  auto missing = ReadColumns("/nonexistent/x.csv", "csv");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()),
              StartsWith("/nonexistent/x.csv: cannot open dataset"));
}

TEST(ColumnReaderTest, ReadDatasetPassesColumns) {
  const std::string path =
      Write("via_dataset.jsonl", "{\"x\": \"1\", \"y\": \"2\", \"z\": \"3\"}\n");
  auto rows = ReadDataset(path, "jsonl", ColumnOptions{{"z", "x"}, ""}, nullptr);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ((*rows)[0].a, "3");
  EXPECT_EQ((*rows)[0].b, "1");
  // The fixed formats take no column options.
  auto fixed = ReadDataset(path, "stsb", ColumnOptions{{"z", "x"}, ""}, nullptr);
  ASSERT_FALSE(fixed.ok());
  EXPECT_THAT(std::string(fixed.status().message()), HasSubstr("format stsb has fixed columns"));
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
