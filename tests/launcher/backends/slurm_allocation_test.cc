// launcher/backends/slurm_allocation.h: the nodes and GPUs of a Slurm allocation from its
// environment.
#include "launcher/backends/slurm_allocation.h"

#include <map>
#include <string>

#include "gtest/gtest.h"

namespace tunefleet {
namespace launcher {
namespace {

using Env = std::map<std::string, std::string>;

absl::StatusOr<SlurmAllocation> Read(const Env& env) {
  return ReadSlurmAllocation([&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(SlurmAllocation, NodesFromTheJobNodeList) {
  auto a = Read({{"SLURM_JOB_ID", "42"}, {"SLURM_JOB_NODELIST", "gpu[01-02],cpu-a"}});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->job_id, "42");
  EXPECT_EQ(a->nodes, (std::vector<std::string>{"gpu01", "gpu02", "cpu-a"}));
  EXPECT_EQ(a->gpus_per_node, 0);
  EXPECT_EQ(a->gpus_source, "");
  // The older names.
  a = Read({{"SLURM_JOBID", "7"}, {"SLURM_NODELIST", "n1"}});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->nodes, (std::vector<std::string>{"n1"}));
}

TEST(SlurmAllocation, GpusFromTheFirstVariablePresent) {
  const Env base = {{"SLURM_JOB_ID", "1"}, {"SLURM_JOB_NODELIST", "n1"}};
  auto gpus = [&base](Env more) {
    more.insert(base.begin(), base.end());
    auto a = Read(more);
    EXPECT_TRUE(a.ok()) << a.status();
    return a.ok() ? std::make_pair(a->gpus_per_node, a->gpus_source)
                  : std::make_pair(-1, std::string());
  };
  EXPECT_EQ(gpus({{"SLURM_GPUS_ON_NODE", "4"}, {"SLURM_JOB_GPUS", "0,1"}}),
            std::make_pair(4, std::string("SLURM_GPUS_ON_NODE=4")));
  EXPECT_EQ(gpus({{"SLURM_JOB_GPUS", "0,1,3"}}),
            std::make_pair(3, std::string("SLURM_JOB_GPUS=0,1,3")));
  EXPECT_EQ(gpus({{"SLURM_GPUS_PER_NODE", "a100:8"}}),
            std::make_pair(8, std::string("SLURM_GPUS_PER_NODE=a100:8")));
  EXPECT_EQ(gpus({{"SLURM_GPUS_PER_NODE", "2"}}),
            std::make_pair(2, std::string("SLURM_GPUS_PER_NODE=2")));
  EXPECT_EQ(gpus({{"SLURM_JOB_GRES", "nic:1,gpu:h100:4(IDX:0-3)"}}),
            std::make_pair(4, std::string("SLURM_JOB_GRES=nic:1,gpu:h100:4(IDX:0-3)")));
  EXPECT_EQ(gpus({{"SLURM_GRES", "gres:gpu:2"}}),
            std::make_pair(2, std::string("SLURM_GRES=gres:gpu:2")));
  EXPECT_EQ(gpus({{"SLURM_GRES", "nic:1"}}), std::make_pair(0, std::string()));
  // A zero count gives way to the next variable.
  EXPECT_EQ(gpus({{"SLURM_GPUS_ON_NODE", "0"}, {"SLURM_GPUS_PER_NODE", "2"}}),
            std::make_pair(2, std::string("SLURM_GPUS_PER_NODE=2")));
}

TEST(SlurmAllocation, ErrorsNameTheVariable) {
  auto message = [](const Env& env) {
    auto a = Read(env);
    EXPECT_FALSE(a.ok());
    return a.ok() ? std::string() : std::string(a.status().message());
  };
  EXPECT_EQ(message({}),
            "--start_agents slurm: not inside a Slurm allocation (SLURM_JOB_ID is not set): run "
            "the head in salloc or in an sbatch script (configs/slurm/sweep.sbatch)");
  EXPECT_EQ(message({{"SLURM_JOB_ID", "5"}}),
            "--start_agents slurm: job 5 has no SLURM_JOB_NODELIST in the environment");
  EXPECT_EQ(message({{"SLURM_JOB_ID", "5"}, {"SLURM_JOB_NODELIST", "n[2-1]"}}),
            "SLURM_JOB_NODELIST: host list 'n[2-1]': the range 2-1 runs backwards");
  EXPECT_EQ(
      message({{"SLURM_JOB_ID", "5"}, {"SLURM_JOB_NODELIST", "n1"}, {"SLURM_GPUS_ON_NODE", "two"}}),
      "SLURM_GPUS_ON_NODE='two': expected a GPU count");
  EXPECT_EQ(
      message({{"SLURM_JOB_ID", "5"}, {"SLURM_JOB_NODELIST", "n1"}, {"SLURM_JOB_GPUS", "0,x"}}),
      "SLURM_JOB_GPUS='0,x': expected GPU ids such as 0,1");
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet
