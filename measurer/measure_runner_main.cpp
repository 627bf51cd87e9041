// `protuner-measure-runner`: runs one candidate compiled ahead of time, in a process of its
// own, as the user's program runs the generator it compiled: the candidate's shared object
// loaded into a fresh process whose malloc has no history (the measure child's JIT
// compilation has freed much memory, and glibc's malloc adapts its mmap and trim
// thresholds to that history, which can change a candidate's runtime many times over).
// The measure child (measure_child.cpp) compiles the candidate, writes its arguments as a
// run plan (run_plan.h) and starts this program twice: once to run the candidate and write
// its outputs, once to time it. It links neither libHalide nor LLVM; the app's generator
// library is loaded only when a pipeline calls extern functions it defines.
//
//   protuner-measure-runner --candidate C.so --function NAME --plan PLAN
//                           [--app-library APP.so] (--outputs FILE | --time SETTINGS)
//
// SETTINGS is TimingSettings as JSON ({"warmup_runs", "samples", ...}); --time prints the
// TimingResult as one JSON line on stdout. Exit codes: 0 done, 1 the pipeline returned an
// error (Halide's runtime printed it on stderr), 2 a bad command line or plan, 3 the
// candidate could not be loaded, 86 (child_protocol.h) operator new failed.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "common/errors.h"
#include "measurer/child_protocol.h"
#include "measurer/run_plan.h"
#include "measurer/rungen_inputs.h"
#include "measurer/timing.h"
#include "measurer/timing_json.h"

namespace {

using protuner::PlannedArgument;

constexpr int kExitPipelineError = 1, kExitUsage = 2, kExitLoad = 3;
// The measure child's own exit code for operator new failing (child_protocol.h).
constexpr int kExitOutOfMemory = protuner::child_protocol::kExitOutOfMemory;
// Halide's runtime allocates with this alignment; so does the runner, like RunGen.
constexpr size_t kAlignment = 128;

struct Args {
  std::string candidate, function, plan, app_library, outputs, timing;
};

[[noreturn]] void usage(const std::string &why) {
  std::cerr << "protuner-measure-runner: " << why
            << "\nusage: protuner-measure-runner --candidate C.so --function NAME --plan PLAN "
               "[--app-library APP.so] (--outputs FILE | --time SETTINGS_JSON)\n";
  std::exit(kExitUsage);
}

Args parse_args(int argc, char **argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) usage("'" + flag + "' needs a value");
    const std::string value = argv[++i];
    if (flag == "--candidate")
      a.candidate = value;
    else if (flag == "--function")
      a.function = value;
    else if (flag == "--plan")
      a.plan = value;
    else if (flag == "--app-library")
      a.app_library = value;
    else if (flag == "--outputs")
      a.outputs = value;
    else if (flag == "--time")
      a.timing = value;
    else
      usage("unknown flag '" + flag + "'");
  }
  if (a.candidate.empty() || a.function.empty() || a.plan.empty()) {
    usage("--candidate, --function and --plan are required");
  }
  if (a.outputs.empty() == a.timing.empty()) usage("give one of --outputs and --time");
  return a;
}

