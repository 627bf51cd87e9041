// Whether what the measurer reports is what the user gets (issue 55): each schedule of a
// set is compiled ahead of time as the user's build would compile it (a static library
// with Halide's registration, linked with Halide's own RunGenMain.cpp), timed by RunGen,
// and measured by the IsolatedMeasurer, under the default (platform) allocator policy and
// under the pooling one; the table prints all three side by side. A bench, not a test:
// timings on a shared machine are for a person to read.
//
// Each side's number is a per-process minimum, and one process differs from the next (where
// the kernel places the buffers, which pages are already mapped): RunGen alone moves by more
// than the 10% target between two runs of the same binary on some schedules. So RunGen and
// the measurer each time every schedule in --processes fresh processes, taken in turn, and
// the medians of their minima are compared; the table prints each side's range beside it.
//
// RunGen's samples are long (three or more fill --rungen-seconds), the measurer's short (10
// to 40 of at least 50 ms): where a schedule's runs vary by themselves (depthwise_conv's seed
// 0 faults in 39 MB of fresh heap every run, its 50 ms samples spread over 13.8-18.3 ms),
// the minimum of many short samples lies below that of a few long ones. --sample-seconds
// lengthens the measurer's samples to see how much of a gap that is.
//
// The schedules of each app: the generator's own, Halide's default, compute-root, and the
// first --seeds of protuner's seed schedules (searcher/seeds/seed_schedules.h), which allocate
// intermediates in the ways searches do.
//
// Usage: rungen_agreement [--apps harris,unsharp,...] [--seeds 3] [--cpus 0,1]
//                         [--rungen-seconds 1] [--processes 3] [--sample-seconds S]
//                         [--keep DIR]
// Apps are named as tests/bench/bench_apps.h says. Exit code 0 when every pair agrees
// within 10%, 1 when some does not, 2 for bad flags or an app that cannot be compiled.
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <Halide.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "common/app.h"
#include "common/host_target.h"
#include "common/pipeline_io.h"
#include "common/schedule/apply_schedule.h"
#include "common/schedule/schedule_json.h"
#include "coordinator/text_table.h"
#include "coordinator/tune.h"
#include "measurer/isolated_measurer.h"
#include "searcher/cost/analytic_model.h"
#include "searcher/seeds/seed_schedules.h"
#include "tests/bench/bench_apps.h"

namespace {

using namespace protuner;
namespace fs = std::filesystem;

// RunGen and the measurer may disagree by this much (issue 55's target).
constexpr double kAgreementTolerance = 0.10;

struct Args {
  std::vector<std::string> apps = {"harris",          "unsharp",    "bilateral_grid",
                                   "local_laplacian", "max_filter", "iir_blur"};
  int seeds = 3;
  std::vector<int> cpus;
  double rungen_seconds = 1;
  int processes = 3;  // fresh processes per side and schedule (see above)
  // The measurer's shortest sample (TimingSettings::min_sample_seconds); unset: its default.
  std::optional<double> sample_seconds;
  std::string keep;  // where the compiled runners stay; empty: a temporary folder
};

// One schedule of the set: what the measurer is asked for, and a label.
struct Candidate {
  std::string label;
  ScheduleSpec spec;
};

// Runs `command` through the shell; its output, and whether it exited 0.
std::pair<bool, std::string> run(const std::string &command) {
  std::string out;
  FILE *pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return {false, "cannot start: " + command};
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof(buf), pipe)) out.append(buf, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) && WEXITSTATUS(status) == 0, out};
}

std::string cpu_list(const std::vector<int> &cpus) {
  std::string s;
  for (int c : cpus) s += (s.empty() ? "" : ",") + std::to_string(c);
  return s;
}

// Compiles `candidate` of `spec` ahead of time into `dir`/runner: the pipeline built and
// scheduled as the measurer's child does, compiled to a static library with Halide's
// registration, linked with RunGenMain. Throws with the compiler's output on failure.
fs::path compile_runner(const AppSpec &spec, const Candidate &candidate, const fs::path &dir) {
  fs::create_directories(dir);
  const Halide::Target target = host_target();
  AppInstance app = AppInstance::create(spec, target,
                                        candidate.spec.kind == ScheduleKind::kOwn
                                            ? GeneratorSchedule::kOwn
                                            : GeneratorSchedule::kUnscheduled);
  Halide::Pipeline &p = app.pipeline();
  if (candidate.spec.kind == ScheduleKind::kProtuner) {
    auto graph = std::make_shared<const PipelineGraph>(analyze_pipeline(p));
    apply_schedule(schedule_from_json(candidate.spec.schedule_json, graph), p);
  } else if (candidate.spec.kind == ScheduleKind::kRoot) {
    apply_root_schedule(p);
  }
  const std::string fn = "pipeline";
  p.compile_to(
      {{Halide::OutputFileType::static_library, (dir / (fn + ".a")).string()},
       {Halide::OutputFileType::c_header, (dir / (fn + ".h")).string()},
       {Halide::OutputFileType::registration, (dir / (fn + ".registration.cpp")).string()}},
      p.infer_arguments(), fn, target);
  const fs::path runner = dir / "runner";
  const std::string link =
      std::string(PROTUNER_CXX) + " -std=c++17 -I" + PROTUNER_HALIDE_RUNTIME_INCLUDE + " " +
      PROTUNER_RUNGEN_MAIN_OBJECT + " " + (dir / (fn + ".registration.cpp")).string() + " " +
      (dir / (fn + ".a")).string() + " -o " + runner.string() + " -ldl -lpthread";
  const auto [ok, out] = run(link);
  if (!ok) throw std::runtime_error("linking the RunGen runner failed:\n" + link + "\n" + out);
  return runner;
}

