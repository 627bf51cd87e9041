// A 64-bit FNV-1a hash that is the same in every process and build (std::hash is not), for
// what several processes or runs must derive alike from one text: the name of an emitted
// schedule, the seed of an input's values, a fingerprint stored beside trained weights.
#pragma once

#include <cstdint>
#include <string_view>

namespace protuner {

// The starting value every stable hash of the project has used; the fingerprints stored in
// searcher/cost/learned/weights/ were made with it, so it stays.
inline constexpr uint64_t kStableHashStart = 1469598103934665603ull;

// The hash of `text`; passing an earlier result as `h` hashes the concatenation.
inline uint64_t stable_hash(std::string_view text, uint64_t h = kStableHashStart) {
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace protuner
