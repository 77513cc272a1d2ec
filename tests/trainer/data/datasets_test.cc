// Dataset readers on the real files (row counts, first and last rows, label balance) and on
// bad inputs written to a temp dir (errors name file:line); invalid UTF-8 in every format (read
// as U+FFFD, one warning naming file and first line); the per-epoch order. The named-column
// formats (jsonl, csv, tsv) in detail: column_reader_test.
#include "trainer/data/datasets.h"

#include <algorithm>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trainer/data/utf8_check.h"

namespace tunefleet {
namespace trainer {
namespace {

using ::testing::HasSubstr;

int CountLabel(const std::vector<Example>& v, int label) {
  return std::count_if(v.begin(), v.end(), [&](const Example& e) { return e.label == label; });
}

TEST(DatasetsTest, StsBenchmark) {
  auto train = ReadDataset("data/stsbenchmark/sts-train.csv", "stsb");
  auto dev = ReadStsb("data/stsbenchmark/sts-dev.csv");
  auto test = ReadStsb("data/stsbenchmark/sts-test.csv");
  ASSERT_TRUE(train.ok()) << train.status();
  ASSERT_TRUE(dev.ok()) << dev.status();
  ASSERT_TRUE(test.ok()) << test.status();
  EXPECT_EQ(train->size(), 5749u);
  EXPECT_EQ(dev->size(), 1500u);
  EXPECT_EQ(test->size(), 1379u);
  const Example& first = dev->front();
  EXPECT_EQ(first.a, "A man with a hard hat is dancing.");
  EXPECT_EQ(first.b, "A man wearing a hard hat is dancing.");
  EXPECT_DOUBLE_EQ(first.score, 5.0);
  EXPECT_FALSE(first.HasLabel());
  EXPECT_EQ(dev->back().a, "New video shows US police officers beating mentally-ill man");
  EXPECT_EQ(dev->back().b, "New York police officer critically wounded in hatchet attack");
  EXPECT_DOUBLE_EQ(dev->back().score, 0.0);
  EXPECT_EQ(train->front().a, "A plane is taking off.");
  EXPECT_EQ(test->front().b, "A girl is brushing her hair.");
  EXPECT_DOUBLE_EQ(test->front().score, 2.5);
  // Rows with 9 columns keep sentence2 from column 7, and quotes are text (QUOTE_NONE).
  for (const auto* split : {&*train, &*dev, &*test}) {
    for (const Example& e : *split) {
      ASSERT_TRUE(e.HasScore());
      ASSERT_FALSE(e.a.empty());
      ASSERT_FALSE(e.b.empty());
      ASSERT_EQ(e.b.find('\t'), std::string::npos);
    }
  }
  int quoted = std::count_if(dev->begin(), dev->end(), [](const Example& e) {
    return e.a.find('"') != std::string::npos || e.b.find('"') != std::string::npos;
  });
  EXPECT_GT(quoted, 0);
}

TEST(DatasetsTest, Sick) {
  auto all = ReadDataset("data/sick/SICK.txt", "sick");
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 9840u);
  EXPECT_EQ(CountLabel(*all, 0), 2821);  // ENTAILMENT
  EXPECT_EQ(CountLabel(*all, 1), 5595);  // NEUTRAL
  EXPECT_EQ(CountLabel(*all, 2), 1424);  // CONTRADICTION
  const Example& first = all->front();
  EXPECT_EQ(first.a,
            "A group of kids is playing in a yard and an old man is standing in the background");
  EXPECT_EQ(first.b,
            "A group of boys in a yard is playing and a man is standing in the background");
  EXPECT_EQ(first.label, 1);
  EXPECT_DOUBLE_EQ(first.score, 4.5);
  EXPECT_EQ(all->back().a, "Three dogs are resting on a sidewalk");
  EXPECT_EQ(all->back().b, "The woman with a knife is slicing a pepper");
  EXPECT_DOUBLE_EQ(all->back().score, 1.0);
  auto train = ReadSick("data/sick/SICK.txt", "TRAIN");
  auto trial = ReadSick("data/sick/SICK.txt", "TRIAL");
  auto test = ReadSick("data/sick/SICK.txt", "TEST");
  ASSERT_TRUE(train.ok() && trial.ok() && test.ok());
  EXPECT_EQ(train->size(), 4439u);
  EXPECT_EQ(trial->size(), 495u);
  EXPECT_EQ(test->size(), 4906u);
  EXPECT_EQ(trial->front().a, "The young boys are playing outdoors and the man is smiling nearby");
  EXPECT_EQ(trial->front().label, 2);
  EXPECT_DOUBLE_EQ(trial->front().score, 3.6);
  auto none = ReadSick("data/sick/SICK.txt", "DEV");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().message(), "data/sick/SICK.txt: no examples in SemEval_set DEV");
}

// The paraphrase splits (labels 0/1): row counts and label balance, read by format name.
TEST(DatasetsTest, ParaphraseSplitSizesAndLabels) {
  struct Split {
    const char* path;
    const char* format;
    size_t rows;
    int positives;
    int negatives;  // -1: not checked
  };
  const Split splits[] = {
      {"data/paws-wiki/dev.tsv", "paws", 8000, 3539, 4461},
      {"data/paws-wiki/test.tsv", "paws", 8000, 3536, -1},
      // The first row carries the BOM: read, its label is 1 (2753 positives counting it).
      {"data/mrpc/msr_paraphrase_train.txt", "mrpc", 4076, 2753, 1323},
      {"data/mrpc/msr_paraphrase_test.txt", "mrpc", 1725, 1147, -1},
  };
  for (const Split& split : splits) {
    SCOPED_TRACE(split.path);
    auto rows = ReadDataset(split.path, split.format);
    ASSERT_TRUE(rows.ok()) << rows.status();
    EXPECT_EQ(rows->size(), split.rows);
    EXPECT_EQ(CountLabel(*rows, 1), split.positives);
    if (split.negatives >= 0) {
      EXPECT_EQ(CountLabel(*rows, 0), split.negatives);
    }
  }
}

TEST(DatasetsTest, PawsWiki) {
  auto dev = ReadPaws("data/paws-wiki/dev.tsv");
  auto test = ReadPaws("data/paws-wiki/test.tsv");
  ASSERT_TRUE(dev.ok()) << dev.status();
  ASSERT_TRUE(test.ok()) << test.status();
  EXPECT_THAT(dev->front().a, ::testing::StartsWith("Bradd Crellin represented BARLA Cumbria"));
  EXPECT_EQ(dev->front().label, 0);
  EXPECT_FALSE(dev->front().HasScore());
  EXPECT_EQ(dev->back().b,
            "In the other direction , suppose that `` m '' is prime , with powerful "
            "factorization .");
  EXPECT_EQ(test->back().label, 1);
}

TEST(DatasetsTest, Mrpc) {
  auto train = ReadMrpc("data/mrpc/msr_paraphrase_train.txt");
  ASSERT_TRUE(train.ok()) << train.status();
  EXPECT_EQ(train->front().label, 1);
  EXPECT_EQ(train->front().a,
            "Amrozi accused his brother, whom he called \"the witness\", of deliberately "
            "distorting his evidence.");
  EXPECT_EQ(train->back().label, 0);
  EXPECT_THAT(train->back().b, ::testing::StartsWith("The 30-year bond US30YT=RR grew 1-3/32"));
}

std::string Write(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// jsonl, csv and tsv go to trainer/data/column_reader.h (tests/trainer/data/column_reader_test.cc):
// the old sentence1/sentence2 files read as before, a tsv now with its header line.
TEST(DatasetsTest, TsvAndJsonl) {
  auto tsv = ReadDataset(
      Write("pairs.tsv", "sentence1\tsentence2\tlabel\na\tb\t1\r\n\nc\td\t0\ne\tf\n"), "tsv");
  ASSERT_TRUE(tsv.ok()) << tsv.status();
  ASSERT_EQ(tsv->size(), 3u);
  EXPECT_EQ((*tsv)[0].a, "a");
  EXPECT_EQ((*tsv)[0].b, "b");
  EXPECT_EQ((*tsv)[0].label, 1);
  EXPECT_EQ((*tsv)[1].a, "c");
  EXPECT_EQ((*tsv)[1].label, 0);
  EXPECT_FALSE((*tsv)[2].HasScore());
  EXPECT_FALSE((*tsv)[2].HasLabel());
  // The old third column of scores: as task.label_column, or named "score".
  const std::string scores =
      Write("scores.tsv", "sentence1\tsentence2\tlabel\na\tb\t1\nc\td\t0.25\n");
  auto by_label_column = ReadDataset(scores, "tsv", ColumnOptions{{}, "label"});
  ASSERT_TRUE(by_label_column.ok()) << by_label_column.status();
  EXPECT_EQ((*by_label_column)[0].label, 1);
  EXPECT_DOUBLE_EQ((*by_label_column)[0].score, 1.0);
  EXPECT_FALSE((*by_label_column)[1].HasLabel());
  EXPECT_DOUBLE_EQ((*by_label_column)[1].score, 0.25);

  auto jsonl = ReadDataset(
      Write("pairs.jsonl",
            "{\"sentence1\": \"a \\\"q\\\"\", \"sentence2\": \"b\", \"label\": 2}\n"
            "\n{\"sentence1\": \"c\", \"sentence2\": \"d\", \"score\": 4.5, \"extra\": 1}\n"
            "{\"sentence1\": \"e\", \"sentence2\": \"f\"}\n"),
      "jsonl");
  ASSERT_TRUE(jsonl.ok()) << jsonl.status();
  ASSERT_EQ(jsonl->size(), 3u);
  EXPECT_EQ((*jsonl)[0].a, "a \"q\"");
  EXPECT_EQ((*jsonl)[0].label, 2);
  EXPECT_FALSE((*jsonl)[0].HasScore());
  EXPECT_DOUBLE_EQ((*jsonl)[1].score, 4.5);
  EXPECT_FALSE((*jsonl)[2].HasLabel());
}

struct BadCase {
  const char* format;
  const char* text;
  const char* error;  // after "PATH:"
};

TEST(DatasetsTest, BadInputsNameFileAndLine) {
  const BadCase cases[] = {
      {"stsb", "", " no examples"},
      {"stsb", "g\tf\t2012\t1\t5.0\tonly one sentence\n",
       "1: expected at least 7 tab-separated columns"},
      {"stsb", "g\tf\t2012\t1\t5.0\ta\tb\ng\tf\t2012\t2\tfive\ta\tb\n",
       "2: score 'five' is not a number"},
      {"stsb", "g\tf\t2012\t1\t5.5\ta\tb\n", "1: score 5.5 is outside [0, 5]"},
      {"stsb", "g\tf\t2012\t1\tnan\ta\tb\n", "1: score 'nan' is not a number"},
      {"sick", "pair_ID\tsentence_A\tsentence_B\n1\ta\tb\n", "1: expected a header naming"},
      {"sick", "pair_ID\tsentence_A\tsentence_B\tentailment_label\trelatedness_score\n",
       " no examples"},
      {"sick",
       "pair_ID\tsentence_A\tsentence_B\tentailment_label\trelatedness_score\n"
       "1\ta\tb\tNEUTRAL\n",
       "2: expected at least 5 tab-separated columns"},
      {"sick",
       "pair_ID\tsentence_A\tsentence_B\tentailment_label\trelatedness_score\n"
       "1\ta\tb\tMAYBE\t3\n",
       "2: entailment label 'MAYBE' is not ENTAILMENT, NEUTRAL or CONTRADICTION"},
      {"sick",
       "pair_ID\tsentence_A\tsentence_B\tentailment_label\trelatedness_score\n"
       "1\ta\tb\tNEUTRAL\t\n",
       "2: relatedness_score '' is not a number"},
      {"paws", "id\tsentence1\tsentence2\tlabel\n", " no examples"},
      {"paws", "1\ta\tb\t1\n2\ta\tb\n", "2: expected 4 tab-separated columns"},
      {"paws", "1\ta\tb\t1\textra\n", "1: expected 4 tab-separated columns"},
      {"paws", "1\ta\tb\tyes\n", "1: label 'yes' is not 0 or 1"},
      {"mrpc", "\xEF\xBB\xBFQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\n2\t1\t2\ta\tb\n",
       "2: Quality '2' is not 0 or 1"},
      {"mrpc", "1\t1\t2\ta\n", "1: expected 5 tab-separated columns"},
      // jsonl, csv and tsv: every error in column_reader_test; here that they come through.
      {"tsv", "a\tb\t0.5\n", "1: the header names a column \"0.5\""},
      {"tsv", "sentence1\tsentence2\tlabel\na\tb\t0.5\na\tb\thigh\n",
       "2: column \"label\": '0.5' is not a non-negative integer"},
      {"csv", "a,b\nx,\"y\n", "2: a quoted field is not closed"},
      {"jsonl", "{\"sentence1\": \"a\", \"sentence2\": \"b\"}\n{\"sentence1\": \"a\"\n",
       "2: not a JSON object"},
      {"jsonl", "{\"sentence1\": \"a\", \"sentence2\": \"b\"}\n{\"sentence1\": \"a\"}\n",
       "2: column \"sentence2\": missing"},
      {"jsonl", "{\"sentence1\": \"a\", \"sentence2\": \"b\", \"score\": []}\n",
       "1: column \"score\": [] is not a number"},
  };
  int i = 0;
  for (const BadCase& c : cases) {
    const std::string path = Write("bad" + std::to_string(i++) + "." + c.format, c.text);
    auto result = ReadDataset(path, c.format);
    ASSERT_FALSE(result.ok()) << c.format << ": " << c.text;
    const std::string message(result.status().message());
    EXPECT_THAT(message, ::testing::StartsWith(path + ":" + c.error)) << c.text;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  auto missing = ReadDataset("/nonexistent/sts-dev.csv", "stsb");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()),
              ::testing::StartsWith("/nonexistent/sts-dev.csv: cannot open dataset"));
  auto format = ReadDataset("x.xml", "xml");
  ASSERT_FALSE(format.ok());
  EXPECT_THAT(std::string(format.status().message()), HasSubstr("unknown dataset format 'xml'"));
}

#define REPL "\xEF\xBF\xBD"  // U+FFFD in UTF-8

std::string Utf8Warning(const std::string& path, int first_line, int lines) {
  return "trainer: warning: " + path + ":" + std::to_string(first_line) + ": invalid UTF-8 (" +
         std::to_string(lines) + (lines == 1 ? " line" : " lines") +
         "; each bad byte sequence read as U+FFFD, which the tokenizer drops)\n";
}

struct Utf8Case {
  const char* format;
  const char* text;  // bad bytes on lines 2 and 4 (line 3 blank where the format allows)
  int first_line;
  int lines;
  size_t examples;
  size_t index;  // of the first example holding U+FFFD
  const char* a;
  const char* b;
};

// Every format: the file is read, the bad bytes are U+FFFD in the example text, and one warning
// names the file, the first line with invalid UTF-8 and how many lines had some.
TEST(DatasetsTest, InvalidUtf8ReadAsReplacementWithOneWarning) {
  const Utf8Case cases[] = {
      {"stsb",
       "g\tf\t2012\t1\t5.0\ta\tb\ng\tf\t2012\t2\t4.0\tcaf\xE9\tna\xEFve\n\n"
       "g\tf\t2012\t3\t3.0\t\xFF\xFE\tok\n",
       2, 2, 3, 1, "caf" REPL, "na" REPL "ve"},
      {"sick",
       "pair_ID\tsentence_A\tsentence_B\tentailment_label\trelatedness_score\n"
       "1\tcaf\xE9\tb\tNEUTRAL\t3\n\n2\ta\t\xC0\x80\tENTAILMENT\t4\n",
       2, 2, 2, 0, "caf" REPL, "b"},
      {"paws",
       "id\tsentence1\tsentence2\tlabel\n1\t\xE2\x82"
       "a\tb\t1\n\n2\tc\td\xED\xA0\x80\t0\n",
       2, 2, 2, 0, REPL "a", "b"},
      {"mrpc",
       "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n1\t1\t2\t\x80x\ty\n\n"
       "0\t3\t4\tu\tv\xF4\x90\x80\x80\n",
       2, 2, 2, 0, REPL "x", "y"},
      {"tsv", "s1\ts2\tscore\nc\xE9\td\n\ne\t\xF0\x9F\x98\t0.5\n", 2, 2, 2, 0, "c" REPL, "d"},
      {"csv", "a,b\n\"caf\xE9\",x\n\ne,\"\xFF\"\n", 2, 2, 2, 0, "caf" REPL, "x"},
      // A bad byte inside a JSON string: the line parses (it failed as "not a JSON object").
      {"jsonl",
       "{\"sentence1\": \"a\", \"sentence2\": \"b\"}\n"
       "{\"sentence1\": \"caf\xE9\", \"sentence2\": \"x\", \"label\": 1}\n\n"
       "{\"sentence1\": \"e\", \"sentence2\": \"\xFF\"}\n",
       2, 2, 3, 1, "caf" REPL, "x"},
  };
  for (const Utf8Case& c : cases) {
    SCOPED_TRACE(c.format);
    const std::string path = Write(std::string("utf8.") + c.format, c.text);
    std::ostringstream warnings;
    auto rows = ReadDataset(path, c.format, &warnings);
    ASSERT_TRUE(rows.ok()) << rows.status();
    ASSERT_EQ(rows->size(), c.examples);
    EXPECT_EQ((*rows)[c.index].a, c.a);
    EXPECT_EQ((*rows)[c.index].b, c.b);
    for (const Example& e : *rows) EXPECT_TRUE(IsValidUtf8(e.a) && IsValidUtf8(e.b));
    EXPECT_EQ(warnings.str(), Utf8Warning(path, c.first_line, c.lines));
  }
}

TEST(DatasetsTest, InvalidUtf8WarningGoesToStderrOnceAndBeforeErrors) {
  // By default the warning is one line on stderr, whatever the number of bad lines.
  std::string text = "s1\ts2\n";
  for (int i = 0; i < 50; ++i) text += i % 10 == 6 ? "x\xE9\ty\n" : "a\tb\n";
  const std::string path = Write("many_bad.tsv", text);
  ::testing::internal::CaptureStderr();
  auto rows = ReadDataset(path, "tsv");
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->size(), 50u);
  EXPECT_EQ(err, Utf8Warning(path, 8, 5));

