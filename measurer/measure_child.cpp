// One measurement inside the helper process, phase by phase: load and schedule the
// candidate, make sure the reference output exists, compile, run once and check, time.
// Each phase turns the errors it can catch into a Failure carrying the status.
#include "measurer/measure_child.h"

#include <dlfcn.h>
#include <unistd.h>

#include <Halide.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <new>
#include <optional>

#include "common/errors.h"
#include "common/host_facts.h"
#include "common/host_target.h"
#include "common/pipeline/pipeline_graph.h"
#include "common/pipeline_io.h"
#include "common/schedule/apply_schedule.h"
#include "common/schedule/schedule_json.h"
#include "common/unscheduled_check.h"
#include "measurer/cache_key.h"
#include "measurer/child_protocol.h"
#include "measurer/compiled_candidate.h"
#include "measurer/measure_json.h"
#include "measurer/output_check.h"
#include "measurer/reference_output.h"

namespace protuner {
namespace {

namespace cp = child_protocol;

struct Failure {
  MeasureStatus status;
  std::string error;
};

[[noreturn]] void fail(MeasureStatus status, std::string error) {
  throw Failure{status, std::move(error)};
}

bool is_out_of_memory(const std::string &halide_message) {
  // Halide's runtime reports a failed halide_malloc as "Out of memory (...)".
  return halide_message.find("Out of memory") != std::string::npos ||
         halide_message.find("out of memory") != std::string::npos;
}

// A runtime failure (a Halide runtime error or an exception from an extern stage).
[[noreturn]] void fail_at_runtime(const std::string &what, const std::exception &e) {
  if (dynamic_cast<const std::bad_alloc *>(&e) || is_out_of_memory(e.what())) {
    fail(MeasureStatus::kOutOfMemory, what + " ran out of memory: " + e.what());
  }
  fail(MeasureStatus::kRuntimeCrash, what + " failed: " + e.what());
}

Halide::Target resolve_target(const std::string &target) {
  if (target == "host") return host_target();
  if (!Halide::Target::validate_target_string(target)) {
    fail(MeasureStatus::kBadRequest, "'" + target + "' is not a Halide target string");
  }
  return Halide::Target(target);
}

// Halide's JIT resolves extern functions (define_extern, extern calls) by looking up
// symbols in the process's global scope, but generator libraries are loaded RTLD_LOCAL
// (common/app.cpp). Promoting the app's library to global lets a user's pipeline call
// functions its own library defines.
void make_library_symbols_global(const AppSpec &app) {
  const std::string &path = GeneratorLibrary::load(app.library).path();
  if (dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL) == nullptr) {
    const char *why = dlerror();
    spdlog::warn("cannot make the symbols of '{}' global: {}", path, why ? why : "unknown");
  }
}

AppInstance load_candidate(const MeasureRequest &request, const Halide::Target &target) {
  const bool own = request.schedule.kind == ScheduleKind::kOwn;
  try {
    AppInstance app = AppInstance::create(
        request.app, target, own ? GeneratorSchedule::kOwn : GeneratorSchedule::kUnscheduled);
    make_library_symbols_global(request.app);
    Halide::Pipeline &p = app.pipeline();
    // Every schedule but the generator's own goes onto the pipeline as Halide's driver
    // builds it for an autoscheduler, which must carry no directive (unscheduled_check.h).
    if (!own) require_unscheduled(p);
    switch (request.schedule.kind) {
      case ScheduleKind::kProtuner: {
        auto graph = std::make_shared<const PipelineGraph>(analyze_pipeline(p));
        apply_schedule(schedule_from_json(request.schedule.schedule_json, graph), p);
        break;
      }
      case ScheduleKind::kRoot:
        apply_root_schedule(p);
        break;
      case ScheduleKind::kOwn:
      case ScheduleKind::kDefault:
      case ScheduleKind::kAutoscheduler:
        break;  // autoscheduled in the compile phase
    }
    return app;
  } catch (const Failure &) {
    throw;
  } catch (const Error &e) {  // AppLoadError, ConfigError: the request is wrong
    fail(MeasureStatus::kBadRequest, e.what());
  } catch (const Halide::Error &e) {  // a directive Halide refuses
    fail(MeasureStatus::kCompileError, std::string("applying the schedule: ") + e.what());
  }
}

// Binds the standard inputs, allocates the outputs at their estimated regions and runs once.
Halide::Realization run_once(Halide::Pipeline &p, const Halide::Target &target, uint64_t seed) {
  try {
    bind_random_inputs(p, seed);
    Halide::Realization outputs = allocate_estimated_outputs(p);
    p.realize(outputs, target);
    return outputs;
  } catch (const ConfigError &e) {  // a missing estimate: the app cannot be measured
    fail(MeasureStatus::kBadRequest, e.what());
  }
}

// The host's last-level cache in bytes (the largest cache sysfs lists for CPU 0), capped
// at 64 MiB: virtual machines report sizes no working set can rely on. Halide's generic
// 16 MiB when sysfs says nothing. (Our own cost models trust 12 MiB at most,
// MachineModel::kMaxTrustedL3Bytes; the autoschedulers we compare against keep the cap
// their recorded baselines were measured with.)
uint64_t last_level_cache_bytes() {
  constexpr uint64_t kMaxTrusted = 64ull << 20, kFallback = 16ull << 20;
  uint64_t largest = 0;
  for (int i = 0; i < 8; ++i) {
    std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/size");
    uint64_t n = 0;
    char unit = 0;
    if (!(in >> n)) continue;
    if (in >> unit) n <<= unit == 'M' ? 20 : unit == 'K' ? 10 : 0;
    largest = std::max(largest, n);
  }
  return largest == 0 ? kFallback : std::min(largest, kMaxTrusted);
}

// Runs one of Halide's autoschedulers on the unscheduled pipeline: loads its plugin (which
// registers it by name) and calls Pipeline::auto_schedule, which applies the schedule to
// the pipeline's Funcs. `cores` is the measurer's CPU count, what the schedule runs on.
void autoschedule(Halide::Pipeline &p, const Halide::Target &target, const ScheduleSpec &spec,
                  int cores) {
  std::string plugin;
  try {
    plugin = autoscheduler_plugin_path(spec);
  } catch (const ConfigError &e) {
    fail(MeasureStatus::kBadRequest, e.what());
  }
  if (dlopen(plugin.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    const char *why = dlerror();
    fail(MeasureStatus::kBadRequest, "cannot load the autoscheduler plugin '" + plugin +
                                         "': " + (why ? why : "unknown reason"));
  }
  // 40: the load-to-arithmetic cost ratio Halide's own apps pass (machine_params=N,LLC,40).
  const Halide::MachineParams params(std::max(1, cores), last_level_cache_bytes(), 40);
  try {
    p.auto_schedule(spec.autoscheduler, target, params);
  } catch (const std::bad_alloc &) {
    fail(MeasureStatus::kOutOfMemory, "autoscheduler " + spec.autoscheduler + " ran out of memory");
  } catch (const Halide::Error &e) {
    fail(MeasureStatus::kCompileError,
         "autoscheduler " + spec.autoscheduler + " failed: " + std::string(e.what()));
  }
}

double compile(Halide::Pipeline &p, const Halide::Target &target, const std::string &what) {
  const auto start = std::chrono::steady_clock::now();
  try {
    p.compile_jit(target);
  } catch (const std::bad_alloc &) {
    fail(MeasureStatus::kOutOfMemory, what + ": compiling ran out of memory");
  } catch (const Halide::Error &e) {
    fail(MeasureStatus::kCompileError, what + " does not compile: " + e.what());
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

ReferenceOutput reference_for(const MeasureRequest &request, const Halide::Target &target,
                              const ChildMeasureOptions &options,
                              const std::function<void(const char *)> &enter_phase) {
  const std::string key = reference_key(request.app, target.to_string(), options.input_seed);
  const std::string path = reference_path(options.cache_dir, key);
  if (auto cached = load_reference(path, key)) return std::move(*cached);

  enter_phase(cp::kPhaseReference);
  const std::string what = "the reference (compute-root schedule)";
  AppInstance app = [&] {
    try {
      AppInstance a = AppInstance::create(request.app, target);
      apply_root_schedule(a.pipeline());
      return a;
    } catch (const Error &e) {
      fail(MeasureStatus::kBadRequest, e.what());
    }
  }();
  Halide::Pipeline &p = app.pipeline();
  compile(p, target, what);
  ReferenceOutput ref;
  try {
    Halide::Realization outputs = run_once(p, target, options.input_seed);
    for (size_t i = 0; i < outputs.size(); ++i) {
      ref.names.push_back(p.outputs()[i].name());
      ref.buffers.push_back(outputs[i]);
    }
  } catch (const Failure &) {
    throw;
  } catch (const std::exception &e) {
    fail_at_runtime(what, e);
  }
  try {
    save_reference(path, key, ref);
  } catch (const IoError &e) {
    spdlog::warn("the reference output is not cached: {}", e.what());
  }
  return ref;
}

// How the candidate's outputs differ from the reference beyond tolerance, or nullopt.
std::optional<std::string> output_difference(Halide::Pipeline &p, const Halide::Realization &got,
                                             const ReferenceOutput &reference) {
  if (got.size() != reference.buffers.size()) {
    return "the candidate has " + std::to_string(got.size()) + " outputs, the reference " +
           std::to_string(reference.buffers.size());
  }
  for (size_t i = 0; i < got.size(); ++i) {
    if (auto diff = compare_output(p.outputs()[i].name(), reference.buffers[i], got[i])) {
      return diff;
    }
  }
  return std::nullopt;
}

// The second opinion on a candidate whose output differs (output_check.h says why it is
// needed): the candidate and the reference compiled with strict_float, where no schedule
// may contract or reassociate float arithmetic, must agree within the same tolerance.
// Returns when they do (the first difference came from float rounding alone); otherwise
// fails with wrong_output and `difference`, the first check's finding.
void confirm_under_strict_float(const MeasureRequest &request, const Halide::Target &target,
                                const ChildMeasureOptions &options, int cores,
                                const std::function<void(const char *)> &enter_phase,
                                const std::string &difference) {
  if (target.has_feature(Halide::Target::StrictFloat)) {
    fail(MeasureStatus::kWrongOutput, difference);  // that was the strict check already
  }
  const Halide::Target strict = target.with_feature(Halide::Target::StrictFloat);
  std::optional<std::string> strict_difference;
  try {
    const ReferenceOutput reference = reference_for(request, strict, options, enter_phase);
    enter_phase(cp::kPhaseStrictCheck);
    AppInstance app = load_candidate(request, strict);
    Halide::Pipeline &p = app.pipeline();
    if (request.schedule.kind == ScheduleKind::kAutoscheduler) {
      autoschedule(p, strict, request.schedule, cores);
    }
    compile(p, strict, "the candidate with strict_float");
    try {
      strict_difference = output_difference(p, run_once(p, strict, options.input_seed), reference);
    } catch (const Failure &) {
      throw;
    } catch (const std::exception &e) {
      fail_at_runtime("the candidate with strict_float", e);
    }
  } catch (const Failure &f) {
    fail(MeasureStatus::kWrongOutput,
         difference + " (the check with strict_float could not be made: " + f.error + ")");
  }
  if (strict_difference) {
    fail(MeasureStatus::kWrongOutput,
         difference + " (with strict_float too: " + *strict_difference + ")");
  }
  spdlog::info("the output differs only without strict_float ({}): float rounding, accepted",
               difference);
}

// The candidate compiled as the user's build compiles it, in this child's folder under the
// cache (compiled_candidate.h). A directive Halide refuses at compile time is a
// compile_error, a link that fails a measurer_error (it says nothing of the candidate).
std::optional<CompiledCandidate> compile_ahead_of_time(Halide::Pipeline &p,
                                                       const Halide::Target &target,
                                                       const ChildMeasureOptions &options) {
  try {
    return CompiledCandidate(p, target, candidate_dir(options.cache_dir, getpid()),
                             options.linker.empty() ? PROTUNER_LINKER : options.linker);
  } catch (const std::bad_alloc &) {
    fail(MeasureStatus::kOutOfMemory, "the candidate: compiling ran out of memory");
  } catch (const Halide::Error &e) {
    fail(MeasureStatus::kCompileError, std::string("the candidate does not compile: ") + e.what());
  } catch (const IoError &e) {
    fail(MeasureStatus::kMeasurerError, e.what());
  }
}

// Fills `result` as it goes, so a failure keeps what was learned before it (the host,
// the compile time).
void measure(const MeasureRequest &request, const ChildMeasureOptions &options,
             const std::function<void(const char *)> &enter_phase, MeasureResult &result) {
  const Halide::Target target = resolve_target(request.target);
  AppInstance app = load_candidate(request, target);
  Halide::Pipeline &p = app.pipeline();

  std::optional<ReferenceOutput> reference;
  if (request.settings.check_output) {
    reference = reference_for(request, target, options, enter_phase);
  }
  enter_phase(cp::kPhaseCompile);
  const auto compile_start = std::chrono::steady_clock::now();
  if (request.schedule.kind == ScheduleKind::kAutoscheduler) {
    autoschedule(p, target, request.schedule, result.host.logical_cpus);
  }
  std::optional<CompiledCandidate> candidate = compile_ahead_of_time(p, target, options);
  // Autoscheduling is part of what it costs to get this schedule compiled.
  result.compile_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - compile_start).count();

  enter_phase(cp::kPhaseRun);
  try {
    std::vector<BoundInput> inputs;
    Halide::Realization outputs = [&] {
      try {
        inputs = bind_random_inputs(p, options.input_seed);
        return allocate_estimated_outputs(p);
      } catch (const ConfigError &e) {  // a missing estimate: the app cannot be measured
        fail(MeasureStatus::kBadRequest, e.what());
      }
    }();
    candidate->plan(inputs, outputs);
    const std::string &library = GeneratorLibrary::load(request.app.library).path();
    if (auto failure = candidate->run_once(library, outputs)) fail(failure->status, failure->error);
    if (reference) {
      if (std::optional<std::string> diff = output_difference(p, outputs, *reference)) {
        confirm_under_strict_float(request, target, options, result.host.logical_cpus, enter_phase,
                                   *diff);
        enter_phase(cp::kPhaseRun);
      }
    }
    TimingResult timing;
    if (auto failure = candidate->time(library, request.settings.timing, timing)) {
      fail(failure->status, failure->error);
    }
    result.timing = timing;
  } catch (const Failure &) {
    throw;
  } catch (const IoError &e) {  // the runner could not be started or its files written
    fail(MeasureStatus::kMeasurerError, e.what());
  } catch (const ConfigError &e) {  // timing settings out of range
    fail(MeasureStatus::kBadRequest, e.what());
  } catch (const std::exception &e) {
    fail_at_runtime("the candidate", e);
  }
  result.status = MeasureStatus::kOk;
}

}  // namespace

MeasureResult measure_in_this_process(const std::string &request_text,
                                      const ChildMeasureOptions &options,
                                      const std::function<void(const char *)> &enter_phase) {
  MeasureResult result;
  try {
    enter_phase(cp::kPhaseLoad);
    result.host = detect_host_facts();
    const MeasureRequest request = request_from_json(request_text);
    measure(request, options, enter_phase, result);
  } catch (const Failure &f) {
    result.status = f.status;
    result.error = f.error;
    result.timing = {};
  } catch (const ConfigError &e) {
    result.status = MeasureStatus::kBadRequest;
    result.error = e.what();
  } catch (const std::bad_alloc &) {
    result.status = MeasureStatus::kOutOfMemory;
    result.error = "the measurement ran out of memory";
  } catch (const std::exception &e) {
    result.status = MeasureStatus::kRuntimeCrash;
    result.error = std::string("unexpected error in the measurement: ") + e.what();
  }
  return result;
}

}  // namespace protuner
