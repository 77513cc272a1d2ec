#include "trainer/train/run_output.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/file_util.h"
#include "common/status_macros.h"

namespace tunefleet {
namespace trainer {

std::string FirstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

bool IsOutOfMemory(const c10::Error& e) {
  return dynamic_cast<const c10::OutOfMemoryError*>(&e) != nullptr ||
         absl::StrContains(e.what_without_backtrace(), "out of memory") ||
         absl::StrContains(e.what_without_backtrace(), "CUBLAS_STATUS_ALLOC_FAILED");
}

double WallSeconds() { return absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()); }

std::string EtaText(double seconds, int64_t done, int64_t left) {
  if (done <= 0 || left <= 0) return "";
  const int64_t eta =
      static_cast<int64_t>(seconds / static_cast<double>(done) * static_cast<double>(left) + 0.5);
  return absl::StrFormat("  eta %d:%02d:%02d", eta / 3600, eta / 60 % 60, eta % 60);
}

absl::StatusOr<std::unique_ptr<EventFileWriter>> OpenRunEvents(const std::string& output_dir,
                                                               bool* session_started) {
  auto events = EventFileWriter::Open(JoinPath(output_dir, "tensorboard"), WallSeconds());
  if (!events.ok()) {
    return absl::Status(events.status().code(),
                        absl::StrCat("tensorboard: ", events.status().message()));
  }
  const char* json = std::getenv("TUNEFLEET_HPARAMS");
  if (json == nullptr || *json == '\0') return events;
  auto hparams = ParseHParams(json);
  if (!hparams.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("TUNEFLEET_HPARAMS: ", hparams.status().message()));
  }
  RETURN_IF_ERROR((*events)->WriteSessionStart(*hparams, output_dir, WallSeconds()));
  *session_started = true;
  return events;
}

void PrintRunSetup(const RunSetupFacts& f) {
  std::printf(
      "data     %lld training examples%s; %lld steps (%lld an epoch)%s\n",
      static_cast<long long>(f.train_examples),
      f.eval_examples >= 0 ? absl::StrCat(", ", f.eval_examples, " for evaluation").c_str() : "",
      static_cast<long long>(f.total_steps), static_cast<long long>(f.steps_per_epoch),
      f.resumed_after >= 0 ? absl::StrCat(", resuming after step ", f.resumed_after).c_str() : "");
  std::printf("memory   estimate %s\n", f.memory.c_str());
  std::printf("optim    AdamW (%s), %s, warmup %lld steps\n", f.optimizer.c_str(),
              f.schedule.c_str(), static_cast<long long>(f.warmup_steps));
  std::printf("batches  %s\n", f.batches.c_str());
  if (!f.datasets.empty()) std::printf("datasets %s\n", f.datasets.c_str());
  if (f.cuda) {
    std::printf("steps    %s\n",
                f.graphs_note.empty()
                    ? "replayed as CUDA graphs from the second step (train.cuda_graphs)"
                    : absl::StrCat("eager: ", f.graphs_note).c_str());
  }
  if (f.world > 1) {
    std::printf(
        "%s %d ranks (%s), batch %lld per rank = %lld global, %lld gradient "
        "buckets of <= %lld MiB%s%s\n",
        f.sharded ? "zero1   " : "ddp     ", f.world, f.backend.c_str(),
        static_cast<long long>(f.batch_size),
        static_cast<long long>(f.batch_size * f.world * f.grad_accum),
        static_cast<long long>(f.buckets), static_cast<long long>(f.bucket_mb),
        f.bf16_buckets ? ", averaged in bf16" : "",
        f.sharded ? " (reduce-scattered; each rank updates 1/N of the parameters and keeps "
                    "1/N of the AdamW state)"
                  : "");
  } else if (f.zero1) {
    std::printf("zero1    one rank: nothing to shard, AdamW keeps all its state\n");
  }
  std::fflush(stdout);
}

}  // namespace trainer
}  // namespace tunefleet
