// Random search (see random_search.h).
#include "searcher/search/random_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>

#include "common/errors.h"
#include "searcher/space/search_space.h"

namespace protuner {
namespace {

using Clock = std::chrono::steady_clock;

// A kept schedule: the best predicted, or the fastest measured.
struct Kept {
  std::optional<ScheduleState> state;
  double cost = 0;
  std::optional<double> measured;
  std::vector<TracePoint> trace;  // one point per improvement
};

class RandomRun {
 public:
  RandomRun(const RandomSearchOptions &options, const SearchContext &ctx,
            const SearchBudget &budget, std::unique_ptr<CostModel> model)
      : options_(options), ctx_(ctx), budget_(budget), model_(std::move(model)), rng_(ctx.seed) {}

  SearchResult run();

 private:
  bool past_deadline() const { return budget_.expired(); }
  bool out_of_budget() const {
    return exhausted_ || (budget_.iterations && sampled_ >= *budget_.iterations) || past_deadline();
  }
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  std::vector<ScheduleState> sample_batch(int64_t want);
  std::vector<double> predict(const std::vector<ScheduleState> &batch);
  void measure_best(const std::vector<ScheduleState> &batch, const std::vector<double> &costs,
                    const std::vector<size_t> &order);
  void report_progress() const;

  const RandomSearchOptions &options_;
  const SearchContext &ctx_;
  const SearchBudget &budget_;
  std::unique_ptr<CostModel> model_;
  std::mt19937_64 rng_;
  const Clock::time_point start_ = Clock::now();
  const int64_t measurements_before_ = ctx_.measurer ? ctx_.measurer->measurements() : 0;
  int64_t sampled_ = 0;
  int64_t evaluations_ = 0;
  bool exhausted_ = false;  // max_dead_ends rollouts in a row found nothing
  Kept predicted_, measured_;
};

SearchResult RandomRun::run() {
  while (!predicted_.state || !out_of_budget()) {
    int64_t want = options_.batch_size;
    if (budget_.iterations) {
      want = std::min(want, std::max<int64_t>(1, *budget_.iterations - sampled_));
    }
    const std::vector<ScheduleState> batch = sample_batch(want);
    if (batch.empty()) break;
    const std::vector<double> costs = predict(batch);
    std::vector<size_t> order(batch.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return costs[a] < costs[b]; });
    if (!predicted_.state || costs[order[0]] < predicted_.cost) {
      predicted_.state = batch[order[0]];
      predicted_.cost = costs[order[0]];
      predicted_.trace.push_back(TracePoint{elapsed(), predicted_.cost, std::nullopt});
    }
    if (ctx_.measurer && !past_deadline()) measure_best(batch, costs, order);
    report_progress();
  }
  const Kept &kept = measured_.state ? measured_ : predicted_;
  SearchResult result{*kept.state};
  result.best_cost = kept.cost;
  result.best_measured_seconds = kept.measured;
  result.evaluations = evaluations_;
  result.rollouts = sampled_;
  if (ctx_.measurer) result.measurements = ctx_.measurer->measurements() - measurements_before_;
  result.trace = kept.trace;
  return result;
}

// Up to `want` complete schedules; fewer when the deadline passes (never none before a
// first schedule exists) or too many rollouts in a row dead-end.
std::vector<ScheduleState> RandomRun::sample_batch(int64_t want) {
  std::vector<ScheduleState> out;
  int dead_ends_in_a_row = 0;
  while (static_cast<int64_t>(out.size()) < want) {
    const bool have_one = predicted_.state || !out.empty();
    if (have_one && past_deadline()) break;
    ScheduleState s(ctx_.graph);
    if (ctx_.space->random_rollout(s, rng_)) {
      dead_ends_in_a_row = 0;
      out.push_back(std::move(s));
      continue;
    }
    if (++dead_ends_in_a_row < options_.max_dead_ends) continue;
    if (!have_one) {
      throw Error(
          "random search found no complete schedule: " + std::to_string(dead_ends_in_a_row) +
          " rollouts in a row reached a Func with every choice pruned");
    }
    exhausted_ = true;
    break;
  }
  sampled_ += static_cast<int64_t>(out.size());
  return out;
}

std::vector<double> RandomRun::predict(const std::vector<ScheduleState> &batch) {
  std::vector<const ScheduleState *> ptrs;
  ptrs.reserve(batch.size());
  for (const ScheduleState &s : batch) ptrs.push_back(&s);
  std::vector<double> costs = model_->predict(ptrs);
  if (costs.size() != batch.size()) {
    throw Error("cost model '" + model_->name() + "' returned " + std::to_string(costs.size()) +
                " predictions for " + std::to_string(batch.size()) + " states");
  }
  // A NaN prediction must not poison the ordering: rank it last.
  for (double &c : costs) {
    if (std::isnan(c)) c = std::numeric_limits<double>::infinity();
  }
  evaluations_ += static_cast<int64_t>(batch.size());
  return costs;
}

// Measures the best-predicted few of the batch; keeps the fastest measured so far.
void RandomRun::measure_best(const std::vector<ScheduleState> &batch,
                             const std::vector<double> &costs, const std::vector<size_t> &order) {
  const size_t k = std::min(order.size(), static_cast<size_t>(options_.measured_per_batch));
  std::vector<const ScheduleState *> top;
  for (size_t i = 0; i < k; ++i) top.push_back(&batch[order[i]]);
  const std::vector<std::optional<double>> seconds = ctx_.measurer->measure(top);
  if (seconds.size() != top.size()) {
    throw Error("the measurer returned " + std::to_string(seconds.size()) + " results for " +
                std::to_string(top.size()) + " candidates");
  }
  for (size_t i = 0; i < k; ++i) {
    if (!seconds[i] || (measured_.measured && *seconds[i] >= *measured_.measured)) continue;
    measured_.state = *top[i];
    measured_.cost = costs[order[i]];
    measured_.measured = seconds[i];
    measured_.trace.push_back(TracePoint{elapsed(), measured_.cost, seconds[i]});
  }
}

void RandomRun::report_progress() const {
  if (!ctx_.on_progress) return;
  const Kept &kept = measured_.state ? measured_ : predicted_;
  SearchProgress p;
  p.elapsed_seconds = elapsed();
  p.best_cost = kept.cost;
  p.best_measured_seconds = kept.measured;
  p.evaluations = evaluations_;
  p.rollouts = sampled_;
  if (ctx_.measurer) p.measurements = ctx_.measurer->measurements() - measurements_before_;
  ctx_.on_progress(p);
}

}  // namespace

RandomSearch::RandomSearch(RandomSearchOptions options, std::string name)
    : options_(options), name_(std::move(name)) {
  if (options_.batch_size < 1 || options_.measured_per_batch < 1 || options_.max_dead_ends < 1) {
    throw std::invalid_argument(name_ +
                                ": batch_size, measured_per_batch and max_dead_ends "
                                "must be at least 1");
  }
}

SearchResult RandomSearch::run(const SearchContext &ctx, const SearchBudget &budget) {
  check_search_inputs(name_, ctx, budget, false);
  std::unique_ptr<CostModel> model = ctx.cost_model();
  if (!model) throw std::invalid_argument(name_ + ": the cost model factory gave null");
  return RandomRun(options_, ctx, budget, std::move(model)).run();
}

}  // namespace protuner
