// hpo/program_command.h: a program trial's command and TrialSpec, its template values (each as
// Python prints it; {lr} the lr it trains with), and the re-run line `hpo best` prints from the
// journal's study attr.
#include "hpo/program_command.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hpo/config/sweep_config.h"
#include "hpo/search_space.h"
#include "hpo/trial_command.h"
#include "nlohmann/json.hpp"

namespace tunefleet {
namespace hpo {
namespace {

SweepConfig ProgramSweep() {
  SweepConfig c;
  c.name = "p";
  c.gpus_per_trial = 1;
  c.lr.name = "lr";
  c.lr.distribution = "log_uniform";
  c.lr.min = 1e-5;
  c.lr.max = 10;
  c.batch_sizes = {16, 32};
  ParamSpec pooling;
  pooling.name = "pooling";
  pooling.distribution = "categorical";
  pooling.labels = {"mean", "cls"};
  ParamSpec epochs;
  epochs.name = "epochs";
  epochs.distribution = "int";
  epochs.min = 1;
  epochs.max = 3;
  c.params = {pooling, epochs};
  c.trainer.program = true;
  ProgramSpec& p = c.trainer.program_spec;
  p.argv = {"python3",  "train.py",     "--lr={lr}",   "--base",    "{lr_base}",
            "--bs",     "{batch_size}", "--pool",      "{pooling}", "--epochs",
            "{epochs}", "--out",        "{trial_dir}", "{{x}}"};
  p.env = {{"RUN", "trial {trial}"}};
  p.workdir = "/w";
  p.kill_grace_s = 2.5;
  c.env = {{"NCCL_DEBUG", "INFO"}};
  return c;
}

Trial ProgramTrial() {
  Trial t;
  t.number = 3;
  t.params = {{"lr", 1e-4}, {"batch_size", 32}, {"pooling", 1}, {"epochs", 2}};
  t.lr_effective = 10.0;
  return t;
}

TEST(ProgramCommandTest, ValuesAsPythonPrintsThem) {
  const auto values = ProgramValues(BuildSearchSpace(ProgramSweep()), ProgramTrial(), "/r/trial-3");
  EXPECT_EQ(values.at("lr"), "10.0");  // the lr it trains with
  EXPECT_EQ(values.at("lr_effective"), "10.0");
  EXPECT_EQ(values.at("lr_base"), "0.0001");
  EXPECT_EQ(values.at("batch_size"), "32");
  EXPECT_EQ(values.at("pooling"), "cls");
  EXPECT_EQ(values.at("epochs"), "2");
  EXPECT_EQ(values.at("trial"), "3");
  EXPECT_EQ(values.at("trial_dir"), "/r/trial-3");
}

TEST(ProgramCommandTest, TheTrialSpecHoldsTheCommandAndItsRun) {
  const SweepConfig c = ProgramSweep();
  comm::TrialSpec spec;
  FillTrialSpec(c, ProgramTrial(), "/r", 0, &spec);
  EXPECT_EQ(std::vector<std::string>(spec.argv().begin(), spec.argv().end()),
            (std::vector<std::string>{"python3", "train.py", "--lr=10.0", "--base", "0.0001",
                                      "--bs", "32", "--pool", "cls", "--epochs", "2", "--out",
                                      "/r/trial-3", "{x}"}));
  EXPECT_EQ(spec.overrides_size(), 0);
  EXPECT_EQ(spec.env().at("RUN"), "trial 3");
  EXPECT_EQ(spec.env().at("NCCL_DEBUG"), "INFO");
  EXPECT_EQ(spec.env().count("TUNEFLEET_HPARAMS"), 0u);  // a typed field now
  ASSERT_TRUE(spec.has_program());
  EXPECT_EQ(spec.program().workdir(), "/w");
  EXPECT_EQ(spec.program().trial_dir(), "/r/trial-3");
  EXPECT_EQ(spec.program().metrics_path(), "/r/trial-3/.tunefleet/reports.jsonl");
  EXPECT_FALSE(spec.program().launch_once());
  EXPECT_EQ(spec.program().kill_grace_ms(), 2500);
  EXPECT_FALSE(spec.reuse_worker());
  EXPECT_EQ(spec.log_dir(), "/r/logs");
  const nlohmann::json params = nlohmann::json::parse(spec.params_json());
  EXPECT_EQ(
      params,
      nlohmann::json::parse(
          R"({"batch_size": 32, "epochs": 2, "lr": 0.0001, "lr_effective": 10.0, "pooling": "cls"})"));
  EXPECT_EQ(spec.params_json(), TrialHParamsJson(c, ProgramTrial()));  // one JSON for both
}

TEST(ProgramCommandTest, TheReRunLineFromTheJournal) {
  SweepConfig c = ProgramSweep();
  const SearchSpace space = BuildSearchSpace(c);
  const std::string attr = ProgramStudyAttr(c.trainer.program_spec, 1);
  auto line = ProgramRerunCommand(attr, space, ProgramTrial(), "/r/trial-3-rerun", "{\"lr\": 1}");
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_EQ(
      *line,
      "mkdir -p /r/trial-3-rerun && cd /w && RUN='trial 3' TUNEFLEET_TRIAL_DIR=/r/trial-3-rerun "
      "TUNEFLEET_PARAMS='{\"lr\": 1}' python3 train.py --lr=10.0 --base 0.0001 --bs 32 "
      "--pool cls --epochs 2 --out /r/trial-3-rerun '{x}'");
  // Several ranks a trial: torchrun starts them as the agents did.
  line = ProgramRerunCommand(ProgramStudyAttr(c.trainer.program_spec, 4), space, ProgramTrial(),
                             "/d", "{}");
  EXPECT_NE(line->find("TUNEFLEET_PARAMS='{}' torchrun --nproc_per_node=4 --no-python python3 "),
            std::string::npos)
      << *line;
  c.trainer.program_spec.launch_once = true;
  line = ProgramRerunCommand(ProgramStudyAttr(c.trainer.program_spec, 4), space, ProgramTrial(),
                             "/d", "{}");
  EXPECT_NE(line->find("WORLD_SIZE=4 LOCAL_WORLD_SIZE=4 PET_NPROC_PER_NODE=4 python3 "),
            std::string::npos)
      << *line;
  EXPECT_FALSE(ProgramRerunCommand("{\"argv\": 3}", space, ProgramTrial(), "/d", "{}").ok());
  EXPECT_FALSE(ProgramRerunCommand("not json", space, ProgramTrial(), "/d", "{}").ok());
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
