// How well the analytic cost model ranks real schedules: for a few test pipelines, random
// complete schedules (fixed seeds) are JIT-compiled and timed in this process, and the
// model's predictions are compared with the measured times by pairwise ranking accuracy
// (the share of schedule pairs the model orders correctly) and Spearman correlation.
// Not a test: it prints numbers for a person to read and for tuning the model's constants.
// Usage: analytic_model_bench [schedules per pipeline, default 20] [only this pipeline]
#include <Halide.h>
#include <algorithm>
#include <cstdio>
#include <functional>
#include <numeric>
#include <optional>
#include <string>
#include <random>

#include "common/host_target.h"
#include "common/pipeline_io.h"
#include "common/schedule/apply_schedule.h"
#include "measurer/timing.h"
#include "searcher/cost/analytic_model.h"
#include "searcher/space/search_space.h"
#include "tests/searcher/test_pipelines.h"

namespace {

using namespace protuner;

std::vector<double> ranks(const std::vector<double> &v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < order.size(); ++i) r[order[i]] = static_cast<double>(i);
  return r;
}

double spearman(const std::vector<double> &a, const std::vector<double> &b) {
  const std::vector<double> ra = ranks(a), rb = ranks(b);
  const double n = static_cast<double>(a.size());
  double d2 = 0;
  for (size_t i = 0; i < a.size(); ++i) d2 += (ra[i] - rb[i]) * (ra[i] - rb[i]);
  return 1 - 6 * d2 / (n * (n * n - 1));
}

double pairwise_accuracy(const std::vector<double> &predicted, const std::vector<double> &measured) {
  int right = 0, pairs = 0;
  for (size_t i = 0; i < predicted.size(); ++i) {
    for (size_t j = i + 1; j < predicted.size(); ++j) {
      if (measured[i] == measured[j]) continue;
      ++pairs;
      right += (predicted[i] < predicted[j]) == (measured[i] < measured[j]);
    }
  }
  return pairs ? static_cast<double>(right) / pairs : 0;
}

struct Result {
  double accuracy, spearman;
};

const char *only = nullptr;

std::optional<Result> evaluate(const char *name, const std::function<Halide::Pipeline()> &build,
                               int count, uint64_t seed) {
  if (only != nullptr && std::string(only) != name) return std::nullopt;
  const Halide::Target target = host_target();
  Halide::Pipeline reference = build();
  auto graph = std::make_shared<const PipelineGraph>(analyze_pipeline(reference));
  const SearchSpace space(SearchSpaceOptions::for_target(target));
  AnalyticModel model(graph, MachineModel::from_host());
  TimingSettings settings;
  settings.samples = 3;
  settings.min_sample_seconds = 0.02;
  std::mt19937_64 rng(seed);
  std::vector<double> predicted, measured;
  for (int i = 0; i < count; ++i) {
    ScheduleState state(graph);
    if (!space.random_rollout(state, rng)) continue;
    Halide::Pipeline p = build();
    double ms = 0;
    try {
      apply_schedule(state, p);
      bind_random_inputs(p, 1);
      Halide::Realization out = allocate_estimated_outputs(p);
      p.compile_jit(target);
      ms = time_runs([&] { p.realize(out, target); }, settings).min_ms;
    } catch (const Halide::Error &e) {
      // A schedule the space should not have produced: not the model's business here.
      std::printf("%-12s %3d  refused by Halide, skipped: %s\n", name, i, e.what());
      continue;
    }
    const double pred = model.predict({&state})[0] * 1e3;
    std::printf("%-12s %3d  measured %9.3f ms  predicted %9.3f ms\n", name, i, ms, pred);
    std::fflush(stdout);
    measured.push_back(ms);
    predicted.push_back(pred);
  }
  const Result r{pairwise_accuracy(predicted, measured), spearman(predicted, measured)};
  std::printf("%-12s pairwise accuracy %.3f  spearman %.3f  (%zu schedules)\n\n", name, r.accuracy,
              r.spearman, measured.size());
  return r;
}

}  // namespace

int main(int argc, char **argv) {
  const int count = argc > 1 ? std::atoi(argv[1]) : 20;
  only = argc > 2 ? argv[2] : nullptr;
  std::printf("machine: %s\n\n", MachineModel::from_host().describe().c_str());
  std::vector<std::optional<Result>> all;
  all.push_back(evaluate("blur_chain", [] { return testing::blur_chain_pipeline(1536, 1024); },
                         count, 1));
  all.push_back(evaluate("conv_relu", [] { return testing::conv_relu_pipeline(32, 32, 64, 64); },
                         count, 2));
  all.push_back(evaluate("matmul", [] { return testing::matmul_pipeline(384); }, count, 3));
  all.push_back(evaluate("bilateral", [] { return testing::bilateral_grid_pipeline(1024, 768); },
                         count, 4));
  double acc = 0, rho = 0, n = 0;
  for (const auto &r : all) {
    if (!r) continue;
    acc += r->accuracy;
    rho += r->spearman;
    ++n;
  }
  std::printf("mean pairwise accuracy %.3f  mean spearman %.3f\n", acc / n, rho / n);
  return 0;
}
