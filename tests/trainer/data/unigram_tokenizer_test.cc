// The SentencePiece unigram tokenizer against Hugging Face: transformers' AutoTokenizer on
// data/golden/families/xlm-r (sentencepiece.bpe.model + tokenizer.json), whose input_ids are
// data/golden/families/family_goldens.json["xlm-r"]["ids"] (make_family_goldens.py). Both
// factories (the .model with fairseq's ids, and tokenizer.json's model and normalizer) must give
// every golden line exactly, through Encode / EncodePair (truncation included) and, for the
// lines HF did not truncate, through Tokenize alone.
#include "trainer/data/unigram_tokenizer.h"

#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/test_util/temp_dir.h"

namespace tunefleet {
namespace trainer {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

constexpr char kModel[] = "data/golden/families/xlm-r/sentencepiece.bpe.model";
constexpr char kTokenizerJson[] = "data/golden/families/xlm-r/tokenizer.json";
constexpr char kGolden[] = "data/golden/families/family_goldens.json";

Json ReadJson(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  return Json::parse(in);
}

const UnigramTokenizer& FromModel() {
  static const UnigramTokenizer* const t = [] {
    auto loaded = UnigramTokenizer::FromSentencePieceModel(kModel);
    EXPECT_TRUE(loaded.ok()) << loaded.status();
    return new UnigramTokenizer(std::move(loaded).value());
  }();
  return *t;
}

// As the folder loader sets them: the template and added tokens from tokenizer.json.
const UnigramTokenizer& FromJson() {
  static const UnigramTokenizer* const t = [] {
    const Json fast = ReadJson(kTokenizerJson);
    auto loaded =
        UnigramTokenizer::FromTokenizerJson(fast["model"], fast["normalizer"], kTokenizerJson);
    EXPECT_TRUE(loaded.ok()) << loaded.status();
    auto* tokenizer = new UnigramTokenizer(std::move(loaded).value());
    std::vector<AddedToken> added;
    for (const Json& a : fast["added_tokens"]) {
      added.push_back({a["content"].get<std::string>(), a["id"].get<int32_t>(),
                       a["lstrip"].get<bool>(), a["rstrip"].get<bool>()});
    }
    tokenizer->set_added_tokens(added);
    tokenizer->set_special_template(
        SpecialTemplate::Roberta(tokenizer->TokenId("<s>"), tokenizer->TokenId("</s>")));
    return tokenizer;
  }();
  return *t;
}

const Json& Golden() {
  static const Json* const golden = new Json(ReadJson(kGolden)["xlm-r"]["ids"]);
  return *golden;
}

// Every golden line through `t`: exactly with Encode/EncodePair, and without the specials through
// Tokenize where HF did not truncate. Lists the lines that differ.
void ExpectGoldenParity(const Tokenizer& t, const char* name) {
  int encoded = 0, matched = 0, tokenized = 0, tokenized_matched = 0;
  std::vector<std::string> diffs;
  for (const Json& line : Golden()) {
    const std::string text = line["text"].get<std::string>();
    const int64_t max_len = line["max_len"].get<int64_t>();
    const auto golden = line["ids"].get<std::vector<int32_t>>();
    const bool pair = line.contains("pair");
    const Encoding e = pair ? t.EncodePair(text, line["pair"].get<std::string>(), max_len)
                            : t.Encode(text, max_len);
    ++encoded;
    if (e.ids == golden) {
      ++matched;
    } else {
      diffs.push_back(absl::StrCat("encode \"", text.substr(0, 60), "\" max_len ", max_len,
                                   "\n  ours ", absl::StrJoin(e.ids, " "), "\n  HF   ",
                                   absl::StrJoin(golden, " ")));
    }
    EXPECT_EQ(e.token_type_ids, std::vector<int32_t>(e.ids.size(), 0)) << text;
    if (!pair && static_cast<int64_t>(golden.size()) < max_len) {
      ++tokenized;
      const std::vector<int32_t> inner(golden.begin() + 1, golden.end() - 1);
      const std::vector<int32_t> ours = t.Tokenize(text);
      if (ours == inner) {
        ++tokenized_matched;
      } else {
        diffs.push_back(absl::StrCat("tokenize \"", text.substr(0, 60), "\"\n  ours ",
                                     absl::StrJoin(ours, " "), "\n  HF   ",
                                     absl::StrJoin(inner, " ")));
      }
    }
  }
  std::cout << name << ": encode " << matched << " / " << encoded << ", tokenize "
            << tokenized_matched << " / " << tokenized << " golden lines identical\n";
  EXPECT_EQ(encoded, 32);    // the golden file's lines; fewer would hide a loss of parity
  EXPECT_EQ(tokenized, 19);  // single texts shorter than their max_len
  EXPECT_EQ(matched, encoded) << absl::StrJoin(diffs, "\n");
  EXPECT_EQ(tokenized_matched, tokenized) << absl::StrJoin(diffs, "\n");
}

TEST(UnigramTokenizerTest, SentencePieceModelReproducesGoldenIds) {
  ExpectGoldenParity(FromModel(), "sentencepiece.bpe.model");
}

TEST(UnigramTokenizerTest, TokenizerJsonReproducesGoldenIds) {
  ExpectGoldenParity(FromJson(), "tokenizer.json");
}

TEST(UnigramTokenizerTest, VocabAndSpecialIdsAsHuggingFace) {
  for (const UnigramTokenizer* t : {&FromModel(), &FromJson()}) {
    EXPECT_STREQ(t->kind(), "Unigram");
    EXPECT_EQ(t->vocab_size(), 4002);
    EXPECT_EQ(t->TokenId("<s>"), 0);
    EXPECT_EQ(t->TokenId("<pad>"), 1);
    EXPECT_EQ(t->TokenId("</s>"), 2);
    EXPECT_EQ(t->TokenId("<unk>"), 3);
    EXPECT_EQ(t->TokenId("<mask>"), 4001);
    EXPECT_EQ(t->TokenId("no such piece"), -1);
    EXPECT_EQ(t->pad_id(), 1);
    EXPECT_EQ(t->unk_id(), 3);
  }
  // The .model's fairseq ids are tokenizer.json's, piece by piece.
  const Json vocab = ReadJson(kTokenizerJson)["model"]["vocab"];
  ASSERT_EQ(vocab.size(), 4002u);
  for (size_t id = 0; id < vocab.size(); ++id) {
    ASSERT_EQ(FromModel().TokenId(vocab[id][0].get<std::string>()), static_cast<int32_t>(id));
  }
  const SpecialTemplate& s = FromModel().special_template();
  EXPECT_EQ(s.single_prefix, std::vector<int32_t>{0});
  EXPECT_EQ(s.pair_middle, (std::vector<int32_t>{2, 2}));
  ASSERT_EQ(FromModel().added_tokens().size(), 5u);
  EXPECT_EQ(FromModel().added_tokens()[4].content, "<mask>");
  EXPECT_EQ(FromModel().added_tokens()[4].id, 4001);
}

TEST(UnigramTokenizerTest, MetaspaceSplitsBeforeEveryMetaspace) {
  // Without a normalizer (nmt_nfkc maps "▁" to a space), a "▁" in the text starts a piece.
  const Json model = ReadJson(kTokenizerJson)["model"];
  auto bare = UnigramTokenizer::FromTokenizerJson(model, nullptr, kTokenizerJson);
  ASSERT_TRUE(bare.ok()) << bare.status();
  using V = std::vector<std::string>;
  EXPECT_EQ(bare->PreTokenize("a b"), (V{"▁a", "▁b"}));
  EXPECT_EQ(bare->PreTokenize("a▁b ▁▁c"), (V{"▁a", "▁b", "▁", "▁c"}));
  EXPECT_EQ(bare->PreTokenize("  \t\n\u3000\u00a0 "), V{});
}

TEST(UnigramTokenizerTest, PrecompiledCharsmapAsHuggingFace) {
  const UnigramTokenizer& t = FromModel();
  using V = std::vector<std::string>;
  // nmt_nfkc: full width to ASCII, the ﬁ ligature to "fi", "▁", U+200B and U+FEFF to a space.
  EXPECT_EQ(t.PreTokenize("ＡＢ\u3000ﬁ"), (V{"▁AB", "▁fi"}));
  EXPECT_EQ(t.PreTokenize("a▁b\u200bc\ufeffd"), (V{"▁a", "▁b", "▁c", "▁d"}));
  // A cluster under 6 bytes is looked up whole: e + U+0301 composes to é.
  EXPECT_EQ(t.PreTokenize("e\u0301cole"), V{"▁\u00e9cole"});
  // ... and the shortest key that is a prefix of it stands for all of it (spm_precompiled):
  // ﬁ + U+0301 is one cluster whose prefix ﬁ maps to "fi", so the accent goes.
  EXPECT_EQ(t.PreTokenize("\ufb01\u0301"), V{"▁fi"});
}

TEST(UnigramTokenizerTest, IllFormedUtf8ReadsAsReplacementCharacter) {
  const UnigramTokenizer& t = FromModel();
  EXPECT_EQ(t.Tokenize("a\xE2\x82"
                       "b"),
            t.Tokenize("a\xEF\xBF\xBD"
                       "b"));
  EXPECT_EQ(t.Tokenize(""), std::vector<int32_t>{});
}

// Arbitrary bytes (ill-formed UTF-8, NULs, controls, mixed scripts) give ids in range.
TEST(UnigramTokenizerTest, ArbitraryBytesGiveIdsInRange) {
  const UnigramTokenizer& t = FromModel();
  const std::string alphabet[] = {"a",
                                  "\xE2\x96\x81",
                                  " ",
                                  std::string(1, '\0'),
                                  "\xFF",
                                  "\xE2\x82",
                                  "\xEA\xB0\x80",
                                  "e\xCC\x81",
                                  "\r\n",
                                  "\xEF\xBC\xA1",
                                  "<s>",
                                  "\xF0\x9F\xA4\x97",
                                  "\xE2\x80\x8D",
                                  "\t"};
  uint64_t state = 12345;
  int64_t tokens = 0;
  for (int round = 0; round < 2000; ++round) {
    std::string text;
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const int length = static_cast<int>((state >> 33) % 40);
    for (int i = 0; i < length; ++i) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      text += alphabet[(state >> 33) % (sizeof(alphabet) / sizeof(alphabet[0]))];
    }
    const std::vector<int32_t> ids = t.Encode(text, 0).ids;
    tokens += static_cast<int64_t>(ids.size());
    for (const int32_t id : ids) {
      ASSERT_GE(id, 0);
      ASSERT_LT(id, t.vocab_size());
    }
  }
  EXPECT_GT(tokens, 20000);  // the texts were not all empty
}

TEST(UnigramTokenizerTest, MissingOrMalformedModelNamesTheFile) {
  const std::string missing = TestTempPath("no-such.model");
  auto loaded = UnigramTokenizer::FromSentencePieceModel(missing);
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(std::string(loaded.status().message()), HasSubstr(missing));

  const std::string bad = TestTempPath("malformed.model");
  std::ofstream(bad) << "this is not a protobuf \xff\xff\xff\xff";
  loaded = UnigramTokenizer::FromSentencePieceModel(bad);
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(std::string(loaded.status().message()), HasSubstr(bad));

  // A truncated real model: protobuf fails to parse it, or it lacks pieces.
  std::ifstream in(kModel, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  const std::string truncated = TestTempPath("truncated.model");
  std::ofstream(truncated, std::ios::binary) << bytes.str().substr(0, 40);
  loaded = UnigramTokenizer::FromSentencePieceModel(truncated);
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(std::string(loaded.status().message()), HasSubstr(truncated));
}

TEST(UnigramTokenizerTest, BadTokenizerJsonNamesFileAndKey) {
  Json model = ReadJson(kTokenizerJson)["model"];
  const Json normalizer = ReadJson(kTokenizerJson)["normalizer"];
  Json no_vocab = model;
  no_vocab.erase("vocab");
  auto loaded = UnigramTokenizer::FromTokenizerJson(no_vocab, normalizer, "x/tokenizer.json");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().message(),
            "x/tokenizer.json: model.vocab: expected a non-empty array of [piece, score]");
  Json bad_entry = model;
  bad_entry["vocab"][7] = "▁a";
  loaded = UnigramTokenizer::FromTokenizerJson(bad_entry, normalizer, "x/tokenizer.json");
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(std::string(loaded.status().message()), HasSubstr("model.vocab[7]"));
  loaded = UnigramTokenizer::FromTokenizerJson(model, Json{{"type", "NFKC"}}, "x/tokenizer.json");
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(std::string(loaded.status().message()), HasSubstr("x/tokenizer.json: normalizer"));
  // A Sequence with Replace(" {2,}" -> " ") is XLM-R's newer conversion: same ids.
  const Json sequence = {
      {"type", "Sequence"},
      {"normalizers",
       {{{"type", "Replace"}, {"pattern", {{"Regex", " {2,}"}}}, {"content", " "}}, normalizer}}};
  loaded = UnigramTokenizer::FromTokenizerJson(model, sequence, "x/tokenizer.json");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->Tokenize("  leading and   repeated  "),
            FromJson().Tokenize("  leading and   repeated  "));
}

// A rough figure, not a timed test.
TEST(UnigramTokenizerTest, PrintsThroughput) {
  std::vector<std::string> texts;
  for (const Json& line : Golden()) texts.push_back(line["text"].get<std::string>());
  const UnigramTokenizer& t = FromModel();
  int64_t tokens = 0, bytes = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int round = 0; round < 200; ++round) {
    for (const std::string& text : texts) {
      tokens += static_cast<int64_t>(t.Tokenize(text).size());
      bytes += static_cast<int64_t>(text.size());
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "unigram throughput: " << static_cast<int64_t>(tokens / seconds) << " tokens/s, "
            << static_cast<int64_t>(bytes / seconds / 1e6 * 10) / 10.0 << " MB/s (one thread)\n";
  EXPECT_GT(tokens, 0);
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
