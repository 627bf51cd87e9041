// Featurization along random rollouts of a large app (local_laplacian): every state on the
// way from the empty schedule to a complete one featurized from scratch, versus through a
// FeatureCache that lives for the rollout (002_* section 3.3: a child reuses the features
// of every Func its new decision does not change). The rollouts are drawn once, outside
// the timing. Usage: featurizer_benchmark [Google Benchmark flags].
#include <benchmark/benchmark.h>

#include <Halide.h>
#include <random>

#include "common/host_target.h"
#include "searcher/cost/featurizer.h"
#include "searcher/space/search_space.h"
#include "tests/bench/suite_app_graph.h"

namespace {

using namespace protuner;

constexpr int kRollouts = 8;

struct Fixture {
  std::shared_ptr<const PipelineGraph> graph;
  std::vector<std::vector<ScheduleState>> rollouts;  // every state along each rollout
  size_t states = 0;
};

const Fixture &local_laplacian() {
  static const Fixture fixture = [] {
    Fixture fx;
    fx.graph = bench::suite_app_graph("local_laplacian");
    const SearchSpace space(SearchSpaceOptions::for_target(host_target()));
    std::mt19937_64 rng(7);
    for (int r = 0; r < kRollouts; ++r) {
      std::vector<ScheduleState> states{ScheduleState(fx.graph)};
      while (!states.back().complete()) {
        const auto d = space.random_decision(states.back(), rng);
        if (!d) throw std::runtime_error("rollout hit a dead end");
        states.push_back(states.back().with_decision(*d));
      }
      fx.states += states.size();
      fx.rollouts.push_back(std::move(states));
    }
    return fx;
  }();
  return fixture;
}

void report(benchmark::State &state, const Fixture &fx) {
  state.counters["funcs"] = static_cast<double>(fx.graph->funcs.size());
  state.counters["states_per_second"] = benchmark::Counter(
      static_cast<double>(fx.states), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_FeaturizeRolloutsFresh(benchmark::State &state) {
  const Fixture &fx = local_laplacian();
  const Featurizer fz(fx.graph);
  for (auto _ : state) {
    for (const auto &rollout : fx.rollouts) {
      for (const ScheduleState &s : rollout) benchmark::DoNotOptimize(fz.featurize(s));
    }
  }
  report(state, fx);
}
BENCHMARK(BM_FeaturizeRolloutsFresh)->Unit(benchmark::kMillisecond);

void BM_FeaturizeRolloutsMemoized(benchmark::State &state) {
  const Fixture &fx = local_laplacian();
  const Featurizer fz(fx.graph);
  int64_t hits = 0, misses = 0;
  for (auto _ : state) {
    for (const auto &rollout : fx.rollouts) {
      FeatureCache cache;  // one per rollout: nothing is shared between rollouts
      for (const ScheduleState &s : rollout) benchmark::DoNotOptimize(fz.featurize(s, cache));
      hits += cache.hits();
      misses += cache.misses();
    }
  }
  report(state, fx);
  state.counters["hit_rate"] = static_cast<double>(hits) / static_cast<double>(hits + misses);
}
BENCHMARK(BM_FeaturizeRolloutsMemoized)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
