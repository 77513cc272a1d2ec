#include "common/yaml_config.h"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>

#include "common/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

ConfigMap Root(const ConfigFile& f) {
  auto root = f.Root();
  EXPECT_TRUE(root.ok()) << root.status();
  return *root;
}

TEST(ConfigFileTest, ReadsTypedValues) {
  auto f = ConfigFile::Parse(
      "name: demo\nsteps: 20\nlr: 3.0e-5\nshuffle: true\nvalues: [16, 32]\n"
      "nested: {a: 1.5, b: [x, y]}\n",
      "t.yaml");
  ASSERT_TRUE(f.ok()) << f.status();
  ConfigMap m = Root(*f);
  std::string name;
  int64_t steps = 0;
  double lr = 0;
  bool shuffle = false;
  std::vector<int64_t> values;
  ASSERT_TRUE(m.Get("name", &name).ok());
  ASSERT_TRUE(m.Get("steps", &steps).ok());
  ASSERT_TRUE(m.Get("lr", &lr).ok());
  ASSERT_TRUE(m.Get("shuffle", &shuffle).ok());
  ASSERT_TRUE(m.Get("values", &values).ok());
  EXPECT_EQ(name, "demo");
  EXPECT_EQ(steps, 20);
  EXPECT_DOUBLE_EQ(lr, 3e-5);
  EXPECT_TRUE(shuffle);
  EXPECT_EQ(values, (std::vector<int64_t>{16, 32}));
  auto nested = m.GetMap("nested");
  ASSERT_TRUE(nested.ok());
  EXPECT_EQ(nested->path(), "nested");
  std::vector<std::string> b;
  ASSERT_TRUE(nested->Get("b", &b).ok());
  EXPECT_EQ(b, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(m.Keys(),
            (std::vector<std::string>{"name", "steps", "lr", "shuffle", "values", "nested"}));
}

TEST(ConfigFileTest, WrongTypeNamesFileLineAndKey) {
  auto f = ConfigFile::Parse("a: 1\nsearch:\n  random:\n    trials: eight\n", "cfg.yaml");
  ASSERT_TRUE(f.ok());
  auto search = Root(*f).GetMap("search");
  ASSERT_TRUE(search.ok());
  auto random = search->GetMap("random");
  ASSERT_TRUE(random.ok());
  int64_t trials;
  absl::Status s = random->Get("trials", &trials);
  EXPECT_EQ(s.message(), "cfg.yaml:4: search.random.trials: expected an integer, got 'eight'");
}

TEST(ConfigFileTest, IntegerRejectsFraction) {
  auto f = ConfigFile::Parse("n: 3.5\n", "c.yaml");
  int64_t n;
  EXPECT_THAT(std::string(Root(*f).Get("n", &n).message()),
              HasSubstr("c.yaml:1: n: expected an integer, got '3.5'"));
}

TEST(ConfigFileTest, NumberRejectsInfinityAndText) {
  auto f = ConfigFile::Parse("x: .inf\ny: fast\n", "c.yaml");
  double x;
  EXPECT_THAT(std::string(Root(*f).Get("x", &x).message()),
              HasSubstr("c.yaml:1: x: expected a finite number"));
  EXPECT_THAT(std::string(Root(*f).Get("y", &x).message()),
              HasSubstr("c.yaml:2: y: expected a number, got 'fast'"));
}

TEST(ConfigFileTest, MissingRequiredKeyNamesParent) {
  auto f = ConfigFile::Parse("top: 1\nrandom:\n  seed: 0\n", "c.yaml");
  auto random = Root(*f).GetMap("random");
  int64_t trials;
  EXPECT_EQ(random->Get("trials", &trials).message(),
            "c.yaml:3: random: missing required key 'trials'");
}

TEST(ConfigFileTest, UnknownKeyIsReportedWithLine) {
  auto f = ConfigFile::Parse("name: x\nnmae: y\n", "c.yaml");
  EXPECT_EQ(Root(*f).AllowOnly({"name"}).message(),
            "c.yaml:2: nmae: unknown key; expected one of: name");
}

TEST(ConfigFileTest, DuplicateKeyIsAnError) {
  auto f = ConfigFile::Parse("lr: 1\nbatch: 2\nlr: 3\n", "c.yaml");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(Root(*f).AllowOnly({"lr", "batch"}).message(),
            "c.yaml:3: lr: duplicate key (first given on line 1)");
}

TEST(ConfigFileTest, EmptyFileIsAnError) {
  EXPECT_EQ(ConfigFile::Parse("", "e.yaml").status().message(), "e.yaml:1: the file is empty");
  EXPECT_EQ(ConfigFile::Parse("# only a comment\n\n", "e.yaml").status().message(),
            "e.yaml:1: the file is empty");
}

TEST(ConfigFileTest, SyntaxErrorHasLineAndColumn) {
  auto f = ConfigFile::Parse("a: 1\nb: [1, 2\n", "s.yaml");
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(std::string(f.status().message()), HasSubstr("s.yaml:"));
  EXPECT_THAT(std::string(f.status().message()), HasSubstr("YAML syntax error"));
}

TEST(ConfigFileTest, TopLevelMustBeMapping) {
  auto f = ConfigFile::Parse("- a\n- b\n", "l.yaml");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->Root().status().message(),
            "l.yaml:1: expected a mapping of keys at the top level, got a list");
}