  // A null stream: read the same, no warning.
  ::testing::internal::CaptureStderr();
  auto quiet = ReadDataset(path, "tsv", nullptr);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  ASSERT_TRUE(quiet.ok());
  EXPECT_EQ((*quiet)[6].a, "x" REPL);

  // A file that also fails: the warning, then the error (which quotes valid UTF-8).
  const std::string broken = Write("bad_and_broken.paws", "1\ta\tb\t1\n2\tc\td\t\xE9\n");
  std::ostringstream warnings;
  auto failed = ReadDataset(broken, "paws", &warnings);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().message(), broken + ":2: label '" REPL "' is not 0 or 1");
  EXPECT_EQ(warnings.str(), Utf8Warning(broken, 2, 1));
}

TEST(DatasetsTest, ValidFilesGiveNoWarning) {
  const std::pair<const char*, const char*> files[] = {
      {"data/stsbenchmark/sts-dev.csv", "stsb"},
      {"data/sick/SICK.txt", "sick"},
      {"data/paws-wiki/dev.tsv", "paws"},
      {"data/mrpc/msr_paraphrase_train.txt", "mrpc"},  // with a BOM
  };
  for (const auto& [path, format] : files) {
    std::ostringstream warnings;
    auto rows = ReadDataset(path, format, &warnings);
    ASSERT_TRUE(rows.ok()) << rows.status();
    EXPECT_EQ(warnings.str(), "") << path;
  }
  // Multi-byte text, a BOM, CRLF: read as it is, nothing on stderr.
  const std::string path = Write("valid.tsv",
                                 "\xEF\xBB\xBF"
                                 "s1\ts2\r\n"
                                 "caf\xC3\xA9\t\xE4\xB8\xAD\xE6\x96\x87\r\n"
                                 "\xF0\x9F\x98\x80\tna\xC3\xAFve\n");
  ::testing::internal::CaptureStderr();
  auto rows = ReadDataset(path, "tsv");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ((*rows)[0].a, "caf\xC3\xA9");
  EXPECT_EQ((*rows)[0].b, "\xE4\xB8\xAD\xE6\x96\x87");
  EXPECT_EQ((*rows)[1].a, "\xF0\x9F\x98\x80");
}

TEST(DatasetsTest, EpochOrder) {
  std::vector<int64_t> identity(10);
  std::iota(identity.begin(), identity.end(), 0);
  EXPECT_EQ(EpochOrder(10, 42, 0, false), identity);
  EXPECT_EQ(EpochOrder(10, 42, 3, false), identity);
  EXPECT_TRUE(EpochOrder(0, 42, 0, true).empty());
  EXPECT_TRUE(EpochOrder(-5, 42, 0, true).empty());
  EXPECT_EQ(EpochOrder(1, 42, 0, true), std::vector<int64_t>{0});

  const std::vector<int64_t> e0 = EpochOrder(1000, 42, 0, true);
  // A permutation, deterministic, different per epoch and per seed.
  std::vector<int64_t> sorted = e0;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> all(1000);
  std::iota(all.begin(), all.end(), 0);
  EXPECT_EQ(sorted, all);
  EXPECT_EQ(EpochOrder(1000, 42, 0, true), e0);
  EXPECT_NE(EpochOrder(1000, 42, 1, true), e0);
  EXPECT_NE(EpochOrder(1000, 43, 0, true), e0);
  EXPECT_NE(e0, all);
  // Pinned values: the documented SplitMix64 + Fisher-Yates, so a change of algorithm (or a
  // platform difference) shows here.
  EXPECT_EQ(EpochOrder(8, 0, 0, true), (std::vector<int64_t>{1, 0, 3, 5, 6, 7, 2, 4}));
  EXPECT_EQ(EpochOrder(8, 42, 2, true), (std::vector<int64_t>{1, 2, 3, 0, 6, 7, 5, 4}));
  // Roughly uniform: each of 4 items lands first about 1/4 of the time over 4000 epochs.
  std::vector<int> first(4, 0);
  for (int epoch = 0; epoch < 4000; ++epoch) ++first[EpochOrder(4, 7, epoch, true)[0]];
  for (int count : first) EXPECT_NEAR(count, 1000, 150);
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet

namespace tunefleet {
namespace trainer {
namespace {

// torch.utils.data.DistributedSampler(shuffle=False, drop_last=False) over 10 items, 4 ranks:
// indices padded to 12 with [0, 1], then indices[rank:12:4].
TEST(RankShard, MatchesDistributedSampler) {
  std::vector<int64_t> order(10);
  for (int i = 0; i < 10; ++i) order[i] = i;
  EXPECT_EQ(RankShard(order, 0, 4), (std::vector<int64_t>{0, 4, 8}));
  EXPECT_EQ(RankShard(order, 1, 4), (std::vector<int64_t>{1, 5, 9}));
  EXPECT_EQ(RankShard(order, 2, 4), (std::vector<int64_t>{2, 6, 0}));
  EXPECT_EQ(RankShard(order, 3, 4), (std::vector<int64_t>{3, 7, 1}));
  EXPECT_EQ(RankShard(order, 0, 1), order);
  // A shuffled order is sharded as it is; every rank gets ceil(n / world).
  const std::vector<int64_t> shuffled = EpochOrder(7, 42, 3, true);
  std::vector<int64_t> seen;
  for (int r = 0; r < 3; ++r) {
    const auto part = RankShard(shuffled, r, 3);
    EXPECT_EQ(part.size(), 3u);
    seen.insert(seen.end(), part.begin(), part.end());
  }
  std::sort(seen.begin(), seen.end());
  // All 7 examples, plus the order's first two again as padding.
  std::vector<int64_t> want = {0, 1, 2, 3, 4, 5, 6, shuffled[0], shuffled[1]};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(seen, want);
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
