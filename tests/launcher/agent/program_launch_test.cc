// launcher/agent/program_launch.h: the processes of a program trial on one agent and their
// environment, per rank (torchrun's variables, checked against common/rank_env.h's names) and
// once a node (torchrun's own settings as PET_*); the trial's folder and reports file; what
// makes a trial refused.
#include "launcher/agent/program_launch.h"

#include <sys/stat.h>

#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/test_util/temp_dir.h"

namespace tunefleet {
namespace launcher {
namespace {

class ProgramLaunchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = FreshTestDir("program_launch");
    comm::TrialSpec* spec = assign_.mutable_trial();
    spec->set_trial(7);
    spec->set_world_size(4);
    for (const char* a : {"sh", "-c", "exit 0"}) spec->add_argv(a);
    spec->set_params_json(R"({"lr": 0.001, "batch_size": 16, "lr_effective": 0.002})");
    comm::ProgramRun* p = spec->mutable_program();
    p->set_workdir(root_);
    p->set_trial_dir(root_ + "/run/trial-7");
    p->set_metrics_path(root_ + "/run/trial-7/.tunefleet/reports.jsonl");
    assign_.add_ranks(0);
    assign_.add_ranks(1);
    assign_.set_group_rank(0);
    assign_.set_group_count(2);
    launch_.place.world_size = 4;
    launch_.place.master_addr = "10.0.0.1";
    launch_.place.master_port = 29511;
    launch_.place.group_rank = 0;
    launch_.place.group_world_size = 2;
    launch_.gpus = {"GPU-a", "GPU-b"};
    launch_.env = {{"TUNEFLEET_RUN_ID", "42"}, {"NCCL_DEBUG", "INFO"}};
    launch_.log_dir = root_ + "/logs";
    launch_.allow_dirs = {root_};
  }

