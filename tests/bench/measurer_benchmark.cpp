// The measurer's two numbers from issue 5, printed as a table (not a test: timings on a
// shared machine are for a person to read):
//   overhead      - the minimum the IsolatedMeasurer reports for an app's own schedule
//                   vs the same pipeline compiled in this process and timed in a tight
//                   loop on the same CPUs with the same thread count (target: within 5%);
//   repeatability - the spread of the minima of 5 isolated measurements of the same
//                   schedule, result cache off (target: within 3%).
//
// Usage: measurer_benchmark [--apps harris,unsharp,resnet50/resnet50_head] [--repeats 5]
//                           [--cpus 0,1] [--samples N] [--max-samples N]
//                           [--min-sample-seconds S]
// Apps are named as tests/bench/bench_apps.h says.
#include <sched.h>
#include <unistd.h>

#include <Halide.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "common/app.h"
#include "common/host_target.h"
#include "common/pipeline_io.h"
#include "coordinator/text_table.h"
#include "measurer/child_environment.h"
#include "measurer/isolated_measurer.h"
#include "measurer/timing.h"
#include "tests/bench/bench_apps.h"

namespace {

using namespace protuner;
using bench::app_spec;
using bench::split_list;

struct Args {
  std::vector<std::string> apps = {"harris", "unsharp", "resnet50/resnet50_head"};
  int repeats = 5;
  std::vector<int> cpus;
  MeasureSettings settings;  // the farm's defaults (measurer/timing.h) unless flags say
};

// The app's own schedule compiled in this process and timed in a tight loop around
// realize() with the same statistic the measurer reports (measurer/timing.h).
class DirectTimer {
 public:
  explicit DirectTimer(const AppSpec &spec)
      : target_(host_target()),
        app_(AppInstance::create(spec, target_, GeneratorSchedule::kOwn)),
        out_(allocate_estimated_outputs(app_.pipeline())) {
    bind_random_inputs(app_.pipeline(), 1);
    app_.pipeline().compile_jit(target_);
  }

  double min_ms(const TimingSettings &timing) {
    Halide::Pipeline &p = app_.pipeline();
    return time_runs([&] { p.realize(out_, target_); }, timing).min_ms;
  }

