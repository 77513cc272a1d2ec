// What a training run (trainer/train/train_loop.h) says besides its metrics lines: its set-up
// lines on stdout, the ETA of a step line, the wording of a LibTorch failure, and its
// TensorBoard event file (with the HParams session under a sweep).
// Thread-safety: free functions; PrintRunSetup writes stdout, call it from one thread.
#ifndef TUNEFLEET_TRAINER_TRAIN_RUN_OUTPUT_H_
#define TUNEFLEET_TRAINER_TRAIN_RUN_OUTPUT_H_

#include <cstdint>
#include <memory>
#include <string>

#include <c10/util/Exception.h>

#include "absl/status/statusor.h"
#include "common/event_file.h"

namespace tunefleet {
namespace trainer {

// The first line of `s`.
std::string FirstLine(const std::string& s);

// LibTorch's allocator throws OutOfMemoryError; cuBLAS and the CUDA runtime say it in words.
bool IsOutOfMemory(const c10::Error& e);

// Seconds since the Unix epoch (TensorBoard's wall time).
double WallSeconds();

// "  eta H:MM:SS" for `left` steps at the pace of the `done` ones so far (evaluations
// included); "" before the first step or after the last.
std::string EtaText(double seconds, int64_t done, int64_t left);

// OUTPUT_DIR/tensorboard's event file, and under a sweep (TUNEFLEET_HPARAMS) the HParams
// plugin's session start, which sets *session_started.
absl::StatusOr<std::unique_ptr<EventFileWriter>> OpenRunEvents(const std::string& output_dir,
                                                               bool* session_started);

// What the set-up lines say.
struct RunSetupFacts {
  int64_t train_examples = 0;
  int64_t eval_examples = -1;  // -1: no evaluation data
  int64_t total_steps = 0;
  int64_t steps_per_epoch = 0;
  int64_t resumed_after = -1;  // the step a resumed run continues after; -1: not resumed
  std::string memory;          // the estimate's description
  std::string optimizer;       // AdamW's implementation
  std::string schedule;
  int64_t warmup_steps = 0;
  std::string batches;   // the batch plan's description
  std::string datasets;  // several datasets: their line (trainer/train/train_feed.h); "" for one
  bool cuda = false;
  std::string graphs_note;  // why steps run eagerly; "" for CUDA graphs
  // Data parallelism (world > 1), or strategy zero1 on one rank.
  int world = 1;
  bool sharded = false;
  std::string backend;
  int64_t batch_size = 0;
  int64_t grad_accum = 1;
  int64_t buckets = 0;
  int64_t bucket_mb = 0;
  bool bf16_buckets = false;  // averaged in bf16 (NCCL)
  bool zero1 = false;         // train.strategy zero1
};

// The lines "data ...", "memory ...", "optim ...", "batches ...", "steps ..." (GPU), and the
// data-parallel line, on stdout, flushed.
void PrintRunSetup(const RunSetupFacts& f);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TRAIN_RUN_OUTPUT_H_
