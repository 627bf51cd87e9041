#include "searcher/search/model_seed.h"

#include <algorithm>

#include "searcher/search/beam_search.h"

namespace protuner {

std::optional<SearchResult> model_seed(const SearchContext &ctx,
                                       std::chrono::steady_clock::time_point deadline,
                                       double share) {
  const auto now = std::chrono::steady_clock::now();
  if (share <= 0 || now >= deadline) return std::nullopt;
  SearchContext model_only = ctx;
  model_only.measurer = nullptr;
  model_only.start_points.clear();
  model_only.on_progress = nullptr;
  SearchBudget budget;
  budget.deadline = now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::min(share, 1.0) * (deadline - now));
  return BeamSearch(BeamSearchOptions{}, "beam").run(model_only, budget);
}

}  // namespace protuner