TEST(ConfigFileTest, MissingFile) {
  auto f = ConfigFile::Load("/nonexistent/dir/x.yaml");
  EXPECT_EQ(f.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(f.status().message(), "/nonexistent/dir/x.yaml: cannot open file");
}

TEST(ConfigFileTest, LoadReadsRealFile) {
  std::string path = ::testing::TempDir() + "/load_test.yaml";
  std::ofstream(path) << "a:\n  b: 7\n";
  auto f = ConfigFile::Load(path);
  ASSERT_TRUE(f.ok()) << f.status();
  auto a = Root(*f).GetMap("a");
  int b = 0;
  ASSERT_TRUE(a->Get("b", &b).ok());
  EXPECT_EQ(b, 7);
  EXPECT_EQ(a->Line("b"), 2);
}

TEST(ConfigOverrideTest, OverridesReplaceNestedValues) {
  auto f = ConfigFile::Parse("train:\n  lr: 2.0e-5\n  batch_size: 32\n", "t.yaml");
  ASSERT_TRUE(f->ApplyOverrides({"train.lr=3e-5", "train.batch_size=64"}).ok());
  auto train = Root(*f).GetMap("train");
  double lr;
  int64_t batch;
  ASSERT_TRUE(train->Get("lr", &lr).ok());
  ASSERT_TRUE(train->Get("batch_size", &batch).ok());
  EXPECT_DOUBLE_EQ(lr, 3e-5);
  EXPECT_EQ(batch, 64);
}

TEST(ConfigOverrideTest, DottedKeysInTheFileAreMatchedWhole) {
  auto f = ConfigFile::Parse(
      "parameters:\n  train.weight_decay: {min: 0.0, max: 0.1}\n  lr: {max: 1}\n", "t.yaml");
  ASSERT_TRUE(f->ApplyOverrides({"parameters.train.weight_decay.max=0.2", "parameters.lr.max=2",
                                 "parameters.train.weight_decay={min: 0.05, max: 0.3}",
                                 "parameters.model.dropout.max=0.5"})
                  .ok());
  auto parameters = Root(*f).GetMap("parameters");
  ASSERT_TRUE(parameters.ok());
  // The dotted entry was replaced whole by the third override; no nested 'train' was made.
  EXPECT_EQ(parameters->Keys(), (std::vector<std::string>{"train.weight_decay", "lr", "model"}));
  auto wd = parameters->GetMap("train.weight_decay");
  ASSERT_TRUE(wd.ok());
  double min = 0, max = 0;
  ASSERT_TRUE(wd->Get("min", &min).ok());
  ASSERT_TRUE(wd->Get("max", &max).ok());
  EXPECT_DOUBLE_EQ(min, 0.05);
  EXPECT_DOUBLE_EQ(max, 0.3);
  auto dropout = parameters->GetMap("model");
  ASSERT_TRUE(dropout.ok());
  EXPECT_TRUE(dropout->IsMap("dropout"));
}

TEST(ConfigOverrideTest, OverrideParsesYamlValues) {
  auto f = ConfigFile::Parse("p: {values: [1]}\n", "t.yaml");
  ASSERT_TRUE(f->ApplyOverride("p.values=[16, 32, 64]").ok());
  ASSERT_TRUE(f->ApplyOverride("new.section.flag=true").ok());
  std::vector<int64_t> v;
  ASSERT_TRUE(Root(*f).GetMap("p")->Get("values", &v).ok());
  EXPECT_EQ(v, (std::vector<int64_t>{16, 32, 64}));
  bool flag = false;
  auto section = Root(*f).GetMap("new");
  ASSERT_TRUE(section.ok()) << section.status();
  ASSERT_TRUE(section->GetMap("section")->Get("flag", &flag).ok());
  EXPECT_TRUE(flag);
}

TEST(ConfigOverrideTest, BadOverrideValueNamesTheOverride) {
  auto f = ConfigFile::Parse("train:\n  lr: 2.0e-5\n", "t.yaml");
  ASSERT_TRUE(f->ApplyOverride("train.lr=abc").ok());
  double lr;
  EXPECT_EQ(Root(*f).GetMap("train")->Get("lr", &lr).message(),
            "t.yaml: override 'train.lr=abc': train.lr: expected a number, got 'abc'");
}

TEST(ConfigOverrideTest, MisspeltOverrideKeyIsUnknown) {
  auto f = ConfigFile::Parse("train:\n  lr: 2.0e-5\n", "t.yaml");
  ASSERT_TRUE(f->ApplyOverride("train.lrr=1").ok());
  EXPECT_EQ(Root(*f).GetMap("train")->AllowOnly({"lr"}).message(),
            "t.yaml: override 'train.lrr=1': train.lrr: unknown key; expected one of: lr");
}

TEST(ConfigOverrideTest, MalformedOverrides) {
  auto f = ConfigFile::Parse("train:\n  lr: 1\n", "t.yaml");
  EXPECT_THAT(std::string(f->ApplyOverride("=3").message()), HasSubstr("expected key=value"));
  EXPECT_THAT(std::string(f->ApplyOverride("train..lr=3").message()),
              HasSubstr("not a dotted key"));
  EXPECT_THAT(std::string(f->ApplyOverride("train.lr=").message()), HasSubstr("empty value"));
  EXPECT_EQ(f->ApplyOverride("train.lr.x=3").message(),
            "t.yaml: override 'train.lr.x=3': train.lr (line 2) is not a mapping");
}

TEST(ConfigEnumTest, EnumNamesChoices) {
  auto f = ConfigFile::Parse("goal: max\n", "m.yaml");
  std::string goal;
  EXPECT_EQ(Root(*f).GetEnum("goal", {"maximize", "minimize"}, &goal).message(),
            "m.yaml:1: goal: expected one of maximize, minimize; got 'max'");
}

TEST(ConfigListTest, BadElementNamesIndex) {
  auto f = ConfigFile::Parse("values:\n  - 16\n  - big\n", "b.yaml");
  std::vector<int64_t> v;
  EXPECT_EQ(Root(*f).Get("values", &v).message(),
            "b.yaml:3: values[1]: expected integers, got 'big'");
}

TEST(ConfigListTest, ScalarWhereListExpected) {
  auto f = ConfigFile::Parse("values: 16\n", "b.yaml");
  std::vector<int64_t> v;
  EXPECT_EQ(Root(*f).Get("values", &v).message(),
            "b.yaml:1: values: expected a list of integers, got '16'");
}

TEST(ConfigFileTest, AFolderIsNotAnEmptyFile) {
  const std::string dir = ::testing::TempDir() + "/sweep_folder.yaml";
  ::mkdir(dir.c_str(), 0755);
  auto f = ConfigFile::Load(dir);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().message(), dir + ": is a folder, not a file (name a YAML file)");
}

