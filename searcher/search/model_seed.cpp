// The cost model's own best schedules (see model_seed.h).
#include "searcher/search/model_seed.h"

#include <algorithm>

#include "searcher/search/beam_search.h"

namespace protuner {
namespace {

// `options`' beam over `ctx` within `share` of the time from now to `deadline`; nullopt
// when there is none.
std::optional<SearchResult> beam_within(const BeamSearchOptions &options, const std::string &name,
                                        const SearchContext &ctx,
                                        std::chrono::steady_clock::time_point deadline,
                                        double share) {
  const auto now = std::chrono::steady_clock::now();
  if (share <= 0 || now >= deadline) return std::nullopt;
  SearchBudget budget;
  budget.deadline = now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::min(share, 1.0) * (deadline - now));
  return BeamSearch(options, name).run(ctx, budget);
}

}  // namespace

std::vector<ModelSeed> model_seeds(const SearchContext &ctx,
                                   std::chrono::steady_clock::time_point deadline, double share) {
  SearchContext model_only = ctx;
  model_only.measurer = nullptr;
  model_only.start_points.clear();
  model_only.on_progress = nullptr;
  std::vector<ModelSeed> seeds;
  std::optional<SearchResult> plain =
      beam_within(BeamSearchOptions{}, "beam", model_only, deadline, share);
  if (!plain) return seeds;
  seeds.push_back(ModelSeed{"beam", std::move(*plain)});
  std::optional<SearchResult> ahead =
      beam_within(lookahead_beam_options(), "beam_lookahead", model_only, deadline, share);
  if (ahead && ahead->best_cost < seeds.front().result.best_cost) {
    seeds.push_back(ModelSeed{"beam_lookahead", std::move(*ahead)});
  }
  return seeds;
}

}  // namespace protuner