// Adds `failure` to a schedule's error text, after the failures already there.
void add_error(std::string &error, const std::string &failure) {
  error += (error.empty() ? "" : "; ") + failure;
}

// RunGen's best time in ms, run as a user's benchmark would: the default allocator, the
// measurer's CPUs and thread count, inputs at the estimates filled with random values. A
// failure is added to `error`, which may already hold the other processes' failures.
std::optional<double> rungen_ms(const fs::path &runner, const std::vector<int> &cpus,
                                double seconds, std::string &error) {
  // No GLIBC_TUNABLES: the user's program runs with glibc's malloc as it comes.
  const std::string command =
      "env -u GLIBC_TUNABLES HL_NUM_THREADS=" + std::to_string(cpus.size()) + " taskset -c " +
      cpu_list(cpus) + " " + runner.string() +
      " --estimate_all --default_input_buffers=random:1:estimate_then_auto --benchmarks=all "
      "--benchmark_min_time=" +
      std::to_string(seconds) + " --parsable_output";
  const auto [ok, out] = run(command);
  const std::string key = "BEST_TIME_MSEC_PER_ITER";
  const auto at = out.find(key);
  if (!ok || at == std::string::npos) {
    add_error(error, "RunGen failed: " + out.substr(0, 400));
    return std::nullopt;
  }
  return std::stod(out.substr(at + key.size()));
}

std::vector<Candidate> candidates_of(const AppSpec &spec, int seeds, int cores) {
  std::vector<Candidate> out = {{"own", {ScheduleKind::kOwn}},
                                {"default", {ScheduleKind::kDefault}},
                                {"root", {ScheduleKind::kRoot}}};
  const PreparedApp app = prepare_app(spec, cores);
  AnalyticModel model(app.graph, app.machine);
  const std::vector<SeedSchedule> found =
      seeds_to_measure(app.graph, app.space->options(), model, seeds);
  for (size_t k = 0; k < found.size() && static_cast<int>(k) < seeds; ++k) {
    out.push_back(
        {"seed " + std::to_string(k), {ScheduleKind::kProtuner, schedule_to_json(found[k].state)}});
  }
  return out;
}

std::string ms_text(const std::optional<double> &ms) { return ms ? format_fixed(*ms, 3) : "-"; }

// The median of per-process times (the upper of the middle two for an even count), or none
// when some process failed: a side that did not time every run is not compared.
std::optional<double> median_of(std::vector<double> ms, int expected) {
  if (static_cast<int>(ms.size()) != expected || ms.empty()) return std::nullopt;
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

std::string range_text(const std::vector<double> &ms) {
  if (ms.empty()) return "-";
  const auto [lo, hi] = std::minmax_element(ms.begin(), ms.end());
  return format_fixed(*lo, 3) + "-" + format_fixed(*hi, 3);
}

std::string deviation_text(const std::optional<double> &ms, const std::optional<double> &truth) {
  if (!ms || !truth) return "-";
  return format_fixed(100 * (*ms / *truth - 1), 1);
}

Args parse_args(int argc, char **argv) {
  Args args;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--apps") {
      args.apps = bench::split_list(value);
    } else if (flag == "--seeds") {
      args.seeds = std::stoi(value);
    } else if (flag == "--cpus") {
      for (const auto &c : bench::split_list(value)) args.cpus.push_back(std::stoi(c));
    } else if (flag == "--rungen-seconds") {
      args.rungen_seconds = std::stod(value);
    } else if (flag == "--processes") {
      args.processes = std::stoi(value);
      if (args.processes < 1) throw std::invalid_argument("--processes must be at least 1");
    } else if (flag == "--sample-seconds") {
      args.sample_seconds = std::stod(value);
      if (!(*args.sample_seconds >= 0))
        throw std::invalid_argument("--sample-seconds must be non-negative");
    } else if (flag == "--keep") {
      args.keep = value;
    } else {
      throw std::invalid_argument("unknown flag " + flag);
    }
  }
  if (argc % 2 == 0)
    throw std::invalid_argument(std::string("flag without value: ") + argv[argc - 1]);
  return args;
}

}  // namespace

