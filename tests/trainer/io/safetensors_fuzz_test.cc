// The safetensors reader and writer (trainer/io/safetensors.h): round trips for every dtype, the
// bytes Hugging Face writes, one-line errors for each malformation, and a seeded fuzz of the
// header (bit flips, truncations, random bytes, length-field changes, JSON-level edits) that
// checks the reader never crashes and either succeeds or returns an error naming the file.
#include "trainer/io/safetensors.h"

#include <dirent.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <random>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tunefleet {
namespace trainer {
namespace {

using Json = nlohmann::ordered_json;

constexpr char kShard[] = "data/bert-tiny-random/model-00002-of-00002.safetensors";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::map<std::string, torch::Tensor> SeedTensors() {
  torch::manual_seed(1);
  return {
      {"a.weight", torch::randn({3, 4})},
      {"b.half", torch::randn({5}).to(torch::kFloat16)},
      {"c.bf16", torch::randn({2, 2}).to(torch::kBFloat16)},
      {"d.ids", torch::arange(3, torch::kInt64)},
      {"e.mask", torch::tensor({true, false, true, true})},
      {"f.empty", torch::empty({0, 3})},
      {"g.scalar", torch::tensor(2.5)},
      {"h.i8", torch::tensor({-1, 2, 3}, torch::kInt8)},
      {"i.f64", torch::randn({2}, torch::kFloat64)},
  };
}

std::string Seed() {
  auto bytes = SerializeSafetensors(SeedTensors(), {{"format", "pt"}, {"note", "seed"}});
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  return *bytes;
}

uint64_t HeaderLength(const std::string& file) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(file[i]);
  return n;
}

void SetHeaderLength(std::string& file, uint64_t n) {
  for (int i = 0; i < 8; ++i) file[i] = static_cast<char>((n >> (8 * i)) & 0xff);
}

// A file from header text and data bytes, with the length field set to match.
std::string Assemble(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  SetHeaderLength(out, header.size());
  return out + header + data;
}

SafetensorsReadOptions ToFloat32(bool on) {
  SafetensorsReadOptions options;
  options.to_float32 = on;
  return options;
}

std::string HeaderOf(const std::string& file) { return file.substr(8, HeaderLength(file)); }
std::string DataOf(const std::string& file) { return file.substr(8 + HeaderLength(file)); }

TEST(SafetensorsTest, RoundTripsEveryDtype) {
  const auto tensors = SeedTensors();
  auto parsed = ParseSafetensors(Seed(), "seed");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->metadata.at("note"), "seed");
  ASSERT_EQ(parsed->tensors.size(), tensors.size());
  for (const auto& [name, t] : tensors) {
    const torch::Tensor& got = parsed->tensors.at(name);
    EXPECT_EQ(got.scalar_type(), t.scalar_type()) << name;
    EXPECT_EQ(got.sizes(), t.sizes()) << name;
    EXPECT_TRUE(torch::equal(got, t)) << name;
  }
}

TEST(SafetensorsTest, ConvertsHalfAndBfloat16ToFloat32OnRequest) {
  auto parsed = ParseSafetensors(Seed(), "seed", ToFloat32(true));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const auto tensors = SeedTensors();
  for (const char* name : {"b.half", "c.bf16", "i.f64"}) {
    EXPECT_EQ(parsed->tensors.at(name).scalar_type(), torch::kFloat32) << name;
    EXPECT_TRUE(torch::equal(parsed->tensors.at(name), tensors.at(name).to(torch::kFloat32)));
  }
  EXPECT_EQ(parsed->tensors.at("d.ids").scalar_type(), torch::kInt64);
  EXPECT_EQ(parsed->tensors.at("e.mask").scalar_type(), torch::kBool);
}

// The writer reproduces, byte for byte, a file written by Hugging Face's safetensors.
TEST(SafetensorsTest, WritesTheBytesHuggingFaceWrites) {
  const std::string original = ReadAll(kShard);
  ASSERT_GT(original.size(), 1000u);
  auto parsed = ReadSafetensors(kShard);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->metadata, (std::map<std::string, std::string>{{"format", "pt"}}));
  auto again = SerializeSafetensors(parsed->tensors, parsed->metadata);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(*again == original) << HeaderOf(*again).substr(0, 200);
}

