// Complete-schedule evaluations per second of the cost models on bilateral_grid: the
// analytic model, the shipped feed-forward and GCN weights (the GCN an ensemble of
// networks), and one network of the shipped GCN's shape, untrained (throughput does not
// depend on the weights): what one member costs. Batches of 1 and 64 states.
// BM_EvaluateCompleteSchedules starts a fresh model every iteration, so featurization runs
// unmemoized across unrelated random schedules, as for the first evaluation of a state in a search;
// BM_EvaluateMemoizedSchedules shows the models' own cost with featurization cached. The
// schedules are drawn once, outside the timing.
// Usage: learned_model_bench [Google Benchmark flags].
#include <benchmark/benchmark.h>

#include <Halide.h>
#include <random>

#include "common/host_target.h"
#include "searcher/cost/analytic_model.h"
#include "searcher/cost/learned/learned_models.h"
#include "searcher/cost/learned/shipped_weights.h"
#include "searcher/space/search_space.h"
#include "tests/bench/suite_app_graph.h"

namespace {

using namespace protuner;

constexpr int kStates = 256;

struct Fixture {
  std::shared_ptr<const PipelineGraph> graph;
  std::vector<ScheduleState> states;
  FeatureNormalizer normalizer;
};

const Fixture &bilateral_grid() {
  static const Fixture fixture = [] {
    Fixture fx;
    fx.graph = bench::suite_app_graph("bilateral_grid");
    const SearchSpace space(SearchSpaceOptions::for_target(host_target()));
    std::mt19937_64 rng(3);
    while (fx.states.size() < kStates) {
      ScheduleState s(fx.graph);
      if (space.random_rollout(s, rng)) fx.states.push_back(std::move(s));
    }
    // Realistic feature scales for the networks' inputs.
    const Featurizer featurizer(fx.graph);
    std::vector<PipelineFeatures> features;
    std::vector<const PipelineFeatures *> pointers;
    std::vector<double> runtimes(kStates, 1e-3);
    for (const ScheduleState &s : fx.states) features.push_back(featurizer.featurize(s));
    for (const PipelineFeatures &f : features) pointers.push_back(&f);
    fx.normalizer = FeatureNormalizer::fit(pointers, runtimes);
    return fx;
  }();
  return fixture;
}

enum class Kind { kAnalytic, kFeedForward, kGcn, kGcnOneMember };
const char *label(Kind kind) {
  switch (kind) {
    case Kind::kAnalytic:
      return "analytic";
    case Kind::kFeedForward:
      return "feedforward";
    case Kind::kGcn:
      return "gcn";
    case Kind::kGcnOneMember:
      return "gcn, one member";
  }
  return "?";
}

LearnedNetwork shipped(LearnedModelKind kind) {
  return LearnedNetwork::load_bytes(shipped_weights(kind), shipped_weights_source(kind));
}

std::unique_ptr<CostModel> make_model(Kind kind, const Fixture &fx) {
  std::shared_ptr<LearnedNetwork> network;
  switch (kind) {
    case Kind::kAnalytic:
      return std::make_unique<AnalyticModel>(fx.graph);
    case Kind::kFeedForward:
      network = std::make_shared<LearnedNetwork>(shipped(LearnedModelKind::kFeedForward));
      break;
    case Kind::kGcn:
      network = std::make_shared<LearnedNetwork>(shipped(LearnedModelKind::kGcn));
      break;
    case Kind::kGcnOneMember: {
      LearnedModelOptions one = shipped(LearnedModelKind::kGcn).options();
      one.members = 1;
      network = std::make_shared<LearnedNetwork>(LearnedModelKind::kGcn, one, fx.normalizer, 0);
      break;
    }
  }
  return std::make_unique<LearnedCostModel>(fx.graph, std::move(network));
}

void predict_all(CostModel &model, const Fixture &fx, size_t batch_size) {
  for (size_t k = 0; k < fx.states.size(); k += batch_size) {
    std::vector<const ScheduleState *> batch;
    for (size_t i = k; i < std::min(fx.states.size(), k + batch_size); ++i) {
      batch.push_back(&fx.states[i]);
    }
    benchmark::DoNotOptimize(model.predict(batch));
  }
}

void report(benchmark::State &state, Kind kind) {
  state.SetLabel(label(kind));
  state.counters["evaluations_per_second"] =
      benchmark::Counter(kStates, benchmark::Counter::kIsIterationInvariantRate);
}

// Arguments: model kind, batch size. Featurization from scratch (a fresh model each time).
void BM_EvaluateCompleteSchedules(benchmark::State &state) {
  const Fixture &fx = bilateral_grid();
  const Kind kind = static_cast<Kind>(state.range(0));
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<CostModel> model = make_model(kind, fx);
    state.ResumeTiming();
    predict_all(*model, fx, static_cast<size_t>(state.range(1)));
  }
  report(state, kind);
}
BENCHMARK(BM_EvaluateCompleteSchedules)
    ->ArgNames({"model", "batch"})
    ->ArgsProduct({{0, 1, 2, 3}, {1, 64}})
    ->Unit(benchmark::kMillisecond);

// The same states again through one model whose FeatureCache already holds them: what the
// model itself costs once featurization is memoized (a search revisiting decisions).
void BM_EvaluateMemoizedSchedules(benchmark::State &state) {
  const Fixture &fx = bilateral_grid();
  const Kind kind = static_cast<Kind>(state.range(0));
  std::unique_ptr<CostModel> model = make_model(kind, fx);
  predict_all(*model, fx, 64);  // fills the cache
  for (auto _ : state) predict_all(*model, fx, static_cast<size_t>(state.range(1)));
  report(state, kind);
}
BENCHMARK(BM_EvaluateMemoizedSchedules)
    ->ArgNames({"model", "batch"})
    ->ArgsProduct({{0, 1, 2, 3}, {1, 64}})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