 private:
  Halide::Target target_;
  AppInstance app_;
  Halide::Realization out_;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void pin_this_process(const std::vector<int> &cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(c, &set);
  sched_setaffinity(0, sizeof(set), &set);
  // Halide reads this when its thread pool starts, which has not happened yet.
  setenv("HL_NUM_THREADS", std::to_string(cpus.size()).c_str(), 1);
}

// The direct side must time under the allocator policy the measure child runs with
// (measurer/child_environment.h); glibc reads its tunables only at start, so the benchmark
// starts itself again with them.
void run_under_measure_allocator_policy(char **argv) {
  const char *current = std::getenv("GLIBC_TUNABLES");
  const std::string wanted =
      with_malloc_tunables(current ? current : "", MeasureSettings{}.allocator);
  if (wanted == (current ? current : "")) return;
  if (wanted.empty()) {
    unsetenv("GLIBC_TUNABLES");
  } else {
    setenv("GLIBC_TUNABLES", wanted.c_str(), 1);
  }
  execv("/proc/self/exe", argv);
  std::cerr << "measurer_benchmark: cannot restart under the allocator policy; direct timings "
               "use glibc's defaults\n";
  unsetenv("GLIBC_TUNABLES");
}

}  // namespace

int main(int argc, char **argv) {
  run_under_measure_allocator_policy(argv);
  Args args;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--apps") {
      args.apps = split_list(value);
    } else if (flag == "--repeats") {
      args.repeats = std::stoi(value);
    } else if (flag == "--cpus") {
      for (const auto &c : split_list(value)) args.cpus.push_back(std::stoi(c));
    } else if (flag == "--samples") {
      args.settings.timing.set_samples(std::stoi(value));
    } else if (flag == "--max-samples") {
      args.settings.timing.max_samples = std::stoi(value);
    } else if (flag == "--min-sample-seconds") {
      args.settings.timing.min_sample_seconds = std::stod(value);
    } else {
      std::cerr << "unknown flag " << flag << "\n";
      return 2;
    }
  }
  const auto cache = std::filesystem::temp_directory_path() / "protuner_measurer_benchmark";
  IsolatedMeasurerOptions options;
  options.cpus = args.cpus;
  options.cache_dir = cache.string();
  options.use_result_cache = false;
  IsolatedMeasurer measurer(options);
  pin_this_process(measurer.cpus());

  const MeasureSettings &settings = args.settings;
  TextTable table({"app", "isolated min ms (median; lo..hi)", "direct min ms (median)",
                   "overhead %",
                   "minima spread %", "direct minima spread %", "samples (confirmed)",
                   "compile s"});
  for (const std::string &name : args.apps) {
    MeasureRequest request;
    request.app = app_spec(name);
    request.schedule = {ScheduleKind::kOwn, ""};
    request.target = "host";
    request.settings = settings;
    // Isolated and direct alternate, so a change in background load touches both alike.
    DirectTimer direct(request.app);
    std::vector<double> minima, direct_minima;
    double compile = 0;
    size_t samples = 0;
    int confirmed = 0;
    for (int i = 0; i < args.repeats; ++i) {
      const MeasureResult r = measurer.measure(request);
      if (!r.ok()) {
        std::cerr << name << ": " << status_name(r.status) << ": " << r.error << "\n";
        return 1;
      }
      minima.push_back(r.timing.min_ms);
      compile = r.compile_seconds;
      samples += r.timing.samples_ms.size();
      confirmed += r.timing.confirmed ? 1 : 0;
      direct_minima.push_back(direct.min_ms(settings.timing));
      std::cerr << name << " #" << i + 1 << ": isolated " << minima.back() << " ms, direct "
                << direct_minima.back() << " ms\n";
    }
    const double lo = *std::min_element(minima.begin(), minima.end());
    const double hi = *std::max_element(minima.begin(), minima.end());
    const double iso = median(minima), dir = median(direct_minima);
    const double direct_lo = *std::min_element(direct_minima.begin(), direct_minima.end());
    const double direct_hi = *std::max_element(direct_minima.begin(), direct_minima.end());
    table.add_row({name,
                   format_fixed(iso, 3) + " (" + format_fixed(lo, 3) + ".." + format_fixed(hi, 3) +
                       ")",
                   format_fixed(dir, 3), format_fixed(100 * (iso / dir - 1), 2),
                   format_fixed(100 * (hi / lo - 1), 2),
                   format_fixed(100 * (direct_hi / direct_lo - 1), 2),
                   format_fixed(static_cast<double>(samples) / args.repeats, 1) + " (" +
                       std::to_string(confirmed) + "/" + std::to_string(args.repeats) + ")",
                   format_fixed(compile, 2)});
  }
  const HostFacts &h = measurer.host();
  std::cout << "measurer_benchmark: " << h.cpu_model << ", cpus " << measurer.cpus().size()
            << ", SMT " << h.smt << ", governor " << h.governor << "\n"
            << "isolated = the minima of " << args.repeats
            << " IsolatedMeasurer runs (" << settings.timing.samples << ".."
            << settings.timing.max_samples << " samples >= " << settings.timing.min_sample_seconds
            << " s each until " << settings.timing.confirming_samples << " lie within "
            << 100 * settings.timing.confirm_within
            << "% of the minimum; cache off), alternating with "
            << "as many in-process (direct) timings; overhead = median isolated / median direct "
            << "- 1; spread = max / min - 1 of the isolated minima; direct spread the same of "
            << "the direct minima (one process, one compiled pipeline, the same buffers: what "
            << "the machine itself drifts); direct times with GLIBC_TUNABLES="
            << (std::getenv("GLIBC_TUNABLES") ? std::getenv("GLIBC_TUNABLES") : "(unset)")
            << ", the measure child under the "
            << allocator_policy_name(MeasureSettings{}.allocator) << " allocator policy\n\n";
  table.print(std::cout);
  return 0;
}
