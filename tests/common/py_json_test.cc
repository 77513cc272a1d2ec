// Python's json module as common/py_json.h mirrors it: float repr, string escapes, and NaN /
// Infinity kept through a parse and dump.
#include "common/py_json.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <limits>
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(PyJsonTest, JsonFloatIsPythonRepr) {
  const std::vector<std::pair<double, std::string>> cases = {
      {0.0, "0.0"},
      {-0.0, "-0.0"},
      {5e-324, "5e-324"},
      {1.7976931348623157e308, "1.7976931348623157e+308"},
      {1e15, "1000000000000000.0"},
      {1e16, "1e+16"},
      {0.0001, "0.0001"},
      {0.00001, "1e-05"},
      {100000.0, "100000.0"},
      {123456789012345678.0, "1.2345678901234568e+17"},
      {0.1, "0.1"},
      {1.0 / 3, "0.3333333333333333"},
      {2.5e-05, "2.5e-05"},
      {-1.5, "-1.5"},
      {1e22, "1e+22"},
      {9007199254740993.0, "9007199254740992.0"},
      {std::ldexp(1.0, -24), "5.960464477539063e-08"},  // power of two: the neighbour digit
      {kNaN, "NaN"},
      {kInf, "Infinity"},
      {-kInf, "-Infinity"},
  };
  for (const auto& [v, want] : cases) EXPECT_EQ(JsonFloat(v), want);
}

TEST(PyJsonTest, JsonStringIsPythonDumps) {
  EXPECT_EQ(JsonString("a\"b\\c\n\t\r\b\f\x01\x7f/"),
            "\"a\\\"b\\\\c\\n\\t\\r\\b\\f\\u0001\\u007f/\"");
  EXPECT_EQ(JsonString("\xc3\xa9\xe2\x98\x83\xf0\x9f\x94\xa5"), "\"\\u00e9\\u2603\\ud83d\\udd25\"");
  EXPECT_EQ(JsonString("bad\xff\xc3"), "\"bad\\ufffd\\ufffd\"");
}

TEST(PyJsonTest, NormalizeJson) {
  EXPECT_EQ(*NormalizeJson(R"({"b":1,"a":[NaN,-Infinity,Infinity,"NaN",1.50,2e-5],"c":null})"),
            R"({"b": 1, "a": [NaN, -Infinity, Infinity, "NaN", 1.5, 2e-05], "c": null})");
  EXPECT_EQ(*NormalizeJson("\"x\\\"NaN\\\"\""), "\"x\\\"NaN\\\"\"");
  // Integers (signed, and unsigned past INT64_MAX), booleans and null, as json.dumps writes them.
  EXPECT_EQ(*NormalizeJson("[true,false,null,-9223372036854775808,18446744073709551615,0]"),
            "[true, false, null, -9223372036854775808, 18446744073709551615, 0]");
  EXPECT_FALSE(NormalizeJson("{\"a\": nan}").ok());
  EXPECT_FALSE(NormalizeJson("{NaN: 1}").ok());
  EXPECT_FALSE(NormalizeJson("[1, 2").ok());
}

TEST(PyJsonTest, NestingDeeperThanTheLimitIsAnErrorNotACrash) {
  auto nested = [](int depth, char open, char close) {
    return std::string(static_cast<size_t>(depth), open) +
           std::string(static_cast<size_t>(depth), close);
  };
  EXPECT_TRUE(ParsePyJson(nested(kMaxJsonDepth, '[', ']')).ok());
  for (const std::string& deep :
       {nested(kMaxJsonDepth + 1, '[', ']'), nested(100000, '[', ']'), std::string(100000, '[')}) {
    auto parsed = ParsePyJson(deep);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.status().message(), "not valid JSON (nested more than 1000 deep)");
  }
  std::string objects;
  for (int i = 0; i < 100000; ++i) objects += "{\"a\": ";
  EXPECT_FALSE(ParsePyJson(objects + "1" + std::string(100000, '}')).ok());
  // Brackets inside strings (escaped quotes too) do not count.
  EXPECT_TRUE(
      ParsePyJson("[\"" + std::string(5000, '[') + "\\\"" + std::string(5000, '{') + "\"]").ok());
}

TEST(PyJsonTest, ParseAndDumpKeepKeyOrderAndNonFiniteNumbers) {
  absl::StatusOr<PyJson> j = ParsePyJson(R"({"z": [NaN, -Infinity], "a": "NaN"})");
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_TRUE(std::isnan((*j)["z"][0].get<double>()));
  EXPECT_EQ(DumpPyJson(*j), R"({"z": [NaN, -Infinity], "a": "NaN"})");
  EXPECT_EQ(ParsePyJson("[1,").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParsePyJson("{NaN: 1}").status().message(),
            "not valid JSON (NaN or Infinity as an object key)");
}

}  // namespace
}  // namespace tunefleet
