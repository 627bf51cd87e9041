#include "searcher/seeds/seed_schedules.h"

#include <algorithm>

#include "searcher/seeds/blocked_schedule.h"
#include "searcher/seeds/fallback_schedule.h"
#include "searcher/seeds/sliced_schedule.h"
#include "searcher/seeds/strip_schedule.h"

namespace protuner {

std::vector<SeedSchedule> seeds_to_measure(std::shared_ptr<const PipelineGraph> graph,
                                           const SearchSpaceOptions &options, CostModel &model,
                                           int max_seeds) {
  std::vector<ScheduleState> candidates = {fallback_schedule(graph, options)};
  for (auto *family : {&blocked_in_tile_schedules, &sliced_reduction_schedules}) {
    for (ScheduleState &s : (*family)(graph, options)) candidates.push_back(std::move(s));
  }
  const size_t ranked_from = candidates.size();
  for (auto *family : {&strip_schedules, &root_strip_schedules, &blocked_schedules}) {
    for (ScheduleState &s : (*family)(graph, options)) candidates.push_back(std::move(s));
  }
  std::vector<const ScheduleState *> batch;
  for (const ScheduleState &s : candidates) batch.push_back(&s);
  const std::vector<double> predicted = model.predict(batch);

  std::vector<size_t> order;
  for (size_t k = 1; k < ranked_from; ++k) order.push_back(k);
  std::vector<size_t> ranked;
  for (size_t k = ranked_from; k < candidates.size(); ++k) {
    if (predicted[k] < predicted[0]) ranked.push_back(k);
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](size_t a, size_t b) { return predicted[a] < predicted[b]; });
  order.insert(order.end(), ranked.begin(), ranked.end());
  order.resize(std::min<size_t>(order.size(), std::max(0, max_seeds)));
  order.insert(order.begin(), 0);
  std::vector<SeedSchedule> seeds;
  for (size_t k : order) seeds.push_back({std::move(candidates[k]), predicted[k]});
  return seeds;
}

}  // namespace protuner
