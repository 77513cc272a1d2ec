// The order evaluators go through a TaskData set in: longest first (less padding per batch),
// and under a process group each rank's share, every size()-th of that order (balanced in
// length). trainer/tasks/evaluator.h and triplet_evaluator.h use it.
// Thread-safety: a free function without state.
#ifndef TUNEFLEET_TRAINER_TASKS_EVAL_ORDER_H_
#define TUNEFLEET_TRAINER_TASKS_EVAL_ORDER_H_

#include <cstdint>
#include <vector>

#include "comm/process_group.h"
#include "trainer/data/task_data.h"

namespace tunefleet {
namespace trainer {

// The examples this rank evaluates, longest first: all of them without a group.
std::vector<int64_t> RankOrder(const TaskData& data, comm::ProcessGroup* group);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_EVAL_ORDER_H_