TEST(ConfigFileTest, ErrorsClipTheValuesTheyEcho) {
  const std::string huge(5 << 20, 'v');  // 5 MB
  auto f = ConfigFile::Parse("goal: " + huge + "\nn: " + huge + "\n", "h.yaml");
  ASSERT_TRUE(f.ok()) << f.status();
  std::string goal;
  const std::string enum_error(Root(*f).GetEnum("goal", {"maximize", "minimize"}, &goal).message());
  EXPECT_LT(enum_error.size(), 400u);
  EXPECT_THAT(enum_error, HasSubstr("; got 'vvvv"));
  EXPECT_THAT(enum_error, HasSubstr("... (5242880 bytes)'"));
  int64_t n = 0;
  const std::string int_error(Root(*f).Get("n", &n).message());
  EXPECT_LT(int_error.size(), 400u);
  EXPECT_THAT(int_error, HasSubstr("expected an integer, got 'vvvv"));
  // An override's value, echoed with the override.
  auto g = ConfigFile::Parse("train: {lr: 1}\n", "o.yaml");
  ASSERT_TRUE(g->ApplyOverride("train.lr=" + huge).ok());
  double lr = 0;
  const std::string override_error(Root(*g).GetMap("train")->Get("lr", &lr).message());
  EXPECT_LT(override_error.size(), 800u);
  EXPECT_THAT(override_error, HasSubstr("o.yaml: override 'train.lr=vvvv"));
  const std::string bad_key(g->ApplyOverride(huge + "..x=1").message());
  EXPECT_LT(bad_key.size(), 800u);
  EXPECT_THAT(bad_key, HasSubstr("is not a dotted key"));
}

