// The measurer as a library call: each request is measured in a fresh helper process
// (`protuner-measure-child`, protocol in child_protocol.h), so a candidate that segfaults,
// hangs, or allocates without bound costs one child, never the caller. The child runs in
// its own process group, pinned to the measurer's CPUs with HL_NUM_THREADS set to their
// count, under an address-space limit; the parent enforces a wall-clock limit per phase
// (compile, run) by killing the whole group.
//
// How a child's end becomes a status:
//   a result line                                   -> that result
//   killed by us at a phase deadline                -> timeout
//   exit code kExitOutOfMemory (operator new failed) -> out_of_memory
//   SIGKILL not sent by us (the kernel OOM killer)  -> out_of_memory
//   a fatal signal or exit with "out of memory" / "bad_alloc" in its stderr
//                                                   -> out_of_memory
//   SIGSEGV, SIGABRT, SIGBUS, SIGILL, SIGFPE, another exit while loading or compiling
//                                                   -> compile_error (Halide/LLVM died compiling)
//   the same while computing the reference or running -> runtime_crash
// Failures carry the tail of the child's stderr.
//
// Also: the result cache (result_cache.h) answers repeats; `require_smt_off` refuses with
// bad_request when SMT is on.
//
// Thread safety: measure() may be called from any thread; calls are serialized (one
// measurement at a time per measurer, so measurements never compete for the CPUs). The
// calling thread forks and execs the child immediately (nothing runs between the two but
// system calls), so callers may be multi-threaded.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/host_facts.h"
#include "measurer/measurement.h"
#include "measurer/result_cache.h"

namespace protuner {

struct IsolatedMeasurerOptions {
  // The helper executable. Empty: `protuner-measure-child` in the folder of the running
  // executable (/proc/self/exe), where the build puts every program.
  std::string child_executable;
  // CPUs the child is pinned to, and its thread count. Empty: this process's affinity.
  std::vector<int> cpus;
  // Reference outputs and cached results. Empty: default_cache_dir() (cache_key.h).
  std::string cache_dir;
  bool use_result_cache = true;
  // Replaces the detected SMT state ("on"/"off"), so tests can exercise require_smt_off.
  std::optional<std::string> smt_override;
  // How much of the child's stderr a failure's error text carries.
  size_t stderr_tail_bytes = 4096;
};

class IsolatedMeasurer : public MeasurementBackend {
 public:
  // Throws ConfigError when the child executable is missing or a CPU is not available to
  // this process; IoError when the cache directory cannot be created.
  explicit IsolatedMeasurer(IsolatedMeasurerOptions options = {});
  IsolatedMeasurer(const IsolatedMeasurer &) = delete;
  IsolatedMeasurer &operator=(const IsolatedMeasurer &) = delete;

  // Never throws for a bad candidate or a bad request (they are statuses); throws IoError
  // only when a system call the measurement itself needs fails (fork, pipe, poll).
  MeasureResult measure(const MeasureRequest &request) override;

  const std::vector<int> &cpus() const { return options_.cpus; }
  const std::string &cache_dir() const { return options_.cache_dir; }
  const HostFacts &host() const { return host_; }

 private:
  MeasureResult measure_uncached(const MeasureRequest &request);

  IsolatedMeasurerOptions options_;
  HostFacts host_;           // detected once, SMT override applied
  std::string host_target_;  // what "host" resolves to
  ResultCache cache_;
  std::mutex mutex_;         // one measurement at a time
};

// The helper executable next to the running one: "<dir of /proc/self/exe>/protuner-measure-child".
std::string default_child_executable();

}  // namespace protuner
