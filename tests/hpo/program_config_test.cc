// trainer.program in a sweep YAML (hpo/config/program_config.h, through LoadSweepConfig): what
// a program sweep holds, its parameters named freely, and each mistake as one error naming the
// file, the line and the key.
#include "hpo/config/program_config.h"

#include <sys/stat.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "hpo/config/sweep_config.h"
#include "tests/test_util/temp_dir.h"

namespace tunefleet {
namespace hpo {
namespace {

const char* const kProgram[] = {
    "name: p",                                                                                // 1
    "metric: {name: eval_loss, goal: minimize}",                                              // 2
    "trainer:",                                                                               // 3
    "  program: [sh, train.sh, --lr, '{lr}', --bs, '{batch_size}', --wd, '{weight_decay}',",  // 4
    "            --out, '{trial_dir}', --json, '{{\"a\": 1}}']",                              // 5
    "  env: {RUN_NAME: 't{trial}-{lr_base}'}",                                                // 6
    "  workdir: work",                                                                        // 7
    "resources: {gpus_per_trial: 2}",                                                         // 8
    "parameters:",                                                                            // 9
    "  lr: {distribution: log_uniform, min: 1.0e-5, max: 1.0e-3}",                            // 10
    "  batch_size: {values: [16, 32]}",                                                       // 11
    "  weight_decay: {distribution: uniform, min: 0.0, max: 0.1}",                            // 12
    "search: {method: random, random: {trials: 4, seed: 0}}",                                 // 13
};

class ProgramConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir("program_config");
    ::mkdir((dir_ + "/work").c_str(), 0755);
  }
  // The program sweep with each line (1-based) of `replace` replaced by its text.
  std::string Write(const std::map<int, std::string>& replace = {}) {
    std::vector<std::string> lines(std::begin(kProgram), std::end(kProgram));
    for (const auto& [line, text] : replace) lines[static_cast<size_t>(line - 1)] = text;
    const std::string path = dir_ + "/sweep.yaml";
    std::ofstream(path) << absl::StrJoin(lines, "\n") << "\n";
    return path;
  }
  std::string Write(int line, const std::string& text) { return Write({{line, text}}); }
  std::string Error(int line, const std::string& text) { return Error({{line, text}}); }
  std::string Error(const std::map<int, std::string>& replace) {
    return std::string(LoadSweepConfig(Write(replace)).status().message());
  }
  std::string dir_;
};

TEST_F(ProgramConfigTest, AProgramSweepLoads) {
  auto c = LoadSweepConfig(Write());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->trainer.program);
  EXPECT_FALSE(c->trainer.native());
  const ProgramSpec& p = c->trainer.program_spec;
  EXPECT_EQ(p.argv.size(), 12u);
  EXPECT_EQ(p.argv[3], "{lr}");
  EXPECT_EQ(p.argv[11], "{{\"a\": 1}}");
  EXPECT_EQ(p.env.at("RUN_NAME"), "t{trial}-{lr_base}");
  EXPECT_EQ(p.workdir, dir_ + "/work");  // relative to the sweep file's folder, made absolute
  EXPECT_FALSE(p.launch_once);
  EXPECT_EQ(p.kill_grace_s, 10);
  EXPECT_EQ(p.gpu_memory_mib, 0);
  ASSERT_EQ(c->params.size(), 1u);
  EXPECT_EQ(c->params[0].name, "weight_decay");  // the program's own name, not a trainer key
  EXPECT_EQ(c->gpus_per_trial, 2);
}

TEST_F(ProgramConfigTest, ItsOwnSettings) {
  const std::string more =
      "  workdir: work\n  launch: once\n  kill_grace_s: 2.5\n  gpu_memory_mib: 6000";
  auto c = LoadSweepConfig(Write(7, more));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->trainer.program_spec.launch_once);
  EXPECT_EQ(c->trainer.program_spec.kill_grace_s, 2.5);
  EXPECT_EQ(c->trainer.program_spec.gpu_memory_mib, 6000);
  // With its memory declared, a program may share a GPU.
  const std::string shared = "resources: {gpus_per_trial: 1, trials_per_gpu: 2}";
  std::vector<std::string> lines(std::begin(kProgram), std::end(kProgram));
  lines[6] = more;
  lines[7] = shared;
  std::ofstream(dir_ + "/shared.yaml") << absl::StrJoin(lines, "\n") << "\n";
  auto s = LoadSweepConfig(dir_ + "/shared.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->trials_per_gpu, 2);
}

TEST_F(ProgramConfigTest, TemplatesNameOnlyWhatATrialGives) {
  const std::string path = dir_ + "/sweep.yaml";
  EXPECT_EQ(Error(5, "            --out, '{trail_dir}']"),
            path +
                ":4: trainer.program: argument 10 ('{trail_dir}'): {trail_dir} is not a "
                "parameter (a trial gives lr, batch_size, weight_decay, lr_base, lr_effective, "
                "trial, trial_dir; '{{' is a literal brace)");
  EXPECT_EQ(Error(5, "            --out, '{trial_dir']"),
            path +
                ":4: trainer.program: argument 10 ('{trial_dir'): an unclosed '{' at "
                "character 1 (a literal brace is '{{')");
  EXPECT_EQ(Error(6, "  env: {RUN_NAME: 'a}b'}"),
            path +
                ":6: trainer.env: RUN_NAME ('a}b'): a lone '}' at character 2 (a literal "
                "brace is '}}')");
}

