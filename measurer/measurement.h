// What one measurement is: the request a searcher sends (which app, which schedule, which
// target, how to time it) and the result it gets back. This is the whole interface between
// search and measurement; the library call, `protuner measure` and the ZeroMQ measurer
// daemon all speak it, and measure_json.h is its one serialized form.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/app.h"
#include "common/host_facts.h"
#include "measurer/timing.h"

namespace protuner {

// Which schedule to measure. "protuner" carries a serialized schedule (schedule_json.h);
// the others are baselines every report compares against.
enum class ScheduleKind : uint8_t {
  kProtuner,  // `schedule_json`: protuner's serialized form
  kOwn,       // the generator's own schedule: built with auto_schedule=false
  kDefault,   // Halide's default: everything inlined, outputs serial
  kRoot,      // every Func compute_root, nothing else: the safe reference schedule
  // One of Halide's own autoschedulers, run in the measurement child on the unscheduled
  // pipeline (MachineParams: the measurer's CPU count, the host's last-level cache, 40).
  // Its time counts as compile time, under the compile timeout and memory limit, so an
  // autoscheduler that runs out of either is a timeout / out_of_memory result.
  kAutoscheduler,
};

// How a protuner schedule becomes Halide calls (common/schedule/schedule_directives.h), named in
// result-cache keys: the same schedule JSON applied through other directives is another
// measurement. Change it when the directives change.
constexpr const char *kProtunerDirectives =
    "11: inner tails round up where safe (never in a scatter), outputs' ragged tiles shift "
    "inwards, small allocations on the stack, no shifted tiles in Funcs whose readers' "
    "regions vary or in input readers inside fused loops, reductions in parallel bands by "
    "rfactor, rows aligned under strided vector reads in unrolled rows, constant reduction "
    "loops unrolled, reductions in vector lanes by rfactor";

struct ScheduleSpec {
  // Brace-initialized as {kind}, {kind, json} or with every field: the kind-specific
  // fields default to empty without -Wmissing-field-initializers at every call site.
  ScheduleSpec(ScheduleKind kind = ScheduleKind::kProtuner, std::string schedule_json = "",
               std::string autoscheduler = "", std::string autoscheduler_plugin = "")
      : kind(kind), schedule_json(std::move(schedule_json)),
        autoscheduler(std::move(autoscheduler)),
        autoscheduler_plugin(std::move(autoscheduler_plugin)) {}

  ScheduleKind kind = ScheduleKind::kProtuner;
  std::string schedule_json;  // kProtuner only
  // kAutoscheduler only: the name the plugin registers ("Adams2019", "Mullapudi2016",
  // "Li2018"), and the plugin's path; empty: Halide's own plugin for that name
  // (autoscheduler_plugin_path).
  std::string autoscheduler;
  std::string autoscheduler_plugin;
};

// The autoschedulers Halide 14 ships as plugins, in the order help texts list them.
const std::vector<std::string> &halide_autoscheduler_names();

// The plugin to load for a kAutoscheduler spec: its explicit path, else the Halide 14
// plugin of that name next to libHalide (libautoschedule_<lowercase name>.so). Throws
// ConfigError for an unknown name without an explicit path, naming the known ones.
std::string autoscheduler_plugin_path(const ScheduleSpec &spec);

// Which malloc a candidate is timed under (child_environment.h says what each does and
// why the platform's is the default).
enum class AllocatorPolicy : uint8_t {
  kPlatform,  // the platform's allocator as it comes: what the user's program runs with
  kPooling,   // freed memory kept for reuse, as under a pooling allocator
};

// "platform", "pooling": the names used in JSON and reports.
const char *allocator_policy_name(AllocatorPolicy policy);
// The inverse; throws ConfigError for an unknown name, naming the known ones.
AllocatorPolicy parse_allocator_policy(const std::string &name);

// How a candidate is compiled, run, checked and timed. Defaults are the farm's.
struct MeasureSettings {
  TimingSettings timing;
  AllocatorPolicy allocator = AllocatorPolicy::kPlatform;
  double compile_timeout_seconds = 300;  // wall clock for compiling the candidate in the child
  double run_timeout_seconds = 120;      // wall clock for reference check + all timing runs
  int64_t memory_limit_mb = 16384;       // address-space limit of the child
  bool require_smt_off = false;          // refuse to measure when SMT is on (farm: true)
  bool check_output = true;              // compare with the reference output
};

enum class MeasureStatus : uint8_t {
  kOk,
  kCompileError,
  kRuntimeCrash,
  kTimeout,
  kOutOfMemory,
  kWrongOutput,
  kBadRequest,
  // The measurer itself failed (its helper process did not start: a missing or replaced
  // executable, a library the loader cannot find). Says nothing of the candidate: never
  // cached, and worth asking another measurer.
  kMeasurerError,
  // Not measured: the caller cancelled the request, or its deadline passed, before a
  // measurer started on it (MeasurerClient::set_deadline). Says nothing of the candidate:
  // never cached, never counted as a failure.
  kCancelled,
};
inline constexpr size_t kMeasureStatusCount = static_cast<size_t>(MeasureStatus::kCancelled) + 1;

// "ok", "compile_error", "runtime_crash", "timeout", "out_of_memory", "wrong_output",
// "bad_request", "measurer_error", "cancelled": the names used on the wire, in JSON and in
// reports.
const char *status_name(MeasureStatus status);
// Every status, in declaration order.
const std::vector<MeasureStatus> &all_statuses();
// The inverse; throws ConfigError for an unknown name.
MeasureStatus parse_status(const std::string &name);

struct MeasureRequest {
  AppSpec app;
  ScheduleSpec schedule;
  std::string target;  // Halide target string; "host" means protuner::host_target()
  MeasureSettings settings;
  // Set by the farm's searchers: the SHA-256 the app's library is stored under in the
  // farm's Redis. A measurer serving the farm loads only that (library_fetching_backend.h)
  // and ignores app.library; "" for local use, where app.library is loaded.
  std::string library_sha256;
};

struct MeasureResult {
  MeasureStatus status = MeasureStatus::kBadRequest;
  double compile_seconds = 0;
  TimingResult timing;   // empty samples unless status == kOk
  HostFacts host;        // the host it ran under (cores used, SMT, governor)
  std::vector<int> cpus;  // the CPUs the child was pinned to
  std::string error;     // why it failed; empty when ok
  AllocatorPolicy allocator = AllocatorPolicy::kPlatform;  // what it was timed under
  bool from_cache = false;

  bool ok() const { return status == MeasureStatus::kOk; }
};

// Something that answers measurement requests: the in-process isolated measurer, a
// remote measurer daemon through the client, a fake in tests. Implementations never throw
// for a bad request or a bad candidate: those become a result status.
class MeasurementBackend {
 public:
  virtual ~MeasurementBackend() = default;
  virtual MeasureResult measure(const MeasureRequest &request) = 0;
};

}  // namespace protuner
