// The Halide target for this machine. Halide 14's host detection can claim features the
// CPU lacks: on AMD Zen 4 it reports avx512_sapphirerapids, whose code uses AVX512-FP16
// instructions (vmovw) that Zen 4 does not have, and such code dies with SIGILL. Every
// protuner process that compiles for "this machine" uses host_target() instead of
// Halide::get_host_target().
#pragma once

#include <set>
#include <string>

namespace Halide {
struct Target;
}

namespace protuner {

// Halide's host target without the features this CPU's flags (/proc/cpuinfo) rule out.
Halide::Target host_target();

// The same correction applied to any target and a set of CPU flags (testable without
// the machine in question).
Halide::Target without_missing_cpu_features(const Halide::Target &target,
                                            const std::set<std::string> &cpu_flags);

}  // namespace protuner
