// The environment a measure child runs under. Two things in it decide what a measurement
// means, so they are set here, the same for every candidate, whatever the measurer's own
// environment says:
//   - HL_NUM_THREADS: Halide's thread pool is as wide as the CPUs the child is pinned to.
//   - the allocator policy: glibc's malloc keeps freed memory for reuse instead of handing
//     big blocks back to the kernel. By default glibc decides that from the process's
//     allocation history (a dynamic mmap threshold, arena trimming), so a pipeline whose
//     intermediates are freed and reallocated on every run page-faults on all of them in
//     some runs and on none in others: bilateral_grid's expert schedule measured 14.9 ms in
//     one fresh child and 33-37 ms in the next four, and stencil_chain's measured 58-65 ms
//     in every child but 28-30 ms in a process that had run longer. With the policy a
//     schedule is timed as it runs with a warm heap (as under a pooling allocator, which
//     Halide lets an application install): its compute and memory traffic, not the heap's
//     past. Blocks too big for a worker thread's arena (64 MiB) are still fresh pages.
#pragma once

#include <string>
#include <vector>

namespace protuner {

// glibc tunables of the allocator policy: no mmap threshold and no trimming, fixed so the
// dynamic adjustment is off.
inline constexpr char kMeasureMallocTunables[] =
    "glibc.malloc.mmap_threshold=4294967295:glibc.malloc.trim_threshold=4294967295";

// `tunables` (a GLIBC_TUNABLES value, possibly empty) with every glibc.malloc.mmap_threshold
// and glibc.malloc.trim_threshold entry replaced by the policy's; other tunables are kept.
std::string with_measure_malloc_tunables(const std::string &tunables);

// `environment` (NAME=value entries, as in environ) for a child timing on `threads` CPUs:
// HL_NUM_THREADS and GLIBC_TUNABLES set as above, everything else kept in order.
std::vector<std::string> measure_child_environment(const std::vector<std::string> &environment,
                                                   int threads);

}  // namespace protuner
