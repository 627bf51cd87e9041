// The facts about the machine that cost models and featurization need: cores, vector
// width, cache sizes, clock and bandwidths. Defaults are the machine class protuner is
// tuned for (2-core x86-64 with AVX-512, SMT off); from_host() reads what this machine
// reports, because a farm host may differ (cache sizes vary between hosts of one class).
#pragma once

#include <cstdint>
#include <string>

namespace protuner {

struct MachineModel {
  int cores = 2;
  int vector_bits = 512;  // widest SIMD register
  int cache_line_bytes = 64;
  int64_t l1_bytes = 48 * 1024;         // data cache, per core
  int64_t l2_bytes = 2 * 1024 * 1024;   // per core
  int64_t l3_bytes = kMaxTrustedL3Bytes;  // shared; see kMaxTrustedL3Bytes
  double clock_hz = 3.0e9;
  // Sustained bandwidths. Per core for caches (each core has its own L1/L2 ports);
  // DRAM is shared by all cores; 40e9 is about what memcpy sustains (read plus write) on
  // the machine class.
  double l2_bytes_per_cycle = 32;  // L2 -> L1 fills
  double l3_bytes_per_cycle = 16;  // L3 -> L2 fills
  double dram_bytes_per_second = 40e9;  // bytes read plus bytes written

  // The L3 a working set can rely on. Virtual machines report L3 sizes no working set can
  // rely on (hundreds of MiB), and the L3 is shared with whoever else runs on the socket:
  // from_host() caps the L3 it reads at this. Halide's autoschedulers are given 16 MiB for
  // this class; the models rank the suite's candidates best with a little less, since
  // intermediates of 12 to 16 MB at root (hist's input copy, bilateral_grid's clamped
  // input) cost more than L3 reads. Ranking accuracy on the suite's candidates is what
  // chooses it: `protuner evaluate --model analytic --data
  // searcher/cost/learned/data/suite_candidates.jsonl` (and the GCN's leave-one-out
  // evaluation, learned/weights/README.md), with this constant changed, compares values;
  // larger caps rank worse, 8 MiB no better.
  static constexpr int64_t kMaxTrustedL3Bytes = 12 * 1024 * 1024;

  // Cores from the OS, vector width from Halide's host target (protuner::host_target),
  // caches from /sys/devices/system/cpu/cpu0/cache, clock from /proc/cpuinfo. A fact it
  // cannot read keeps its default.
  static MachineModel from_host();

  std::string describe() const;  // one line, for logs
};

}  // namespace protuner
