// What searcher tests share besides their pipelines (test_pipelines.h): a pipeline's
// graph, a search space with fixed machine options, not the host's, so a test means the
// same on every machine, random complete schedules of it, and a search context on the
// analytic model.
#pragma once

#include <Halide.h>

#include <gtest/gtest.h>

#include <memory>
#include <random>

#include "common/pipeline/pipeline_graph.h"
#include "common/schedule/schedule_state.h"
#include "searcher/cost/analytic_model.h"
#include "searcher/search/search.h"
#include "searcher/space/search_space.h"

namespace protuner::testing {

inline std::shared_ptr<const PipelineGraph> graph_of(Halide::Pipeline p) {
  return std::make_shared<const PipelineGraph>(analyze_pipeline(p));
}

inline SearchSpace space_for_tests() {
  SearchSpaceOptions o;
  o.cores = 2;
  o.vector_bits = 512;
  return SearchSpace(o);
}

// A complete schedule by one random rollout of `space` (fixed by `seed`).
inline ScheduleState random_complete(const std::shared_ptr<const PipelineGraph> &graph,
                                     const SearchSpace &space, uint64_t seed) {
  std::mt19937_64 rng(seed);
  ScheduleState s(graph);
  EXPECT_TRUE(space.random_rollout(s, rng));
  return s;
}

// A search of `graph` in `space` (which must outlive it) by the analytic model.
inline SearchContext analytic_context(const std::shared_ptr<const PipelineGraph> &graph,
                                      const SearchSpace &space, uint64_t seed = 0) {
  SearchContext ctx;
  ctx.graph = graph;
  ctx.space = &space;
  ctx.seed = seed;
  ctx.cost_model = [graph] { return std::make_unique<AnalyticModel>(graph); };
  return ctx;
}

}  // namespace protuner::testing
