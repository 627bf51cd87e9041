// Heap allocations of JIT-compiled pipelines with a guard zone after each, checked when
// they are freed. Comparing outputs misses a schedule that stores past an intermediate
// heap buffer: the stray stores land in malloc's slack and the output stays right, until a
// bigger run corrupts the heap. (Halide keeps small constant-size buffers on the stack;
// there an overrun shows as wrong values or a crash, which the comparison does catch.)
// Each allocation starts filled with a poison pattern rather than what malloc recycled, so
// a schedule that reads points nobody computed gets the same wrong values in every run:
// a bin index computed from them lands far outside its buffer, every time.
#pragma once

#include <Halide.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

namespace protuner::testing {

class GuardedAllocations {
 public:
  // Routes `pipeline`'s JIT heap allocations through the guarded allocator.
  static void install(Halide::Pipeline &pipeline) {
    pipeline.jit_handlers().custom_malloc = allocate;
    pipeline.jit_handlers().custom_free = release;
  }

  // The first overrun seen since the last call (empty when none), and forgets it.
  static std::string take_overrun() {
    std::lock_guard<std::mutex> lock(state().mutex);
    std::string r;
    r.swap(state().overrun);
    return r;
  }

 private:
  static constexpr size_t kAlignment = 128;  // what Halide's own allocator guarantees
  static constexpr size_t kGuardBytes = 4096;
  static constexpr unsigned char kGuardByte = 0xA5;
  // Every byte of a fresh allocation: 51015.3 as a float, 1195853639 as an int32.
  static constexpr unsigned char kPoisonByte = 0x47;

  struct State {
    std::mutex mutex;
    std::map<void *, size_t> sizes;
    std::string overrun;
  };
  static State &state() {
    static State s;
    return s;
  }

  static void *allocate(Halide::JITUserContext *, size_t size) {
    const size_t total = (size + kGuardBytes + kAlignment - 1) / kAlignment * kAlignment;
    auto *p = static_cast<unsigned char *>(std::aligned_alloc(kAlignment, total));
    if (!p) return nullptr;
    std::memset(p, kPoisonByte, size);
    std::memset(p + size, kGuardByte, total - size);
    std::lock_guard<std::mutex> lock(state().mutex);
    state().sizes[p] = size;
    return p;
  }

  static void release(Halide::JITUserContext *, void *ptr) {
    if (!ptr) return;
    auto *p = static_cast<unsigned char *>(ptr);
    std::lock_guard<std::mutex> lock(state().mutex);
    const auto it = state().sizes.find(ptr);
    if (it != state().sizes.end()) {
      const size_t size = it->second;
      for (size_t k = 0; k < kGuardBytes; ++k) {
        if (p[size + k] != kGuardByte && state().overrun.empty()) {
          state().overrun = "a store " + std::to_string(k) + " bytes past the end of a " +
                            std::to_string(size) + "-byte allocation";
          break;
        }
      }
      state().sizes.erase(it);
    }
    std::free(ptr);
  }
};

}  // namespace protuner::testing
