// The sampler registry's one list: every search.method hpo knows, one entry per sampler
// (hpo/samplers/sampler_kind.h), in the order the config's error messages name them. Adding a
// sampler adds one line to all_samplers.cc; nothing registers itself (static libraries would
// drop a self-registering object nobody references).
//
// Thread-safety: the list is immutable once made (made on first use, thread-safe).
#ifndef TUNEFLEET_HPO_SAMPLERS_ALL_SAMPLERS_H_
#define TUNEFLEET_HPO_SAMPLERS_ALL_SAMPLERS_H_

#include <vector>

#include "hpo/samplers/sampler_kind.h"

namespace tunefleet {
namespace hpo {

const std::vector<const SamplerKind*>& AllSamplerKinds();

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_SAMPLERS_ALL_SAMPLERS_H_
