// Facts about the machine a measurement runs on. Every result records them, because a
// runtime means nothing without the host: SMT on or off changes timings, and a frequency
// governor that scales down makes minima drift.
#pragma once

#include <string>

namespace protuner {

struct HostFacts {
  std::string cpu_model;      // /proc/cpuinfo "model name", or "unknown"
  int logical_cpus = 0;       // CPUs this process may run on (its affinity mask)
  int physical_cores = 0;     // distinct (package, core) pairs among those CPUs
  std::string smt;            // "on", "off" or "unknown" (/sys/devices/system/cpu/smt/active)
  std::string governor;       // cpufreq governor of CPU 0, or "none" without cpufreq
  std::string halide_target;  // Halide's host target string
};

// Reads the facts from /proc and /sys. Never throws: a fact it cannot read is "unknown".
HostFacts detect_host_facts();

// A name for this process that no other process of the farm has: <hostname>-<pid>-<4 random
// hex digits> (the farm's daemons use it when not given a name).
std::string unique_process_name();

}  // namespace protuner