TEST_F(ProgramConfigTest, MistakesAreOneLineNamingTheKey) {
  const std::string path = dir_ + "/sweep.yaml";
  EXPECT_EQ(Error(7, "  workdir: work\n  config: x.yaml"),
            path +
                ":4: trainer: give exactly one of 'config' (a trainer YAML), 'program' (a "
                "command of your own) or 'synthetic'");
  EXPECT_EQ(Error(7, "  workdir: work\n  overrides: {train.epochs: 1}"),
            path +
                ":8: trainer.overrides: only applies to a trainer config (a program reads its "
                "own settings)");
  EXPECT_EQ(Error(7, "  workdir: work\n  launch: twice"),
            path + ":8: trainer.launch: expected one of per_rank, once; got 'twice'");
  EXPECT_EQ(Error(7, "  workdir: work\n  kill_grace_s: -1"),
            path + ":8: trainer.kill_grace_s: must be in [0, 3600], got -1");
  EXPECT_EQ(Error(6, "  env: {LD_PRELOAD: x.so}"),
            path +
                ":6: trainer.env.LD_PRELOAD: loads code of its choosing into the trainer; "
                "agents never pass it (docs/CONFIG.md: resources.env)");
  EXPECT_EQ(Error(7, "  workdir: nowhere"),
            path + ": trainer.workdir: " + dir_ + "/nowhere: no such folder");
  EXPECT_EQ(Error(8, "resources: {gpus_per_trial: 1, trials_per_gpu: 4}"),
            path +
                ":8: resources.trials_per_gpu: a program shares a GPU only when it declares its "
                "peak GPU memory: set trainer.gpu_memory_mib");
  EXPECT_EQ(
      Error(12, "  trial: {values: [1, 2]}"),
      path + ":12: parameters.trial: is a value hpo gives every trial; it cannot be searched");
  EXPECT_EQ(Error(12, "  'my param': {values: [1, 2]}"),
            path +
                ":12: parameters.my param: is not a parameter name (1-128 letters, digits, "
                "'_', '.' or '-')");
  // A template left unquoted in a flow list is a YAML mapping, not a string.
  const std::string unquoted = Error({{4, "  program: [sh, train.sh, --lr, {lr}]"}, {5, ""}});
  EXPECT_NE(unquoted.find("quote an argument that starts with '{'"), std::string::npos) << unquoted;
  EXPECT_EQ(Error({{4, "  program: []"}, {5, ""}}),
            path + ":4: trainer.program: must name a program: [python3, train.py]");
}

TEST_F(ProgramConfigTest, NativeKeysOfAProgramAreRefusedAndTheOtherWayRound) {
  // env, workdir, launch, ... only with a program.
  std::ofstream(dir_ + "/native.yaml")
      << "name: n\nmetric: {name: m}\ntrainer: {synthetic: {steps: 2}, launch: once}\n"
         "parameters: {lr: {values: [0.1]}, batch_size: {values: [1]}}\n";
  EXPECT_EQ(LoadSweepConfig(dir_ + "/native.yaml").status().message(),
            dir_ + "/native.yaml:3: trainer.launch: only applies to trainer.program");
}

TEST_F(ProgramConfigTest, MultirunSweepsAProgramsOwnParameters) {
  auto c = ReadSweepFile(Write(12, "  weight_decay: {values: [0.0]}"),
                         {"lr=1e-4", "batch_size=16", "weight_decay=0.0,0.1"}, /*multirun=*/true);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->params.size(), 1u);
  EXPECT_EQ(c->params[0].values, (std::vector<double>{0.0, 0.1}));
}

TEST_F(ProgramConfigTest, TheProgramIsFoundAsAnAgentHereWouldFindIt) {
  ProgramSpec p;
  p.argv = {"sh"};
  p.workdir = dir_;
  EXPECT_TRUE(CheckProgramHere(p, "s.yaml").ok());
  p.argv = {"no-such-program-anywhere"};
  const std::string missing(CheckProgramHere(p, "s.yaml").message());
  EXPECT_EQ(
      missing.rfind("s.yaml: trainer.program: no-such-program-anywhere: not found on PATH (", 0),
      0u)
      << missing;
  p.argv = {"./train.sh"};  // relative to the workdir
  EXPECT_EQ(CheckProgramHere(p, "s.yaml").message(),
            "s.yaml: trainer.program: ./train.sh: No such file or directory");
  std::ofstream(dir_ + "/train.sh") << "#!/bin/sh\n";
  EXPECT_EQ(CheckProgramHere(p, "s.yaml").message(),
            "s.yaml: trainer.program: ./train.sh: not executable");
  ::chmod((dir_ + "/train.sh").c_str(), 0755);
  EXPECT_TRUE(CheckProgramHere(p, "s.yaml").ok());
  p.argv = {"{python}"};  // a template: its value is not known yet
  EXPECT_TRUE(CheckProgramHere(p, "s.yaml").ok());
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