int main(int argc, char **argv) {
  Args args;
  try {
    args = parse_args(argc, argv);
  } catch (const std::exception &e) {
    std::cerr << "rungen_agreement: " << e.what() << "\n";
    return 2;
  }
  const fs::path work = args.keep.empty() ? fs::temp_directory_path() /
                                                ("protuner_rungen_" + std::to_string(getpid()))
                                          : fs::path(args.keep);
  IsolatedMeasurerOptions options;
  options.cpus = args.cpus;
  options.cache_dir = (work / "cache").string();
  options.use_result_cache = false;
  IsolatedMeasurer measurer(options);

  TextTable table({"app", "schedule", "RunGen ms", "RunGen range", "measurer ms",
                   "measurer range", "vs RunGen %", "pooling ms", "pooling vs RunGen %"});
  bool all_agree = true;
  for (const std::string &name : args.apps) {
    const AppSpec spec = bench::app_spec(name);
    std::vector<Candidate> candidates;
    try {
      candidates = candidates_of(spec, args.seeds, static_cast<int>(measurer.cpus().size()));
    } catch (const std::exception &e) {
      std::cerr << name << ": " << e.what() << "\n";
      return 2;
    }
    for (size_t k = 0; k < candidates.size(); ++k) {
      const Candidate &c = candidates[k];
      std::string error;
      auto measure = [&](AllocatorPolicy policy) -> std::optional<double> {
        MeasureRequest request{spec, c.spec, "host", {}, ""};
        request.settings.allocator = policy;
        if (args.sample_seconds) request.settings.timing.min_sample_seconds = *args.sample_seconds;
        const MeasureResult r = measurer.measure(request);
        if (r.ok()) return r.timing.min_ms;
        add_error(error, std::string("measurer (") + allocator_policy_name(policy) + "): " +
                             status_name(r.status) + ": " + r.error.substr(0, r.error.find('\n')));
        return std::nullopt;
      };
      std::optional<fs::path> runner;
      try {
        runner =
            compile_runner(spec, c, work / bench::split_list(name, ':').back() / std::to_string(k));
      } catch (const std::exception &e) {
        error = e.what();
      }
      // The two sides in turn, so that a drift of the machine over the minutes a schedule
      // takes reaches both.
      std::vector<double> rungen_runs, measurer_runs;
      for (int p = 0; p < args.processes; ++p) {
        if (runner) {
          if (auto ms = rungen_ms(*runner, measurer.cpus(), args.rungen_seconds, error))
            rungen_runs.push_back(*ms);
        }
        if (auto ms = measure(AllocatorPolicy::kPlatform)) measurer_runs.push_back(*ms);
      }
      const std::optional<double> pooling = measure(AllocatorPolicy::kPooling);
      const std::optional<double> truth = median_of(rungen_runs, args.processes);
      const std::optional<double> platform = median_of(measurer_runs, args.processes);
      if (!error.empty()) std::cerr << name << " / " << c.label << ": " << error << "\n";
      const bool agrees =
          truth && platform && std::abs(*platform / *truth - 1) <= kAgreementTolerance;
      // A schedule neither side could time says nothing about agreement.
      if ((!rungen_runs.empty() || !measurer_runs.empty()) && !agrees) all_agree = false;
      std::cerr << name << " / " << c.label << ": RunGen " << range_text(rungen_runs)
                << " ms, measurer " << range_text(measurer_runs) << " ms, pooling "
                << ms_text(pooling) << " ms\n";
      table.add_row({name, c.label, ms_text(truth), range_text(rungen_runs), ms_text(platform),
                     range_text(measurer_runs), deviation_text(platform, truth), ms_text(pooling),
                     deviation_text(pooling, truth)});
    }
  }
  std::cout
      << "\nRunGen = Halide's RunGenMain on the schedule compiled ahead of time (static "
         "library), best of its benchmark (min time "
      << args.rungen_seconds << " s), glibc's malloc as it comes; measurer = the "
      << "IsolatedMeasurer's minimum (compiled ahead of time, run in a fresh process, platform "
      << "allocator policy, the default). Each is the median over " << args.processes
      << " processes, with their range beside it; "
      << "pooling = one measurement under the pooling policy. CPUs " << cpu_list(measurer.cpus())
      << ", HL_NUM_THREADS " << measurer.cpus().size() << ". Agreement target: within "
      << 100 * kAgreementTolerance << "%.\n\n";
  table.print(std::cout);
  if (args.keep.empty()) fs::remove_all(work);
  return all_agree ? 0 : 1;
}