// A block of at least `bytes` at Halide's alignment, freed with std::free.
uint8_t *aligned_block(uint64_t bytes) {
  void *p = std::aligned_alloc(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
  if (!p) throw std::bad_alloc();
  return static_cast<uint8_t *>(p);
}

// The plan's arguments as the compiled function takes them: a halide_buffer_t per buffer
// over memory allocated here (inputs filled from the plan), a value per scalar.
struct Arguments {
  explicit Arguments(std::vector<PlannedArgument> planned) : planned(std::move(planned)) {
    buffers.resize(this->planned.size());
    hosts.resize(this->planned.size());
    for (size_t i = 0; i < this->planned.size(); ++i) {
      PlannedArgument &a = this->planned[i];
      if (a.kind == PlannedArgument::Kind::kScalar) {
        argv.push_back(a.data.data());
        continue;
      }
      const uint64_t bytes = protuner::allocation_bytes(a.type, a.dims);
      uint8_t *host = aligned_block(bytes);
      hosts[i].reset(host);
      if (a.kind == PlannedArgument::Kind::kInput)
        std::memcpy(host, a.data.data(), bytes);
      else
        std::memset(host, 0, bytes);
      halide_buffer_t &b = buffers[i];
      b = halide_buffer_t{};
      b.host = hosts[i].get();
      b.type = a.type;
      b.dimensions = static_cast<int32_t>(a.dims.size());
      b.dim = a.dims.data();
      argv.push_back(&b);
    }
  }

  // The outputs' data, back into the plan's output arguments.
  void collect_outputs() {
    for (size_t i = 0; i < planned.size(); ++i) {
      PlannedArgument &a = planned[i];
      if (a.kind != PlannedArgument::Kind::kOutput) continue;
      a.data.assign(hosts[i].get(), hosts[i].get() + protuner::allocation_bytes(a.type, a.dims));
    }
  }

  // Moves buffer argument i to a new allocation of the same size and frees the old one.
  void move_to_new_block(size_t i) {
    const uint64_t bytes = protuner::allocation_bytes(planned[i].type, planned[i].dims);
    uint8_t *host = aligned_block(bytes);
    std::memcpy(host, hosts[i].get(), bytes);
    hosts[i].reset(host);
    buffers[i].host = host;
  }

  struct Free {
    void operator()(uint8_t *p) const { std::free(p); }
  };
  std::vector<PlannedArgument> planned;
  std::vector<halide_buffer_t> buffers;
  std::vector<std::unique_ptr<uint8_t, Free>> hosts;
  std::vector<void *> argv;
};

// What the pipeline's runtime reports goes to stderr, where the measure child reads it; the
// runtime's default handler would abort the process after printing.
extern "C" void report_error(void *, const char *message) {
  (void)!write(STDERR_FILENO, message, std::strlen(message));
  (void)!write(STDERR_FILENO, "\n", 1);
}

// operator new failed under the measurement's address-space limit.
void out_of_memory() {
  static const char kMessage[] = "protuner-measure-runner: operator new failed: out of memory\n";
  (void)!write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
  _exit(kExitOutOfMemory);
}

using ArgvFunction = int (*)(void **);
using SetErrorHandler = void *(*)(void (*)(void *, const char *));

ArgvFunction load_candidate(const Args &a) {
  // The app's library only when the candidate needs it (a pipeline calling the app's
  // extern functions does not load without it): it links libHalide, whose static
  // initializers free blocks of megabytes, and glibc raises its mmap threshold to the
  // largest block freed, which the user's program never sees (tone_curve's second seed
  // schedule measured 2.1 ms with the library loaded first, against RunGen's 3.0 ms:
  // `rungen_agreement`).
  void *so = dlopen(a.candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!so && !a.app_library.empty()) {
    if (!dlopen(a.app_library.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
      std::cerr << "protuner-measure-runner: cannot load the app library: " << dlerror() << "\n";
      std::exit(kExitLoad);
    }
    so = dlopen(a.candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  if (!so) {
    std::cerr << "protuner-measure-runner: cannot load the candidate: " << dlerror() << "\n";
    std::exit(kExitLoad);
  }
  // The runtime is the candidate's own (each compiled candidate carries one).
  if (auto set = reinterpret_cast<SetErrorHandler>(dlsym(so, "halide_set_error_handler"))) {
    set(report_error);
  }
  const std::string symbol = a.function + "_argv";
  auto fn = reinterpret_cast<ArgvFunction>(dlsym(so, symbol.c_str()));
  if (!fn) {
    std::cerr << "protuner-measure-runner: the candidate has no " << symbol << "\n";
    std::exit(kExitLoad);
  }
  return fn;
}

// Frees what RunGen frees before its first run (rungen_inputs.h): an input RunGen would
// copy into a buffer of the bounds query's shape moves to a new block and its first block
// is freed. Its data and layout stay the plan's, so the outputs do not change.
void free_what_rungen_frees(ArgvFunction fn, Arguments &arguments) {
  std::vector<halide_buffer_t> query = arguments.buffers;
  std::vector<std::vector<halide_dimension_t>> queried(query.size());
  std::vector<void *> argv = arguments.argv;
  for (size_t i = 0; i < query.size(); ++i) {
    if (arguments.planned[i].kind != PlannedArgument::Kind::kInput) continue;
    queried[i] = arguments.planned[i].dims;
    query[i].host = nullptr;  // a bounds query: the pipeline writes the region it reads
    query[i].dim = queried[i].data();
    argv[i] = &query[i];
  }
  // A pipeline that fails its bounds query fails its run too, and the run reports it.
  if (fn(argv.data()) != 0) return;
  for (size_t i = 0; i < query.size(); ++i) {
    if (arguments.planned[i].kind == PlannedArgument::Kind::kInput &&
        protuner::rungen_copies_input(arguments.planned[i].dims, queried[i])) {
      arguments.move_to_new_block(i);
    }
  }
}

}  // namespace

int main(int argc, char **argv) {
  std::set_new_handler(out_of_memory);
  const Args args = parse_args(argc, argv);
  std::vector<PlannedArgument> planned;
  protuner::TimingSettings timing;
  try {
    planned = protuner::read_run_plan(args.plan);
    if (!args.timing.empty()) timing = protuner::timing_settings_from_json(args.timing);
  } catch (const std::exception &e) {
    usage(e.what());
  }
  const ArgvFunction fn = load_candidate(args);
  Arguments arguments(std::move(planned));
  free_what_rungen_frees(fn, arguments);
  // The runtime has printed what went wrong on stderr by the time it returns an error.
  const auto run = [&] {
    if (fn(arguments.argv.data()) != 0) std::exit(kExitPipelineError);
  };
  if (!args.outputs.empty()) {
    run();
    arguments.collect_outputs();
    try {
      protuner::write_run_plan(args.outputs, arguments.planned);
    } catch (const std::exception &e) {
      std::cerr << "protuner-measure-runner: " << e.what() << "\n";
      return kExitUsage;
    }
    return 0;
  }
  protuner::TimingResult r;
  try {
    r = protuner::time_runs(run, timing);
  } catch (const protuner::ConfigError &e) {
    usage(e.what());
  }
  std::cout << protuner::timing_result_to_json(r) << std::endl;
  // Skip static destructors: the runtime's thread pool has nothing to save.
  _exit(0);
}
