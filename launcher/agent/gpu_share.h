// Several trials on one GPU (resources.trials_per_gpu): whether one more fits the GPU's memory,
// from NVML's figures and the trainers' memory estimates (TrialSpec.memory_mib).
//
// A trial that just started has not allocated its memory yet, so NVML's free memory alone would
// admit too many. Each tenant therefore reserves what it may still grow into: its estimate plus
// a CUDA context (kContextMib: the context, cuBLAS's workspace, the caching allocator's slack)
// less what NVML already accounts to its process. A newcomer fits when its estimate, its
// context and a margin (5% of the GPU, at least 512 MiB) fit in the free memory left after those
// reservations. An unknown estimate (0) counts as nothing beyond the context.
//
//   ShareDecision d = DecideShare(est, sample.mem_total_mib - sample.mem_used_mib,
//                                 sample.mem_total_mib, tenants);
//   if (!d.fits) log(d.why);
// Thread-safety: pure functions.
#ifndef TUNEFLEET_LAUNCHER_AGENT_GPU_SHARE_H_
#define TUNEFLEET_LAUNCHER_AGENT_GPU_SHARE_H_

#include <optional>
#include <string>
#include <vector>

namespace tunefleet {
namespace launcher {

inline constexpr double kContextMib = 768;

struct ShareTenant {
  double estimate_mib = 0;         // its TrialSpec.memory_mib; 0: unknown
  std::optional<double> used_mib;  // what NVML accounts to its process now; nullopt: nothing yet
};

struct ShareDecision {
  bool fits = false;
  double headroom_mib = 0;  // free memory once every tenant reached its reservation
  double needed_mib = 0;    // the newcomer's estimate + context + margin
  std::string why;          // "needs 5.1 GiB (...), 3.2 GiB would be left": for the log
};

double ShareMarginMib(double total_mib);
ShareDecision DecideShare(double estimate_mib, double free_mib, double total_mib,
                          const std::vector<ShareTenant>& tenants);

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_AGENT_GPU_SHARE_H_
