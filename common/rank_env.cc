#include "common/rank_env.h"

namespace tunefleet {

std::map<std::string, std::string> TorchrunEnv(const RankPlace& place) {
  return {{"RANK", std::to_string(place.rank)},
          {"LOCAL_RANK", std::to_string(place.local_rank)},
          {"WORLD_SIZE", std::to_string(place.world_size)},
          {"LOCAL_WORLD_SIZE", std::to_string(place.local_world_size)},
          {"MASTER_ADDR", place.master_addr},
          {"MASTER_PORT", std::to_string(place.master_port)},
          {"GROUP_RANK", std::to_string(place.group_rank)},
          {"GROUP_WORLD_SIZE", std::to_string(place.group_world_size)}};
}

}  // namespace tunefleet
