// `trainer encode` (trainer/commands/encode_command.h) end to end on data/bert-tiny-random:
// tokenizer + model + pooling reproduce transformers' mean-pooled embeddings
// (data/golden/forward_sts_dev.json) in input order, as JSON lines and as .npy;
// sentence-transformers pooling is honoured; bad command lines and folders give exit code 2;
// invalid UTF-8 in the input is read as U+FFFD with one warning naming the file and its first such
// line, and valid input gives none.
#include "trainer/commands/encode_command.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/trainer/testing/trainer_test_util.h"
#include "trainer/model/bert_model.h"
#include "trainer/model/hf_model_folder.h"

namespace tunefleet {
namespace trainer {
namespace {

using Json = nlohmann::json;

constexpr char kModel[] = "data/bert-tiny-random";

struct Golden {
  std::vector<std::string> sentences;
  std::vector<std::vector<float>> mean_pooled;
};

const Golden& Reference() {
  static const Golden* golden = [] {
    std::ifstream in("data/golden/forward_sts_dev.json");
    const Json j = Json::parse(in);
    return new Golden{j.at("sentences").get<std::vector<std::string>>(),
                      j.at("mean_pooled").get<std::vector<std::vector<float>>>()};
  }();
  return *golden;
}

// The 64 golden sentences in reverse order (so batching by length must restore the order), with
// an empty line in the middle.
std::string WriteInput() {
  const std::string path = ::testing::TempDir() + "/sentences.txt";
  std::ofstream out(path);
  for (int i = 63; i >= 32; --i) out << Reference().sentences[i] << "\n";
  out << "\n";
  for (int i = 31; i >= 0; --i) out << Reference().sentences[i] << "\r\n";
  return path;
}

// Row r of the output against golden sentence 63 - r (row 32 is the empty line).
void ExpectGolden(const std::vector<std::vector<float>>& rows) {
  ASSERT_EQ(rows.size(), 65u);
  double worst = 0;
  for (int r = 0; r < 65; ++r) {
    if (r == 32) continue;
    const int g = r < 32 ? 63 - r : 64 - r;
    ASSERT_EQ(rows[r].size(), 128u);
    for (int k = 0; k < 128; ++k) {
      worst = std::max<double>(worst, std::abs(rows[r][k] - Reference().mean_pooled[g][k]));
    }
  }
  std::cout << "encode vs transformers: max |diff| " << worst << "\n";
  EXPECT_LT(worst, 1e-5);
}

int Encode(const std::vector<std::string>& args) { return RunEncode(args); }

TEST(EncodeCommandTest, JsonLinesMatchTransformersInInputOrder) {
  const std::string out = ::testing::TempDir() + "/emb.jsonl";
  ASSERT_EQ(
      Encode({"--model", kModel, "--input", WriteInput(), "--output", out, "--batch_size", "7"}),
      0);
  std::vector<std::vector<float>> rows;
  std::istringstream lines(ReadAll(out));
  for (std::string line; std::getline(lines, line);) {
    rows.push_back(Json::parse(line).at("embedding").get<std::vector<float>>());
  }
  ExpectGolden(rows);
}

TEST(EncodeCommandTest, NpyHoldsTheSameEmbeddings) {
  const std::string out = ::testing::TempDir() + "/emb.npy";
  ASSERT_EQ(Encode({"--model", kModel, "--input", WriteInput(), "--output", out}), 0);
  const std::string bytes = ReadAll(out);
  ASSERT_GT(bytes.size(), 10u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const size_t header =
      10 + static_cast<unsigned char>(bytes[8]) + 256 * static_cast<unsigned char>(bytes[9]);
  EXPECT_EQ(header % 64, 0u);
  EXPECT_NE(bytes.find("'shape': (65, 128)"), std::string::npos) << bytes.substr(0, header);
  ASSERT_EQ(bytes.size(), header + 65 * 128 * sizeof(float));
  std::vector<std::vector<float>> rows(65, std::vector<float>(128));
  for (int r = 0; r < 65; ++r) std::memcpy(rows[r].data(), bytes.data() + header + r * 512, 512);
  ExpectGolden(rows);
}

TEST(EncodeCommandTest, UsesTheFolderPoolingUnlessTold) {
  auto model = LoadBertModel(kModel);
  ASSERT_TRUE(model.ok()) << model.status();
  const std::string dir = ::testing::TempDir() + "/st_cls";
  CheckpointSaveOptions options;
  options.source_dir = kModel;
  options.pooling = "cls";
  ASSERT_TRUE(SaveBertModel(*model, dir, options).ok());
  const std::string in = ::testing::TempDir() + "/one.txt";
  std::ofstream(in) << "A man is playing a guitar.\n";
  const std::string cls = ::testing::TempDir() + "/cls.jsonl",
                    mean = ::testing::TempDir() + "/mean.jsonl";
  ASSERT_EQ(Encode({"--model", dir, "--input", in, "--output", cls}), 0);
  ASSERT_EQ(Encode({"--model", dir, "--input", in, "--output", mean, "--pooling", "mean"}), 0);
  const auto a = Json::parse(ReadAll(cls)).at("embedding").get<std::vector<float>>();
  const auto b = Json::parse(ReadAll(mean)).at("embedding").get<std::vector<float>>();
  ASSERT_EQ(a.size(), 128u);
  EXPECT_NE(a, b);
}

std::vector<std::vector<float>> JsonRows(const std::string& path) {
  std::vector<std::vector<float>> rows;
  std::istringstream lines(ReadAll(path));
  for (std::string line; std::getline(lines, line);) {
    rows.push_back(Json::parse(line).at("embedding").get<std::vector<float>>());
  }
  return rows;
}

// The stderr lines that mention invalid UTF-8.
std::vector<std::string> Utf8Warnings(const std::string& err) {
  std::vector<std::string> found;
  std::istringstream lines(err);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("invalid UTF-8") != std::string::npos) found.push_back(line);
  }
  return found;
}

TEST(EncodeCommandTest, InvalidUtf8WarnsOnceAndEncodesWithoutTheBadBytes) {
  const std::string bad = ::testing::TempDir() + "/bad_utf8.txt";
  std::ofstream(bad, std::ios::binary) << "A man is playing a guitar.\n"
                                          "Caf\xE9 au lait\r\n"
                                          "\xFF\xFE\n"
                                          "A wom\xC0\x80"
                                          "an is slicing \xE2\x82"
                                          "an onion.\n";
  const std::string clean = ::testing::TempDir() + "/clean_utf8.txt";
  std::ofstream(clean, std::ios::binary) << "A man is playing a guitar.\n"
                                            "Caf au lait\n"
                                            "\n"
                                            "A woman is slicing an onion.\n";
  const std::string bad_out = ::testing::TempDir() + "/bad_utf8.jsonl";
  const std::string clean_out = ::testing::TempDir() + "/clean_utf8.jsonl";
  ::testing::internal::CaptureStderr();
  const int rc = Encode({"--model", kModel, "--input", bad, "--output", bad_out});
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(rc, 0) << err;
  EXPECT_THAT(Utf8Warnings(err),
              ::testing::ElementsAre(
                  "trainer: warning: " + bad +
                  ":2: invalid UTF-8 (3 lines; each bad byte sequence read as U+FFFD, which the "
                  "tokenizer drops)"))
      << err;
  ::testing::internal::CaptureStderr();
  ASSERT_EQ(Encode({"--model", kModel, "--input", clean, "--output", clean_out}), 0);
  EXPECT_THAT(Utf8Warnings(::testing::internal::GetCapturedStderr()), ::testing::IsEmpty());
  // The embeddings are those of the text without the bad bytes, one row per line.
  const auto bad_rows = JsonRows(bad_out), clean_rows = JsonRows(clean_out);
  ASSERT_EQ(bad_rows.size(), 4u);
  EXPECT_EQ(bad_rows, clean_rows);
}

TEST(EncodeCommandTest, ValidInputGivesNoWarning) {
  const std::string in = ::testing::TempDir() + "/multibyte.txt";
  std::ofstream(in, std::ios::binary) << "Caf\xC3\xA9 au lait\n\xE4\xB8\xAD\xE6\x96\x87\r\n"
                                         "\xF0\x9F\x98\x80 na\xC3\xAFve\n";
  ::testing::internal::CaptureStderr();
  const int rc = Encode(
      {"--model", kModel, "--input", in, "--output", ::testing::TempDir() + "/multibyte.jsonl"});
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 0) << err;
  EXPECT_THAT(Utf8Warnings(err), ::testing::IsEmpty()) << err;
}

TEST(EncodeCommandTest, BadArgumentsAndFoldersExitTwo) {
  const std::string in = WriteInput(), out = ::testing::TempDir() + "/x.jsonl";
  EXPECT_EQ(Encode({"--input", in, "--output", out}), 2);
  EXPECT_EQ(Encode({"--model", kModel, "--input", in, "--output", out, "--batch_size", "0"}), 2);
  EXPECT_EQ(Encode({"--model", kModel, "--input", in, "--output", out, "--pooling", "sum"}), 2);
  EXPECT_EQ(Encode({"--model", "/nonexistent", "--input", in, "--output", out}), 2);
  EXPECT_EQ(Encode({"--model", kModel, "--input", "/nonexistent.txt", "--output", out}), 2);
  EXPECT_EQ(Encode({"--model", kModel, "--input", in, "--output", "/nonexistent/dir/x.jsonl"}), 2);
  EXPECT_EQ(Encode({"--help"}), 0);
}

// A model_type no family reads: one line naming config.json, the key and the known families.
TEST(EncodeCommandTest, UnknownModelTypeExitsTwoInOneLine) {
  const std::string dir = FreshTestDir("gpt2_folder");
  WriteTinyBertFolder(dir, TinyBertCheckpoint().tensors);
  std::string config = ReadAll(dir + "/config.json");
  const size_t at = config.find("\"model_type\": \"bert\"");
  ASSERT_NE(at, std::string::npos);
  WriteAll(dir + "/config.json", config.replace(at, 20, "\"model_type\": \"gpt2\""));
  WriteAll(dir + "/vocab.txt", ReadAll(std::string(kModel) + "/vocab.txt"));
  const std::string in = WriteInput(), out = ::testing::TempDir() + "/gpt2.jsonl";
  ::testing::internal::CaptureStderr();
  const int rc = Encode({"--model", dir, "--input", in, "--output", out});
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 2);
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  // The known families are listed (the registry's own test checks the list).
  EXPECT_THAT(err,
              ::testing::HasSubstr(dir + "/config.json: key \"model_type\" is \"gpt2\", "
                                         "which no model family reads (known: bert, roberta, "));
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
