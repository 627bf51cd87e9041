// The environment a measure child runs under. Two things in it decide what a measurement
// means, so they are set here, the same for every candidate, whatever the measurer's own
// environment says:
//   - HL_NUM_THREADS: Halide's thread pool is as wide as the CPUs the child is pinned to.
//   - the allocator policy (AllocatorPolicy, measurement.h). By default (kPlatform) a
//     candidate runs under glibc's malloc as it comes, the allocator the user's program
//     will run it with, in a fresh process (protuner-measure-runner, which inherits this
//     environment): glibc's dynamic mmap threshold hands large freed intermediates
//     back to the kernel, and a schedule that allocates them on every run pays for the
//     page faults there too, often more than for its compute (some schedules run many
//     times slower so than under a pooling policy; `build/bin/rungen_agreement` prints
//     both beside RunGen). kPooling sets glibc's
//     mmap and trim thresholds to their maximum, so freed memory is reused as under a
//     pooling allocator an application installs; it is an explicit option, recorded with
//     every result and part of every cache key.
#pragma once

#include <string>
#include <vector>

#include "measurer/measurement.h"

namespace protuner {

// glibc tunables of the pooling policy: no mmap threshold and no trimming, fixed so the
// dynamic adjustment is off.
inline constexpr char kPoolingMallocTunables[] =
    "glibc.malloc.mmap_threshold=4294967295:glibc.malloc.trim_threshold=4294967295";

// `tunables` (a GLIBC_TUNABLES value, possibly empty) with every glibc.malloc.mmap_threshold
// and glibc.malloc.trim_threshold entry removed, and the pooling policy's appended under
// kPooling; other tunables are kept.
std::string with_malloc_tunables(const std::string &tunables, AllocatorPolicy policy);

// `environment` (NAME=value entries, as in environ) for a child timing on `threads` CPUs
// under `policy`: HL_NUM_THREADS set, GLIBC_TUNABLES as above (dropped when nothing is
// left of it), everything else kept in order.
std::vector<std::string> measure_child_environment(const std::vector<std::string> &environment,
                                                   int threads, AllocatorPolicy policy);

}  // namespace protuner
