// MCTS throughput on the suite's bilateral_grid: complete-schedule rollouts per second per
// thread (one tree iteration = select, expand, simulate to a complete schedule, score with
// the analytic cost model, back up), for a standard (random-simulation) tree and for the
// greedy tree, each from the empty schedule. Usage: mcts_benchmark [Google Benchmark flags].
#include <benchmark/benchmark.h>

#include "common/host_target.h"
#include "searcher/cost/analytic_model.h"
#include "searcher/search/mcts_tree.h"
#include "searcher/space/search_space.h"
#include "tests/bench/suite_app_graph.h"

namespace {

using namespace protuner;

std::shared_ptr<const PipelineGraph> bilateral_grid() {
  static const std::shared_ptr<const PipelineGraph> graph = bench::suite_app_graph("bilateral_grid");
  return graph;
}

// range(0): 0 standard tree, 1 greedy tree. Counters: rollouts/s (complete schedules
// reached and scored per second of this thread) and the tree's size at the end.
void BM_MctsTreeIteration(benchmark::State &state) {
  const auto graph = bilateral_grid();
  const SearchSpace space(SearchSpaceOptions::for_target(host_target()));
  AnalyticModel model(graph);
  MctsTreeOptions options;
  options.greedy_simulation = state.range(0) == 1;
  MctsTree tree(ScheduleState(graph), space, model, options, 1);
  for (auto _ : state) {
    if (!tree.iterate()) {
      state.SkipWithError("the tree ran out of schedules");
      break;
    }
  }
  state.counters["rollouts/s"] =
      benchmark::Counter(static_cast<double>(tree.stats().rollouts), benchmark::Counter::kIsRate);
  state.counters["nodes"] = static_cast<double>(tree.stats().nodes);
  state.SetLabel(options.greedy_simulation ? "greedy tree" : "standard tree");
}
BENCHMARK(BM_MctsTreeIteration)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond)->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();
