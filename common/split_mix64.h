// SplitMix64 (Steele, Lea & Flood 2014; the generator of java.util.SplittableRandom): a
// 64-bit state advanced by a fixed odd constant, each value passed through a bijective
// finalizer. The output is fixed by this arithmetic alone (unsigned 64-bit wrap-around), so
// it is the same on every platform and compiler; the seeded sampler points, synthetic curves
// and epoch shuffles that tests pin depend on that. Not for cryptography.
// Thread-safety: pure functions; SplitMix64Next touches only the caller's state.
#ifndef TUNEFLEET_COMMON_SPLIT_MIX64_H_
#define TUNEFLEET_COMMON_SPLIT_MIX64_H_

#include <cstdint>

namespace tunefleet {

// The step added to the state per draw (2^64 / golden ratio, made odd).
inline constexpr uint64_t kSplitMix64Gamma = 0x9E3779B97F4A7C15ull;

// The value drawn from state `x`: mix(x + gamma). Used as a hash to spread seeds.
inline uint64_t SplitMix64(uint64_t x) {
  x += kSplitMix64Gamma;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Draws the next value from `*state` and advances it by gamma: the generator as a stream.
inline uint64_t SplitMix64Next(uint64_t* state) {
  const uint64_t value = SplitMix64(*state);
  *state += kSplitMix64Gamma;
  return value;
}

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_SPLIT_MIX64_H_
