// The torchrun environment of one rank: what PyTorch's elastic agent sets for each worker it
// starts (torch/distributed/elastic/agent/server/local_elastic_agent.py, `_start_workers`), the
// part a process group needs: RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT, and the node's place: GROUP_RANK, GROUP_WORLD_SIZE. comm/process_group.h's
// DistEnv::FromEnvironment reads the first six back; a program of the user's own may read all.
//
// The one place they are written: the agent's ranks (launcher/agent/rank_launch.h) and the
// trainer's own local ranks (trainer/distributed/local_ranks.h). torchrun's other variables
// (ROLE_*, TORCHELASTIC_*) are not set.
// Thread-safety: a pure function.
#ifndef TUNEFLEET_COMMON_RANK_ENV_H_
#define TUNEFLEET_COMMON_RANK_ENV_H_

#include <map>
#include <string>

namespace tunefleet {

struct RankPlace {
  int rank = 0;              // RANK: among all ranks of the job
  int local_rank = 0;        // LOCAL_RANK: among this machine's ranks of the job
  int world_size = 1;        // WORLD_SIZE
  int local_world_size = 1;  // LOCAL_WORLD_SIZE: the job's ranks on this machine
  std::string master_addr;   // MASTER_ADDR: where rank 0 listens
  int master_port = 0;       // MASTER_PORT
  int group_rank = 0;        // GROUP_RANK: this machine's place among the job's machines
  int group_world_size = 1;  // GROUP_WORLD_SIZE: the job's machines
};

// The eight variables, named as torchrun names them, as decimal text.
std::map<std::string, std::string> TorchrunEnv(const RankPlace& place);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_RANK_ENV_H_