// Hydra's override forms: +key=value adds, ++key=value adds or sets, ~key[=value] removes.
TEST(ConfigHydraTest, PlusAddsOnlyAMissingKey) {
  auto f = ConfigFile::Parse("train:\n  lr: 2.0e-5\n", "t.yaml");
  ASSERT_TRUE(f->ApplyOverride("+train.seed=7").ok());
  ASSERT_TRUE(f->ApplyOverride("+model.pooling=cls").ok());  // under a new mapping
  int64_t seed = 0;
  ASSERT_TRUE(Root(*f).GetMap("train")->Get("seed", &seed).ok());
  EXPECT_EQ(seed, 7);
  EXPECT_TRUE(Root(*f).GetMap("model")->Has("pooling"));
  EXPECT_EQ(f->ApplyOverride("+train.lr=3e-5").message(),
            "t.yaml: override '+train.lr=3e-5': train.lr is already set (line 2); use "
            "train.lr=3e-5 to change it");
  // A key an earlier override added is set too.
  EXPECT_EQ(f->ApplyOverride("+train.seed=8").message(),
            "t.yaml: override '+train.seed=8': train.seed is already set (by override "
            "'+train.seed=7'); use train.seed=8 to change it");
  // An error about its value names the override as typed.
  ASSERT_TRUE(f->ApplyOverride("+train.epochs=two").ok());
  int64_t epochs = 0;
  EXPECT_EQ(Root(*f).GetMap("train")->Get("epochs", &epochs).message(),
            "t.yaml: override '+train.epochs=two': train.epochs: expected an integer, got 'two'");
}

TEST(ConfigHydraTest, PlusPlusAddsOrSets) {
  auto f = ConfigFile::Parse("train:\n  lr: 2.0e-5\n", "t.yaml");
  ASSERT_TRUE(f->ApplyOverrides({"++train.lr=3e-5", "++train.seed=7"}).ok());
  double lr = 0;
  int64_t seed = 0;
  ASSERT_TRUE(Root(*f).GetMap("train")->Get("lr", &lr).ok());
  ASSERT_TRUE(Root(*f).GetMap("train")->Get("seed", &seed).ok());
  EXPECT_DOUBLE_EQ(lr, 3e-5);
  EXPECT_EQ(seed, 7);
}

TEST(ConfigHydraTest, TildeRemoves) {
  auto f = ConfigFile::Parse(
      "train: {lr: 2.0e-5, seed: 1}\nearly: {type: median, n: 3}\n"
      "parameters: {train.weight_decay: {max: 0.1}, lr: {max: 1}}\n",
      "t.yaml");
  ASSERT_TRUE(f->ApplyOverrides({"~train.seed", "~early", "~parameters.train.weight_decay"}).ok());
  EXPECT_EQ(Root(*f).Keys(), (std::vector<std::string>{"train", "parameters"}));
  EXPECT_EQ(Root(*f).GetMap("train")->Keys(), std::vector<std::string>{"lr"});
  EXPECT_EQ(Root(*f).GetMap("parameters")->Keys(), std::vector<std::string>{"lr"});
  EXPECT_EQ(f->ApplyOverride("~train.seed").message(),
            "t.yaml: override '~train.seed': train.seed is not set; nothing to remove");
  EXPECT_EQ(f->ApplyOverride("~model.pooling").message(),
            "t.yaml: override '~model.pooling': model.pooling is not set; nothing to remove");
  EXPECT_FALSE(Root(*f).Has("model"));  // the failed removal made nothing
  EXPECT_EQ(f->ApplyOverride("~train.lr.x").message(),
            "t.yaml: override '~train.lr.x': train.lr.x is not set; nothing to remove");
  EXPECT_THAT(std::string(f->ApplyOverride("~").message()),
              HasSubstr("expected ~key or ~key=value"));
}

TEST(ConfigHydraTest, TildeWithAValueRemovesOnlyThatValue) {
  auto f = ConfigFile::Parse("train: {lr: 2.0e-5, values: [1, 2], pooling: mean}\n", "t.yaml");
  EXPECT_EQ(f->ApplyOverride("~train.lr=3e-5").message(),
            "t.yaml: override '~train.lr=3e-5': train.lr is 2.0e-5 (line 1), not 3e-5; nothing "
            "removed");
  EXPECT_EQ(f->ApplyOverride("~train.pooling=cls").message(),
            "t.yaml: override '~train.pooling=cls': train.pooling is mean (line 1), not cls; "
            "nothing removed");
  ASSERT_TRUE(f->ApplyOverride("~train.lr=2e-5").ok());  // the same number, spelt otherwise
  ASSERT_TRUE(f->ApplyOverride("~train.values=[1, 2]").ok());
  ASSERT_TRUE(f->ApplyOverride("~train.pooling=mean").ok());
  EXPECT_TRUE(Root(*f).GetMap("train")->Keys().empty());
}

TEST(ConfigHydraTest, ShownAsNamesWhatTheUserTyped) {
  auto f = ConfigFile::Parse("p: {lr: {min: 1}}\n", "t.yaml");
  ASSERT_TRUE(f->ApplyOverride("p.lr={values: [1e-5, abc]}", "lr=1e-5,abc").ok());
  std::vector<double> values;
  EXPECT_EQ(Root(*f).GetMap("p")->GetMap("lr")->Get("values", &values).message(),
            "t.yaml: override 'lr=1e-5,abc': p.lr.values[1]: expected numbers, got 'abc'");
}

TEST(ConfigMapTest, FromOverride) {
  auto f = ConfigFile::Parse("e: {type: median, n: 3}\ns: {a: 1}\n", "t.yaml");
  ASSERT_TRUE(f->ApplyOverrides({"e.type=none", "s={a: 2}"}).ok());
  auto e = Root(*f).GetMap("e");
  EXPECT_TRUE(e->FromOverride("type"));
  EXPECT_FALSE(e->FromOverride("n"));
  EXPECT_TRUE(Root(*f).GetMap("s")->FromOverride("a"));  // under a mapping an override set
  EXPECT_FALSE(Root(*f).FromOverride("e"));
}

const std::vector<std::pair<std::string, std::vector<std::string>>> kTypes = {
    {"none", {"type"}}, {"median", {"type", "n", "warmup"}}, {"halving", {"type", "rate"}}};

TEST(ConfigChoiceTest, AnOverriddenTypeDropsTheFilesKeysOfTheOldType) {
  auto f = ConfigFile::Parse("e: {type: median, n: 3, warmup: 2}\n", "t.yaml");
  ASSERT_TRUE(f->ApplyOverride("e.type=halving").ok());
  auto note = Root(*f).GetMap("e")->AllowOnlyForChoice("type", "halving", kTypes);
  ASSERT_TRUE(note.ok()) << note.status();
  EXPECT_EQ(*note, "e.type=halving (override): dropped n, warmup from t.yaml");
  // Nothing to drop: no note.
  auto same = ConfigFile::Parse("e: {type: median, n: 3}\n", "t.yaml");
  ASSERT_TRUE(same->ApplyOverride("e.type=median").ok());
  EXPECT_EQ(*Root(*same).GetMap("e")->AllowOnlyForChoice("type", "median", kTypes), "");
}

TEST(ConfigChoiceTest, WithoutATypeOverrideItIsAllowOnly) {
  auto f = ConfigFile::Parse("e: {type: none, n: 3}\n", "t.yaml");
  EXPECT_EQ(Root(*f).GetMap("e")->AllowOnlyForChoice("type", "none", kTypes).status().message(),
            "t.yaml:1: e.n: unknown key; expected one of: type");
  auto typo = ConfigFile::Parse("e: {type: median, nn: 3}\n", "t.yaml");
  ASSERT_TRUE(typo->ApplyOverride("e.type=none").ok());
  EXPECT_EQ(Root(*typo).GetMap("e")->AllowOnlyForChoice("type", "none", kTypes).status().message(),
            "t.yaml:1: e.nn: unknown key; expected one of: type");
}

TEST(ConfigChoiceTest, AnOverriddenKeyTheTypeDoesNotTakeIsAnErrorNamingTheFix) {
  auto f = ConfigFile::Parse("e: {type: median, n: 3}\n", "t.yaml");
  ASSERT_TRUE(f->ApplyOverrides({"e.type=none", "e.rate=2"}).ok());
  EXPECT_EQ(Root(*f).GetMap("e")->AllowOnlyForChoice("type", "none", kTypes).status().message(),
            "t.yaml: override 'e.rate=2': e.rate: type none does not take it (halving does); "
            "drop it, or set e.type=halving");
}

TEST(ConfigMapTest, OptionalKeepsDefault) {
  auto f = ConfigFile::Parse("a: ~\n", "o.yaml");
  double x = 4.5;
  ASSERT_TRUE(Root(*f).GetOptional("a", &x).ok());
  ASSERT_TRUE(Root(*f).GetOptional("b", &x).ok());
  EXPECT_EQ(x, 4.5);
  auto m = Root(*f).GetOptionalMap("missing");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->path(), "missing");
  EXPECT_TRUE(m->Keys().empty());
}

}  // namespace
}  // namespace tunefleet