  std::string root_;
  comm::Assign assign_;
  ProgramLaunch launch_;
};

TEST_F(ProgramLaunchTest, OneProcessARankWithTorchrunsEnvironment) {
  launch_.env["RANK"] = "99";  // a trial's own RANK loses to the rank's
  bool refused = true;
  auto processes = PrepareProgram(assign_, launch_, &refused);
  ASSERT_TRUE(processes.ok()) << processes.status();
  EXPECT_FALSE(refused);
  ASSERT_EQ(processes->size(), 2u);
  for (int i = 0; i < 2; ++i) {
    const ProcessSpec& ps = (*processes)[static_cast<size_t>(i)].spec;
    EXPECT_EQ((*processes)[static_cast<size_t>(i)].locals, std::vector<int>{i});
    EXPECT_EQ(ps.binary.substr(ps.binary.rfind('/')), "/sh");  // found on PATH
    EXPECT_EQ(ps.args, (std::vector<std::string>{"-c", "exit 0"}));
    EXPECT_EQ(ps.working_dir, root_);
    EXPECT_EQ(ps.log_path, root_ + "/logs/trial-7/rank-" + std::to_string(i) + ".log");
    const auto& env = ps.env;
    EXPECT_EQ(env.at("RANK"), std::to_string(i));  // the rank's own win over the run's
    EXPECT_EQ(env.at("LOCAL_RANK"), std::to_string(i));
    EXPECT_EQ(env.at("WORLD_SIZE"), "4");
    EXPECT_EQ(env.at("LOCAL_WORLD_SIZE"), "2");
    EXPECT_EQ(env.at("GROUP_RANK"), "0");
    EXPECT_EQ(env.at("GROUP_WORLD_SIZE"), "2");
    EXPECT_EQ(env.at("MASTER_ADDR"), "10.0.0.1");
    EXPECT_EQ(env.at("MASTER_PORT"), "29511");
    EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES"), i == 0 ? "GPU-a" : "GPU-b");
    EXPECT_EQ(env.at("TUNEFLEET_TRIAL_DIR"), root_ + "/run/trial-7");
    EXPECT_EQ(env.at("TUNEFLEET_METRICS"), root_ + "/run/trial-7/.tunefleet/reports.jsonl");
    EXPECT_EQ(env.at("TUNEFLEET_PARAMS"), assign_.trial().params_json());
    EXPECT_EQ(env.at("TUNEFLEET_RUN_ID"), "42");
    EXPECT_EQ(env.at("NCCL_DEBUG"), "INFO");
    EXPECT_EQ(env.count("PET_NNODES"), 0u);
  }
  // The trial's folder is made, and rank 0's agent made its reports file, empty.
  struct stat st;
  ASSERT_EQ(::stat(assign_.trial().program().metrics_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 0);
  EXPECT_TRUE(LeadsProgram(assign_));
}

TEST_F(ProgramLaunchTest, TheReportsFileIsMadeEmptyOnlyWhereRankZeroRuns) {
  const std::string metrics = assign_.trial().program().metrics_path();
  bool refused = false;
  ASSERT_TRUE(PrepareProgram(assign_, launch_, &refused).ok());
  std::ofstream(metrics) << "{\"step\": 1}\n";  // an earlier attempt's line
  comm::Assign second = assign_;
  second.set_ranks(0, 2);
  second.set_ranks(1, 3);
  second.set_group_rank(1);
  auto processes = PrepareProgram(second, launch_, &refused);
  ASSERT_TRUE(processes.ok()) << processes.status();
  EXPECT_FALSE(LeadsProgram(second));
  struct stat st;
  ASSERT_EQ(::stat(metrics.c_str(), &st), 0);
  EXPECT_GT(st.st_size, 0);  // another agent's file is not its to empty
  EXPECT_EQ((*processes)[1].spec.env.at("RANK"), "3");
  EXPECT_EQ((*processes)[1].spec.env.at("LOCAL_RANK"), "1");
  ASSERT_TRUE(PrepareProgram(assign_, launch_, &refused).ok());
  ASSERT_EQ(::stat(metrics.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 0);  // rank 0's agent starts it empty
}

TEST_F(ProgramLaunchTest, LaunchOnceIsOneProcessWithAllItsGpusAndTorchrunsSettings) {
  assign_.mutable_trial()->mutable_program()->set_launch_once(true);
  bool refused = true;
  auto processes = PrepareProgram(assign_, launch_, &refused);
  ASSERT_TRUE(processes.ok()) << processes.status();
  ASSERT_EQ(processes->size(), 1u);
  EXPECT_EQ((*processes)[0].locals, (std::vector<int>{0, 1}));
  const auto& env = (*processes)[0].spec.env;
  EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES"), "GPU-a,GPU-b");
  EXPECT_EQ(env.at("WORLD_SIZE"), "4");
  EXPECT_EQ(env.at("LOCAL_WORLD_SIZE"), "2");
  EXPECT_EQ(env.at("PET_NNODES"), "2");
  EXPECT_EQ(env.at("PET_NPROC_PER_NODE"), "2");
  EXPECT_EQ(env.at("PET_NODE_RANK"), "0");
  EXPECT_EQ(env.at("PET_MASTER_ADDR"), "10.0.0.1");
  EXPECT_EQ(env.at("PET_MASTER_PORT"), "29511");
  // The launcher gives its own children RANK and LOCAL_RANK.
  EXPECT_EQ(env.count("RANK"), 0u);
  EXPECT_EQ(env.count("LOCAL_RANK"), 0u);
  // On CPU slots, no GPU at all.
  launch_.gpus = {"", ""};
  processes = PrepareProgram(assign_, launch_, &refused);
  ASSERT_TRUE(processes.ok());
  EXPECT_EQ((*processes)[0].spec.env.at("CUDA_VISIBLE_DEVICES"), "");
}

TEST_F(ProgramLaunchTest, RefusedWhereStartingItAgainCannotHelp) {
  bool refused = false;
  assign_.mutable_trial()->set_argv(0, "no-such-program-here");
  auto processes = PrepareProgram(assign_, launch_, &refused);
  EXPECT_FALSE(processes.ok());
  EXPECT_TRUE(refused);
  EXPECT_NE(processes.status().message().find("no-such-program-here: not found on PATH"),
            std::string::npos)
      << processes.status();
  assign_.mutable_trial()->set_argv(0, "sh");
  launch_.allow_dirs = {root_ + "/elsewhere"};  // the trial's folder is not the agent's to write
  refused = false;
  processes = PrepareProgram(assign_, launch_, &refused);
  EXPECT_FALSE(processes.ok());
  EXPECT_TRUE(refused);
  EXPECT_NE(processes.status().message().find("trial_dir"), std::string::npos)
      << processes.status();
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet
