// What every search checks before it runs (see search.h).
#include "searcher/search/search.h"

#include <stdexcept>

namespace protuner {

void check_search_inputs(const std::string &search, const SearchContext &ctx,
                         const SearchBudget &budget, bool needs_measurer) {
  if (!ctx.graph || !ctx.space || !ctx.cost_model) {
    throw std::invalid_argument(search +
                                ": the context needs a graph, a search space and a cost model");
  }
  if (ctx.graph->funcs.empty()) throw std::invalid_argument(search + ": the pipeline has no Func");
  if (!budget.deadline && !budget.iterations) {
    throw std::invalid_argument(search + ": the budget needs a deadline or an iteration count");
  }
  if (budget.iterations && *budget.iterations < 1) {
    throw std::invalid_argument(search + ": the iteration count must be at least 1");
  }
  if (needs_measurer && !ctx.measurer) {
    throw std::invalid_argument(search + " measures candidates and needs a measurer");
  }
  for (size_t i = 0; i < ctx.start_points.size(); ++i) {
    const ScheduleState &s = ctx.start_points[i];
    if (s.graph_ptr() != ctx.graph || !s.complete()) {
      throw std::invalid_argument(search + ": start point " + std::to_string(i) +
                                  " is not a complete schedule of this pipeline");
    }
  }
}

}  // namespace protuner
