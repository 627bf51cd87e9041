// A random complete protuner schedule of a test generator, in its serialized form: what a
// search would send the measurer, drawn from the space the search draws from.
#pragma once

#include <gtest/gtest.h>

#include <Halide.h>

#include <memory>
#include <random>
#include <string>

#include "common/app.h"
#include "common/host_target.h"
#include "common/pipeline/pipeline_graph.h"
#include "common/schedule/schedule_json.h"
#include "searcher/space/search_space.h"

namespace protuner {

inline std::string random_protuner_schedule(const std::string &library,
                                            const std::string &generator, uint64_t seed) {
  const Halide::Target target = host_target();
  AppInstance app = AppInstance::create({generator, library, generator, {}}, target);
  auto graph = std::make_shared<const PipelineGraph>(analyze_pipeline(app.pipeline()));
  const SearchSpace space(SearchSpaceOptions::for_target(target));
  std::mt19937_64 rng(seed);
  ScheduleState state(graph);
  EXPECT_TRUE(space.random_rollout(state, rng));
  return schedule_to_json(state);
}

}  // namespace protuner