TEST(SafetensorsTest, WritesAtomicallyAndLeavesNoTemporaryFile) {
  const std::string dir = ::testing::TempDir() + "/atomic";
  mkdir(dir.c_str(), 0755);
  const std::string path = dir + "/m.safetensors";
  std::ofstream(path) << "old contents";
  ASSERT_TRUE(WriteSafetensors(path, SeedTensors()).ok());
  EXPECT_EQ(ReadAll(path), *SerializeSafetensors(SeedTensors()));
  DIR* d = opendir(dir.c_str());
  ASSERT_NE(d, nullptr);
  int files = 0;
  while (dirent* e = readdir(d)) files += e->d_name[0] != '.';
  closedir(d);
  EXPECT_EQ(files, 1);
  absl::Status s = WriteSafetensors(dir + "/no/such/dir/m.safetensors", SeedTensors());
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(absl::StrContains(s.message(), "no/such/dir/m.safetensors")) << s;
}

TEST(SafetensorsTest, MissingFileNamesIt) {
  auto r = ReadSafetensors("/nonexistent/x.safetensors");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::IsNotFound(r.status()));
  EXPECT_TRUE(absl::StartsWith(r.status().message(), "/nonexistent/x.safetensors: ")) << r.status();
}

// Each malformation gives one line, starting with the file's name, saying what is wrong.
TEST(SafetensorsTest, MalformedFilesGiveOneLineErrors) {
  const std::string seed = Seed();
  const std::string header = HeaderOf(seed);
  const std::string data = DataOf(seed);
  auto edit = [&](const std::function<void(Json&)>& f) {
    Json j = Json::parse(header);
    f(j);
    return Assemble(j.dump(), data);
  };
  std::string big_length = seed;
  SetHeaderLength(big_length, 1ull << 40);
  std::string past_end = seed;
  SetHeaderLength(past_end, seed.size());
  std::string dup = header;
  dup.insert(dup.find("\"dtype\""), "\"dtype\":\"F32\",");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"abc", "shorter than the 8-byte header length"},
      {big_length, "exceeds the limit"},
      {past_end, "runs past the end of the file"},
      {Assemble(" " + header, data), "does not start with '{'"},
      {Assemble(header.substr(0, 40), data), "invalid JSON header"},
      {Assemble(dup, data), "duplicate key \"dtype\""},
      {seed.substr(0, seed.size() - 3), "truncated"},
      {seed + "xx", "tensors cover"},
      {edit([](Json& j) { j["a.weight"]["dtype"] = "F31"; }), "unknown dtype \"F31\""},
      {edit([](Json& j) { j["a.weight"]["dtype"] = "I64"; }), "needs 96"},
      {edit([](Json& j) {
         j["a.weight"]["shape"] = {3, -4};
       }),
       "non-negative integers"},
      {edit([](Json& j) {
         j["a.weight"]["shape"] = {1ull << 62, 1ull << 62};
       }),
       "overflows"},
      {edit([](Json& j) {
         j["a.weight"]["data_offsets"] = {0.0, 48.0};
       }),
       "[BEGIN, END]"},
      {edit([](Json& j) { j["a.weight"]["extra"] = 1; }), "unknown field \"extra\""},
      {edit([](Json& j) { j["__metadata__"]["n"] = 1; }), "must be a string"},
      {edit([](Json& j) { j.erase("h.i8"); }), "leave a gap"},
      {edit([](Json& j) { j["z.copy"] = j["a.weight"]; }), "overlap"},
      {edit([](Json& j) {
         j["a.weight"] = {1, 2};
       }),
       "expected an object"},
      {Assemble("{\"x\":[[[]]]}", ""), "nests deeper"},
  };
  for (const auto& [bytes, expected] : cases) {
    auto r = ParseSafetensors(bytes, "m.safetensors");
    ASSERT_FALSE(r.ok()) << expected;
    const std::string message(r.status().message());
    EXPECT_TRUE(absl::StartsWith(message, "m.safetensors: ")) << message;
    EXPECT_TRUE(absl::StrContains(message, expected)) << message << " / wanted: " << expected;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(SafetensorsTest, EmptyFileOfNoTensorsIsValid) {
  auto r = ParseSafetensors(Assemble("{}      ", ""), "empty");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->tensors.empty());
}

// ---- the fuzz ----

