#include "trainer/data/synthetic.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>

#include "common/logging.h"
#include "common/split_mix64.h"
#include "trainer/distributed/agent_client.h"

namespace tunefleet {
namespace trainer {
namespace {

double StandardNormal(uint64_t seed) {
  std::mt19937_64 rng(seed);
  // Box-Muller on two uniforms in (0, 1]: platform-independent, unlike std::normal_distribution.
  const double u1 = (static_cast<double>(rng() >> 11) + 1.0) * 0x1.0p-53;
  const double u2 = static_cast<double>(rng() >> 11) * 0x1.0p-53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

}  // namespace

double SyntheticValue(const SyntheticOptions& o, int64_t step) {
  const double x = std::log10(o.lr_effective / 3e-4);
  const double b = std::log2(static_cast<double>(o.batch_size) / 32.0);
  const double quality = 0.9 * std::exp(-2.0 * x * x) - 0.02 * b * b;
  const double tau = std::clamp(4.0 * std::pow(10.0, -x / 2.0), 1.0, 50.0);
  double value = quality * (1.0 - std::exp(-static_cast<double>(step) / tau));
  if (o.noise > 0) {
    uint64_t lr_bits;
    std::memcpy(&lr_bits, &o.lr_effective, sizeof(lr_bits));
    const uint64_t seed =
        SplitMix64(SplitMix64(SplitMix64(static_cast<uint64_t>(o.seed)) ^ lr_bits) ^
                   static_cast<uint64_t>(o.batch_size)) ^
        static_cast<uint64_t>(step);
    value += o.noise * StandardNormal(SplitMix64(seed));
  }
  return value;
}

absl::Status RunSynthetic(const SyntheticOptions& o, AgentClient* client) {
  for (int64_t step = 1; step <= o.steps; ++step) {
    if (o.seconds_per_step > 0) {
      std::this_thread::sleep_for(std::chrono::duration<double>(o.seconds_per_step));
    }
    const double value = SyntheticValue(o, step);
    const int64_t samples = step * o.samples_per_step;
    std::printf("{\"step\": %lld, \"samples\": %lld, \"%s\": %.17g}\n",
                static_cast<long long>(step), static_cast<long long>(samples), o.metric.c_str(),
                value);
    std::fflush(stdout);
    if (client == nullptr) continue;
    // The last step is the final report only, as the trainer's last evaluation is.
    if (step == o.steps) return client->ReportFinal(step, samples, {{o.metric, value}});
    absl::StatusOr<bool> stop = client->Report(step, samples, {{o.metric, value}});
    if (!stop.ok()) return stop.status();
    if (*stop) {
      TF_LOG(INFO) << "stopped at step " << step << " by the pruner";
      return absl::OkStatus();
    }
  }
  if (client != nullptr) return client->ReportFinal(0, 0, {{o.metric, SyntheticValue(o, 0)}});
  return absl::OkStatus();
}

}  // namespace trainer
}  // namespace tunefleet
