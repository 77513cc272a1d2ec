// comm/trainer_overrides.h: typed trainer overrides to `key=VALUE` and back, each value read by
// the trainer's YAML (common/yaml_config.h) as the type and value it holds, including text that
// would be ambiguous written plain (the string "1e-3", "true", "", "a: b") and keys with dots.
#include "comm/trainer_overrides.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "common/yaml_config.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace comm {
namespace {

TrainerOverride Double(const std::string& key, double v) {
  TrainerOverride o;
  o.set_key(key);
  o.set_double_value(v);
  return o;
}
TrainerOverride Int(const std::string& key, int64_t v) {
  TrainerOverride o;
  o.set_key(key);
  o.set_int_value(v);
  return o;
}
TrainerOverride String(const std::string& key, const std::string& v) {
  TrainerOverride o;
  o.set_key(key);
  o.set_string_value(v);
  return o;
}
TrainerOverride Bool(const std::string& key, bool v) {
  TrainerOverride o;
  o.set_key(key);
  o.set_bool_value(v);
  return o;
}

// Applies `arg` to a config holding `x: {y: 0}` and returns the loaded file's `x` mapping.
ConfigMap Applied(const std::string& arg) {
  absl::StatusOr<ConfigFile> file = ConfigFile::Parse("x: {y: 0}\n", "t.yaml");
  EXPECT_TRUE(file.ok());
  EXPECT_TRUE(file->ApplyOverride(arg).ok()) << arg;
  absl::StatusOr<ConfigMap> root = file->Root();
  absl::StatusOr<ConfigMap> x = root->GetMap("x");
  EXPECT_TRUE(x.ok()) << arg;
  return *x;
}

void ExpectRoundTrip(const TrainerOverride& o) {
  const std::string arg = OverrideArg(o);
  absl::StatusOr<TrainerOverride> back = ParseOverrideArg(arg);
  ASSERT_TRUE(back.ok()) << arg << ": " << back.status();
  EXPECT_EQ(back->key(), o.key()) << arg;
  ASSERT_EQ(back->value_case(), o.value_case()) << arg;
  switch (o.value_case()) {
    case TrainerOverride::kDoubleValue:
      if (std::isnan(o.double_value())) {
        EXPECT_TRUE(std::isnan(back->double_value())) << arg;
      } else {
        EXPECT_EQ(back->double_value(), o.double_value()) << arg;
      }
      break;
    case TrainerOverride::kIntValue:
      EXPECT_EQ(back->int_value(), o.int_value()) << arg;
      break;
    case TrainerOverride::kStringValue:
      EXPECT_EQ(back->string_value(), o.string_value()) << arg;
      break;
    case TrainerOverride::kBoolValue:
      EXPECT_EQ(back->bool_value(), o.bool_value()) << arg;
      break;
    default:
      EXPECT_EQ(back->yaml_value(), o.yaml_value()) << arg;
  }
}

TEST(TrainerOverrides, ArgumentsAsTheTrainerReadsThem) {
  EXPECT_EQ(OverrideArg(Double("train.lr", 3e-5)), "train.lr=3e-05");
  EXPECT_EQ(OverrideArg(Double("train.eval_every_epochs", 1.0)), "train.eval_every_epochs=1.0");
  EXPECT_EQ(OverrideArg(Int("train.batch_size", 32)), "train.batch_size=32");
  EXPECT_EQ(OverrideArg(Bool("train.shuffle", false)), "train.shuffle=false");
  EXPECT_EQ(OverrideArg(String("model.pooling", "cls")), "model.pooling=cls");
  EXPECT_EQ(OverrideArg(String("model.path", "/data/bert-base")), "model.path=/data/bert-base");
  // Strings YAML would read as something else, written plain, are quoted.
  EXPECT_EQ(OverrideArg(String("x.y", "1e-3")), "x.y=\"1e-3\"");
  EXPECT_EQ(OverrideArg(String("x.y", "true")), "x.y=\"true\"");
  EXPECT_EQ(OverrideArg(String("x.y", "42")), "x.y=\"42\"");
  EXPECT_EQ(OverrideArg(String("x.y", "")), "x.y=\"\"");
  EXPECT_EQ(OverrideArg(String("x.y", "null")), "x.y=\"null\"");
  EXPECT_EQ(OverrideArg(String("x.y", "a: b")), "x.y=\"a: b\"");
  EXPECT_EQ(OverrideArg(String("x.y", "say \"hi\"")), "x.y=say \"hi\"");  // plain: literal quotes
  EXPECT_EQ(OverrideArg(String("x.y", "\"hi\" there")), "x.y=\"\\\"hi\\\" there\"");

  // The trainer's YAML reads each as the value and type it holds.
  double d = 0;
  EXPECT_TRUE(Applied(OverrideArg(Double("x.y", 1e-3))).Get("y", &d).ok());
  EXPECT_EQ(d, 1e-3);
  EXPECT_TRUE(Applied(OverrideArg(Double("x.y", 2.0))).Get("y", &d).ok());
  EXPECT_EQ(d, 2.0);
  int64_t i = 0;
  EXPECT_TRUE(Applied(OverrideArg(Int("x.y", -7))).Get("y", &i).ok());
  EXPECT_EQ(i, -7);
  bool b = false;
  EXPECT_TRUE(Applied(OverrideArg(Bool("x.y", true))).Get("y", &b).ok());
  EXPECT_TRUE(b);
  for (const std::string s :
       {"1e-3", "true", "", "a: b", "say \"hi\"", "\"hi\" there", "tab\there", "# not a comment",
        "[not, a, list]", "/data/x y", "-", "line\nbreak", "~", "0x1F"}) {
    std::string got = "unset";
    EXPECT_TRUE(Applied(OverrideArg(String("x.y", s))).Get("y", &got).ok()) << s;
    EXPECT_EQ(got, s) << OverrideArg(String("x.y", s));
  }
}

TEST(TrainerOverrides, BothWaysKeepTypeAndValue) {
  for (const TrainerOverride& o : {Double("train.lr", 3e-5),
                                   Double("train.lr", 1.0),
                                   Double("a", -0.0),
                                   Double("a", 1e300),
                                   Double("a", 0.1 + 0.2),
                                   Double("a", std::numeric_limits<double>::infinity()),
                                   Double("a", -std::numeric_limits<double>::infinity()),
                                   Double("a", std::nan("")),
                                   Int("train.batch_size", 32),
                                   Int("a", std::numeric_limits<int64_t>::min()),
                                   Int("a", std::numeric_limits<int64_t>::max()),
                                   Bool("train.shuffle", true),
                                   Bool("a", false),
                                   String("model.pooling", "cls"),
                                   String("x.y", "1e-3"),
                                   String("x.y", "3"),
                                   String("x.y", "False"),
                                   String("x.y", ""),
                                   String("x.y", "a: b"),
                                   String("x.y", " padded "),
                                   String("x.y", "line\nbreak"),
                                   String("x.y", "\x01 bell"),
                                   String("parameters.train.weight_decay.max", "0.2 "),
                                   String("+train.new_key", "/abs/path"),
                                   String("++a.b.c.d", "é ü")}) {
    ExpectRoundTrip(o);
  }
  TrainerOverride list;
  list.set_key("train.devices");
  list.set_yaml_value("[0, 1]");
  EXPECT_EQ(OverrideArg(list), "train.devices=[0, 1]");
  ExpectRoundTrip(list);
}

TEST(TrainerOverrides, TextToTyped) {
  absl::StatusOr<TrainerOverride> o = ParseOverrideArg("train.weight_decay=0.01");
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->key(), "train.weight_decay");
  EXPECT_EQ(o->double_value(), 0.01);
  o = ParseOverrideArg("train.epochs=3");
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->int_value(), 3);
  o = ParseOverrideArg("model.pooling='1e-3'");  // quoted: a string, whatever it looks like
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->string_value(), "1e-3");
  o = ParseOverrideArg("a=1e-3");
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->value_case(), TrainerOverride::kDoubleValue);
  o = ParseOverrideArg("a=b=c");  // the key ends at the first '='
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->key(), "a");
  EXPECT_EQ(o->string_value(), "b=c");
  o = ParseOverrideArg("a={x: 1}");
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->yaml_value(), "{x: 1}");
  EXPECT_FALSE(ParseOverrideArg("no_value").ok());
  EXPECT_FALSE(ParseOverrideArg("=1").ok());
  EXPECT_FALSE(ParseOverrideArg("a=[1, 2").ok());
}

TEST(TrainerOverrides, TrialArgvIsArgvThenOverrides) {
  TrialSpec spec;
  spec.add_argv("train");
  spec.add_argv("--config");
  spec.add_argv("/c.yaml");
  *spec.add_overrides() = Double("train.lr", 2e-4);
  *spec.add_overrides() = String("model.pooling", "1e-3");
  EXPECT_EQ(TrainerArgv(spec),
            (std::vector<std::string>{"train", "--config", "/c.yaml", "train.lr=0.0002",
                                      "model.pooling=\"1e-3\""}));
}

}  // namespace
}  // namespace comm
}  // namespace tunefleet