class Mutator {
 public:
  explicit Mutator(const std::string& seed)
      : seed_(seed), header_(Json::parse(HeaderOf(seed))), data_(DataOf(seed)), rng_(20240611) {
    for (const auto& [k, v] : header_.items()) {
      if (k != "__metadata__") names_.push_back(k);
    }
  }

  std::string Next() {
    std::string out;
    switch (Pick(6)) {
      case 0:
        out = JsonEdit();
        break;
      case 1:
        out = JsonEdit();
        ByteEdits(out);
        break;
      default:
        out = seed_;
        ByteEdits(out);
        break;
    }
    return out;
  }

 private:
  uint64_t Pick(uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng_); }

  void ByteEdits(std::string& f) {
    const int edits = 1 + Pick(3);
    for (int i = 0; i < edits && !f.empty(); ++i) {
      const uint64_t n = f.size() >= 8 ? std::min<uint64_t>(HeaderLength(f), f.size() - 8) : 0;
      // Positions mostly in the header, where the parser looks.
      auto pos = [&] { return n > 0 && Pick(4) != 0 ? 8 + Pick(n) : Pick(f.size()); };
      switch (Pick(7)) {
        case 0:  // bit flips
          for (int b = 0, k = 1 + Pick(8); b < k; ++b) f[pos()] ^= static_cast<char>(1 << Pick(8));
          break;
        case 1:  // truncation
          f.resize(Pick(f.size() + 1));
          break;
        case 2:  // random bytes
          for (int b = 0, k = 1 + Pick(16); b < k; ++b) f[pos()] = static_cast<char>(Pick(256));
          break;
        case 3:  // printable JSON-ish characters
          for (int b = 0, k = 1 + Pick(4); b < k; ++b)
            f[pos()] = "{}[]\",:0123456789-. e\\"[Pick(22)];
          break;
        case 4: {  // insert or delete a few header bytes, keeping the length field
          const uint64_t at = pos();
          if (Pick(2)) {
            f.insert(at, std::string(1 + Pick(4), "{}[]\":,0 a"[Pick(10)]));
          } else {
            f.erase(at, 1 + Pick(4));
          }
          break;
        }
        case 5: {  // the length field
          if (f.size() < 8) break;
          const uint64_t choices[] = {0,
                                      1,
                                      7,
                                      n - 1,
                                      n + 1,
                                      n + 8,
                                      f.size() - 8,
                                      f.size(),
                                      kMaxSafetensorsHeaderBytes,
                                      kMaxSafetensorsHeaderBytes + 1,
                                      ~0ull,
                                      1ull << 63,
                                      rng_()};
          SetHeaderLength(f, choices[Pick(std::size(choices))]);
          break;
        }
        default:  // append or chop data bytes
          if (Pick(2))
            f.append(1 + Pick(16), static_cast<char>(Pick(256)));
          else
            f.resize(f.size() - std::min<uint64_t>(f.size(), 1 + Pick(16)));
          break;
      }
    }
  }

  Json RandomValue() {
    switch (Pick(16)) {
      case 0:
        return -1;
      case 1:
        return 0;
      case 2:
        return 1;
      case 3:
        return 1ull << 63;
      case 4:
        return ~0ull;
      case 5:
        return 1.5;
      case 6:
        return 1e30;
      case 7:
        return "F32";
      case 8:
        return nullptr;
      case 9:
        return Json::array();
      case 10:
        return Json::object();
      case 11:
        return true;
      case 12:
        return {0, data_.size()};
      case 13:
        return {Pick(64), Pick(64)};
      case 14:
        return {Pick(8), Pick(8), Pick(8)};
      default:
        return "x";
    }
  }

  std::string JsonEdit() {
    Json j = header_;
    const int edits = 1 + Pick(2);
    for (int i = 0; i < edits; ++i) {
      const std::string name = names_[Pick(names_.size())];
      Json& t = j.contains(name) ? j[name] : j[names_[0]];
      const char* fields[] = {"dtype", "shape", "data_offsets"};
      const char* field = fields[Pick(3)];
      try {  // an edit that does not fit the value's JSON type is skipped
        switch (Pick(12)) {
          case 0:
            t[field] = RandomValue();
            break;
          case 1:
            t.erase(field);
            break;
          case 2:
            t["extra"] = RandomValue();
            break;
          case 3: {
            static const char* dtypes[] = {"BOOL", "U8",      "I8",  "I16", "U16", "F16",
                                           "BF16", "I32",     "U32", "F32", "F64", "I64",
                                           "U64",  "F8_E4M3", "Q4",  ""};
            t["dtype"] = dtypes[Pick(std::size(dtypes))];
            break;
          }
          case 4: {  // nudge an offset
            if (!t.contains("data_offsets") || !t["data_offsets"].is_array()) break;
            Json& o = t["data_offsets"][Pick(2)];
            if (o.is_number_unsigned()) o = o.get<uint64_t>() + static_cast<int64_t>(Pick(17)) - 8;
            break;
          }
          case 5: {  // nudge a dimension, add or drop one
            if (!t.contains("shape") || !t["shape"].is_array()) break;
            Json& s = t["shape"];
            if (Pick(3) == 0 || s.empty())
              s.push_back(Pick(3));
            else if (Pick(2))
              s.erase(s.size() - 1);
            else
              s[Pick(s.size())] = static_cast<int64_t>(Pick(6)) - 1;
            break;
          }
          case 6:
            j.erase(name);
            break;
          case 7:
            j[name + "_copy"] = t;
            break;
          case 8: {  // swap two tensors' offsets (valid when the sizes agree)
            const std::string other = names_[Pick(names_.size())];
            if (j.contains(other) && j.contains(name)) {
              std::swap(j[name]["data_offsets"], j[other]["data_offsets"]);
            }
            break;
          }
          case 9:
            j["__metadata__"] = Pick(2) ? RandomValue() : Json{{"k", RandomValue()}};
            break;
          case 10:
            t = RandomValue();
            break;
          default:
            j[name]["shape"] = {1, Json::array({1})};
            break;
        }
      } catch (const Json::exception&) {
      }
    }
    std::string text = j.dump();
    if (Pick(4) == 0 && text.size() > 2) {  // a duplicate key, which a JSON object cannot hold
      const size_t at = text.find("\"dtype\"");
      if (at != std::string::npos) text.insert(at, "\"dtype\":\"F32\",");
    }
    if (Pick(2)) text.append((8 - text.size() % 8) % 8, ' ');
    std::string data = data_;
    if (Pick(8) == 0) data.resize(Pick(data.size() + 1));
    return Assemble(text, data);
  }

  std::string seed_;
  Json header_;
  std::string data_;
  std::vector<std::string> names_;
  std::mt19937_64 rng_;
};

