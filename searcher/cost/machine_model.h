// The facts about the machine that cost models and featurization need: cores, vector
// width, cache sizes, clock and bandwidths. Defaults are the machine class we develop and
// first tune on (../shared/MACHINE.md: 2-core AVX-512 x86-64); from_host() reads what this
// machine reports, because a farm host may differ (and some do: the same image has run on
// hosts with 32 KiB L1d and 1 MiB L2).
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
  // DRAM is shared by all cores. About 41 GB/s memcpy (read + write) on the machine class.
  double l2_bytes_per_cycle = 32;  // L2 -> L1 fills
  double l3_bytes_per_cycle = 16;  // L3 -> L2 fills
  double dram_bytes_per_second = 40e9;  // bytes read plus bytes written

  // The L3 a working set can rely on. Virtual machines report L3 sizes no working set can
  // rely on (480 MiB on the machine class), and the L3 is shared with whoever else runs on
  // the socket: from_host() caps the L3 it reads at this. Halide's autoschedulers are given
  // 16 MiB for this class (../shared/MACHINE.md); the models rank the suite's candidates
  // best with a little less, since intermediates of 12 to 16 MB at root (hist's input copy,
  // bilateral_grid's clamped input) cost more than L3 reads. Measured 2026-11-29, pairwise
  // ranking of the suite's candidates: the analytic model 75.6% with 12 MiB, 75.2 with 16,
  // 75.1 with 8 (2026-11-28: 72.5 with 24, 71.9 with 32, 66.4 with 64); the GCN (leave one
  // app out) 77.6 with 12 MiB, 76.0 with 16.
  static constexpr int64_t kMaxTrustedL3Bytes = 12 * 1024 * 1024;

  // Cores from the OS, vector width from Halide's host target (protuner::host_target),
  // caches from /sys/devices/system/cpu/cpu0/cache, clock from /proc/cpuinfo. A fact it
  // cannot read keeps its default.
  static MachineModel from_host();

  std::string describe() const;  // one line, for logs
};

}  // namespace protuner
