// Random rollouts from the empty state to a complete schedule, two ways: drawing one random
// child per step without building its siblings (what MCTS simulation does), and
// generating every child state per step and picking one (what ProTuner's profile found
// eating 88% of its time). Runs on the suite's bilateral_grid (the target) and on
// the searcher tests' blur chain. Usage: rollout_benchmark [Google Benchmark flags].
#include <benchmark/benchmark.h>

#include <Halide.h>
#include <random>

#include "common/host_target.h"
#include "searcher/space/search_space.h"
#include "tests/bench/suite_app_graph.h"
#include "tests/searcher/test_pipelines.h"

namespace {

using namespace protuner;

std::shared_ptr<const PipelineGraph> bilateral_grid() {
  static const std::shared_ptr<const PipelineGraph> graph = bench::suite_app_graph("bilateral_grid");
  return graph;
}

std::shared_ptr<const PipelineGraph> blur_chain() {
  static std::shared_ptr<const PipelineGraph> graph = [] {
    Halide::Pipeline p = testing::blur_chain_pipeline(1536, 2560);
    return std::make_shared<const PipelineGraph>(analyze_pipeline(p));
  }();
  return graph;
}

std::shared_ptr<const PipelineGraph> pipeline(int64_t which) {
  return which == 0 ? bilateral_grid() : blur_chain();
}

void BM_RolloutRandomChild(benchmark::State &state) {
  const auto graph = pipeline(state.range(0));
  const SearchSpace space(SearchSpaceOptions::for_target(host_target()));
  std::mt19937_64 rng(1);
  int64_t steps = 0;
  for (auto _ : state) {
    ScheduleState s(graph);
    while (!s.complete()) {
      std::optional<Step> step = space.random_child(s, rng);
      if (!step) {
        state.SkipWithError("dead end");
        break;
      }
      s.take_step(*step);
      ++steps;
    }
  }
  state.counters["steps_per_rollout"] =
      benchmark::Counter(static_cast<double>(steps) / static_cast<double>(state.iterations()));
}
// Argument: 0 = bilateral_grid (the suite app), 1 = blur chain.
BENCHMARK(BM_RolloutRandomChild)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

void BM_RolloutEnumerateChildren(benchmark::State &state) {
  const auto graph = pipeline(state.range(0));
  const SearchSpace space(SearchSpaceOptions::for_target(host_target()));
  std::mt19937_64 rng(1);
  int64_t children = 0;
  for (auto _ : state) {
    ScheduleState s(graph);
    while (!s.complete()) {
      std::vector<ScheduleState> all;
      for (const Step &step : space.children(s)) all.push_back(s.with_step(step));
      if (all.empty()) {
        state.SkipWithError("dead end");
        break;
      }
      children += static_cast<int64_t>(all.size());
      s = all[std::uniform_int_distribution<size_t>(0, all.size() - 1)(rng)];
    }
  }
  state.counters["children_per_rollout"] =
      benchmark::Counter(static_cast<double>(children) / static_cast<double>(state.iterations()));
}
BENCHMARK(BM_RolloutEnumerateChildren)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
