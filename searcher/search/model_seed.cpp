#include "searcher/search/model_seed.h"

#include "searcher/search/beam_search.h"

namespace protuner {

SearchResult model_seed(const SearchContext &ctx,
                        std::chrono::steady_clock::time_point deadline) {
  SearchContext model_only = ctx;
  model_only.measurer = nullptr;
  model_only.start_points.clear();
  model_only.on_progress = nullptr;
  SearchBudget budget;
  budget.deadline = deadline;
  return BeamSearch(BeamSearchOptions{}, "beam").run(model_only, budget);
}

}  // namespace protuner