// A message with numbers and quoted strings blanked: the kind of error.
std::string ErrorKind(const std::string& message) {
  std::string out;
  bool quoted = false;
  for (char c : message.substr(0, 60)) {
    if (c == '"') quoted = !quoted;
    if (!quoted && !(c >= '0' && c <= '9')) out += c;
  }
  return out;
}

TEST(SafetensorsFuzzTest, MutatedHeadersParseOrFailCleanly) {
  constexpr int kIterations = 100000;
  Mutator mutator(Seed());
  int ok = 0, failed = 0;
  std::set<std::string> kinds;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kIterations; ++i) {
    const std::string bytes = mutator.Next();
    auto r = ParseSafetensors(bytes, "fuzz.safetensors", ToFloat32(i % 2 == 1));
    if (r.ok()) {
      ++ok;
      // A success accounts for every data byte (before conversion).
      uint64_t total = 0;
      auto header = ParseSafetensorsHeader(bytes, "fuzz.safetensors");
      ASSERT_TRUE(header.ok()) << header.status();
      for (const SafetensorsEntry& e : header->entries) total += e.end - e.begin;
      ASSERT_EQ(total, bytes.size() - header->data_start);
      ASSERT_EQ(r->tensors.size(), header->entries.size());
    } else {
      ++failed;
      const std::string message(r.status().message());
      ASSERT_TRUE(absl::StartsWith(message, "fuzz.safetensors: ")) << message;
      ASSERT_EQ(message.find('\n'), std::string::npos) << message;
      kinds.insert(ErrorKind(message));
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "fuzz: " << kIterations << " mutated files in " << seconds << " s: " << ok
            << " parsed, " << failed << " rejected, " << kinds.size() << " kinds of error\n";
  EXPECT_GT(ok, 100);  // some mutations stay valid (same-size dtype swaps, offset swaps)
  EXPECT_GT(failed, kIterations / 2);
  EXPECT_GE(kinds.size(), 15u);  // the mutations reach every stage of validation
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
