// What searcher tests share besides their pipelines (test_pipelines.h): a pipeline's
// graph, and a search space with fixed machine options, not the host's, so a test means
// the same on every machine.
#pragma once

#include <Halide.h>

#include <memory>

#include "searcher/pipeline_graph.h"
#include "searcher/search_space.h"

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

}  // namespace protuner::testing
