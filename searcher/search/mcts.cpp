// ProTuner's MCTS ensemble (see mcts.h).
#include "searcher/search/mcts.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "common/errors.h"
#include "common/schedule/schedule_json.h"
#include "searcher/search/beam_search.h"
#include "searcher/search/incumbent_variants.h"
#include "searcher/search/mcts_tree.h"
#include "searcher/space/search_space.h"

namespace protuner {

namespace {

using Clock = std::chrono::steady_clock;

struct NamedConfiguration {
  const char *name;
  double decision_seconds;
  UcbFormula formula;
  double cp;
  bool measure;
};

// 003_* Table 1, and the 0.5 s variants for short budgets.
const NamedConfiguration kConfigurations[] = {
    {"mcts_30s", 30, UcbFormula::kInverseAverage, 1.0, false},
    {"mcts_10s", 10, UcbFormula::kInverseAverage, 1.0, false},
    {"mcts_1s", 1, UcbFormula::kInverseAverage, 1.0, false},
    {"mcts_0.5s", 0.5, UcbFormula::kInverseAverage, 1.0, false},
    {"mcts_Cp10_30s", 30, UcbFormula::kInverseAverage, 10.0, false},
    {"mcts_sqrt2_30s", 30, UcbFormula::kUcb1Normalized, 1.0 / std::sqrt(2.0), false},
    {"mcts_cost+real_30s", 30, UcbFormula::kInverseAverage, 1.0, true},
    {"mcts_cost+real_1s", 1, UcbFormula::kInverseAverage, 1.0, true},
    {"mcts_cost+real_0.5s", 0.5, UcbFormula::kInverseAverage, 1.0, true},
};

// Upper bound of the steps deciding Func f takes: its placement, each pure variable's
// tiling and each stage's parallel choice (an inlined Func takes only the first).
int steps_for_func(const PipelineGraph &graph, int f) {
  int steps = 1;
  for (const StageNode &s : graph.funcs[f].stages) steps += s.num_pure + 1;
  return steps;
}

// cost+real builds this many variants of the incumbent per variant it may measure
// (MctsOptions::measure_top_k), half tiling neighbours and half the trees' alternatives, and
// measures them in measuring_order (incumbent_variants.h): the trees' ranking of an
// alternative includes their guesses for every later Func, the variant's keeps the
// incumbent's. On the synthetic landscape of MctsSearch.CostPlusRealTakesAVariantThat-
// MeasuresFaster, the target's decision ranks 7th of the trees' alternatives.
constexpr size_t kVariantsBuiltPerMeasured = 4;

// Whether the next step from `state` completes the next Func's decision.
bool next_step_completes_func(const ScheduleState &state) {
  if (state.complete()) return false;
  const ScheduleState::NextStep next = state.next_step();
  const auto &stages = state.graph().funcs[state.num_decided()].stages;
  if (!state.mid_decision()) return false;  // a placement completes only an inlined Func
  return next.kind == Step::Kind::kParallel && next.stage == static_cast<int>(stages.size()) - 1;
}

// One run of the ensemble: the trees, their cost models (one per thread) and the best
// schedules found so far.
class Ensemble {
 public:
  Ensemble(const MctsOptions &options, const SearchContext &ctx, const SearchBudget &budget)
      : options_(options),
        ctx_(ctx),
        budget_(budget),
        root_(ctx.graph),
        func_start_(ctx.graph),
        start_(Clock::now()) {
    const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    threads_ = std::clamp(ctx.threads > 0 ? ctx.threads : hw, 1, options.trees);
    for (int t = 0; t < threads_; ++t) {
      models_.push_back(ctx.cost_model());
      if (!models_.back()) throw std::invalid_argument("MCTS: the cost model factory gave null");
    }
    for (int i = 0; i < options.trees; ++i) {
      MctsTreeOptions tree;
      tree.formula = options.formula;
      tree.cp = options.cp;
      tree.greedy_simulation = i < options.greedy_trees;
      tree.greedy_samples = options.greedy_samples;
      tree.max_nodes = options.max_nodes_per_tree;
      // SplitMix-style spread, so neighbouring seeds give unrelated trees.
      const uint64_t seed = ctx.seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(i) + 1;
      trees_.emplace_back(root_, *ctx.space, *models_[i % threads_], tree, seed);
    }
    for (const ScheduleState &s : ctx.start_points) {
      auto known = std::make_shared<const ScheduleState>(s);
      const double cost = models_[0]->predict({known.get()}).at(0);
      note_cost(known, cost);
      for (MctsTree &t : trees_) t.add_known(known, cost);
      // cost+real: its measured time is what a proposal must beat (a repeat is free for
      // the measurers that measured it already).
      if (may_measure()) {
        if (const std::optional<double> seconds = timed_measure(*known)) {
          note_measured(known, cost, *seconds);
        }
      }
    }
    if (options.know_greedy_descent) add_greedy_descent();
  }

  SearchResult run() {
    while (!root_.complete() && !out_of_time()) {
      std::vector<Step> steps = ctx_.space->children(root_);
      if (const std::optional<Step> step = incumbent_step()) {
        follow_incumbent(*step, steps.size() > 1);
        report_progress();
        continue;
      }
      if (steps.empty()) throw Error("MCTS: no complete schedule: a state on the way has no child");
      if (steps.size() == 1) {
        // A forced step that completes a Func leaves the measuring to the next decision.
        if (next_step_completes_func(root_)) func_completed_unmeasured_ = true;
        advance(steps[0], root_.with_step(steps[0]));
        continue;
      }
      search_one_decision(decision_end(false));
      std::vector<MctsTree::Decision> proposals = collect_proposals();
      if (proposals.empty()) {
        throw Error("MCTS: no complete schedule found below the root (every path dead-ends)");
      }
      const size_t winner = choose(proposals);
      advance(proposals[winner].step, proposals[winner].next_root);
      report_progress();
    }
    return finish();
  }

 private:
  bool out_of_time() const { return budget_.expired(); }

  // See MctsOptions::know_greedy_descent.
  void add_greedy_descent() {
    SearchContext greedy_ctx;
    greedy_ctx.graph = ctx_.graph;
    greedy_ctx.space = ctx_.space;
    greedy_ctx.cost_model = ctx_.cost_model;
    greedy_ctx.seed = ctx_.seed;
    greedy_ctx.threads = ctx_.threads;
    SearchBudget one_pass;
    one_pass.iterations = 1;
    const SearchResult greedy = BeamSearch(greedy_options(), "greedy").run(greedy_ctx, one_pass);
    greedy_evaluations_ = greedy.evaluations;
    auto known = std::make_shared<const ScheduleState>(greedy.best);
    note_cost(known, greedy.best_cost);
    for (MctsTree &t : trees_) t.add_known(known, greedy.best_cost);
  }
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  // How long this decision may search: the configured time per Func decision over its
  // steps (or all of it for `whole_func`), shortened so every remaining step (Func) gets an
  // equal share of what is left.
  Clock::time_point decision_end(bool whole_func) const {
    const PipelineGraph &g = root_.graph();
    const int f = root_.num_decided();
    double slice = options_.decision_seconds / (whole_func ? 1 : steps_for_func(g, f));
    if (budget_.deadline) {
      int remaining = static_cast<int>(g.funcs.size()) - f;
      if (!whole_func) {
        remaining = -steps_taken(root_);
        for (int i = 0; i < f; ++i)
          remaining += static_cast<int>(steps_of(root_.decision(i)).size());
        for (size_t i = f; i < g.funcs.size(); ++i)
          remaining += steps_for_func(g, static_cast<int>(i));
      }
      const double left = std::chrono::duration<double>(*budget_.deadline - Clock::now()).count();
      slice = std::min(slice, std::max(0.0, left) / std::max(1, remaining));
    }
    return Clock::now() +
           std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(slice));
  }

  // Runs every tree until `end`, trees spread over the threads. Each tree gets at least
  // one iteration; with an iteration budget each gets exactly that many.
  void search_one_decision(Clock::time_point end) {
    std::vector<std::thread> workers;
    std::exception_ptr failure;
    std::mutex failure_mutex;
    for (int t = 0; t < threads_; ++t) {
      workers.emplace_back([&, t] {
        try {
          run_trees_of_thread(t, end);
        } catch (...) {
          std::lock_guard<std::mutex> lock(failure_mutex);
          if (!failure) failure = std::current_exception();
        }
      });
    }
    for (std::thread &w : workers) w.join();
    if (failure) std::rethrow_exception(failure);
  }

  void run_trees_of_thread(int t, Clock::time_point end) {
    std::vector<int64_t> done(trees_.size(), 0);
    bool any = true;
    while (any) {
      any = false;
      for (size_t i = t; i < trees_.size(); i += threads_) {
        if (budget_.iterations && done[i] >= *budget_.iterations) continue;
        if (trees_[i].iterate()) any = true;
        ++done[i];
      }
      if (!budget_.iterations && Clock::now() >= end) break;
    }
  }

  std::vector<MctsTree::Decision> collect_proposals() {
    std::vector<MctsTree::Decision> out;
    for (const MctsTree &tree : trees_) {
      if (std::optional<MctsTree::Decision> d = tree.decide()) {
        note_cost(d->best_complete, d->best_cost);
        out.push_back(std::move(*d));
      }
    }
    return out;
  }

  // The proposal to continue from: the cheapest predicted, or in cost+real mode at a step
  // that completes a Func, the fastest measured of the cheapest few.
  size_t choose(const std::vector<MctsTree::Decision> &proposals) {
    std::vector<size_t> order(proposals.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      const MctsTree::Decision &x = proposals[a], &y = proposals[b];
      if (x.best_cost != y.best_cost) return x.best_cost < y.best_cost;
      return x.average_cost < y.average_cost;
    });
    if (!should_measure()) return order[0];
    func_completed_unmeasured_ = false;
    std::vector<size_t> picked;
    std::vector<std::string> seen;
    for (size_t i : order) {
      if (static_cast<int>(picked.size()) >= options_.measure_top_k) break;
      std::string json = schedule_to_json(*proposals[i].best_complete);
      if (std::find(seen.begin(), seen.end(), json) != seen.end()) continue;
      seen.push_back(std::move(json));
      picked.push_back(i);
    }
    // One at a time, so a deadline that passes while measuring stops it (a candidate can
    // take minutes to compile).
    std::optional<size_t> fastest;
    std::optional<double> fastest_seconds;
    for (size_t i : picked) {
      if (out_of_time()) break;
      const MctsTree::Decision &p = proposals[i];
      const std::optional<double> seconds = timed_measure(*p.best_complete);
      if (!seconds) continue;
      note_measured(p.best_complete, p.best_cost, *seconds);
      if (!fastest || *seconds < *fastest_seconds) {
        fastest = i;
        fastest_seconds = seconds;
      }
    }
    return fastest ? *fastest : order[0];
  }

  // cost+real measures where a Func gets complete: at the decision of its last step or,
  // when that step was forced (one child), at the next decision.
  bool should_measure() const {
    return (next_step_completes_func(root_) || func_completed_unmeasured_) && may_measure();
  }

  // Measures one complete schedule, counting the time against max_measure_time_share.
  std::optional<double> timed_measure(const ScheduleState &s) {
    const Clock::time_point before = Clock::now();
    const std::optional<double> seconds = ctx_.measurer->measure({&s}).at(0);
    measure_seconds_ += std::chrono::duration<double>(Clock::now() - before).count();
    return seconds;
  }

  bool may_measure() const {
    if (!options_.measure || !ctx_.measurer || out_of_time()) return false;
    // An iteration budget measures everything it proposes, so a seeded run is repeatable.
    if (budget_.iterations) return true;
    return measure_seconds_ <= options_.max_measure_time_share * elapsed();
  }

  // A search whose last Func was completed by forced steps measures its best schedule at
  // the end: otherwise a pipeline whose every Func ends in a forced step is never measured.
  void measure_the_last_func() {
    if (!func_completed_unmeasured_ || !best_ || !may_measure()) return;
    func_completed_unmeasured_ = false;
    if (const std::optional<double> seconds = timed_measure(*best_)) {
      note_measured(best_, best_cost_, *seconds);
    }
  }

  // cost+real: the next step of the fastest schedule measured so far (the incumbent), when
  // it extends the root. The root follows it: the cost model ranks schedules it has not
  // seen measured poorly (on harris, unsharp and camera_pipe the proposals measured after
  // leaving the best seed run several times slower than it). The step need only be legal:
  // seeds are built outside the space's pruning (seed_schedules.h).
  std::optional<Step> incumbent_step() const {
    if (!options_.measure || !best_measured_) return std::nullopt;
    const std::vector<Step> &steps = incumbent_steps_;
    if (steps.size() <= path_.size() || !std::equal(path_.begin(), path_.end(), steps.begin())) {
      return std::nullopt;
    }
    const Step &next = steps[path_.size()];
    if (!root_.check_step(next).empty()) return std::nullopt;
    return next;
  }

  // One root step along the incumbent, `step`. At the first step of a Func's decision
  // where the space offers a choice, the trees search for the whole decision's time, and
  // then the incumbent with this Func decided as the trees would decide it (every other
  // Func kept) is measured, a few alternatives, cheapest predicted first; a faster one
  // becomes the incumbent. One Func changes at a time, so a measurement judges that Func's
  // decision, not the model's guesses for every later Func too. At later steps of the Func
  // the root follows without searching. The first such decision of a run measures the
  // trees' cheapest complete schedule too (measure_cheapest_once).
  void follow_incumbent(Step step, bool choice) {
    if (choice && varied_func_ != root_.num_decided()) {
      varied_func_ = root_.num_decided();
      search_one_decision(decision_end(true));
      measure_cheapest_once();
      measure_variants_of_incumbent();
      // A faster variant is the incumbent now; it extends the root too (the trees' schedules
      // below it are where its Func's decision came from).
      if (const std::optional<Step> s = incumbent_step()) step = *s;
    }
    advance(step, root_.with_step(step));
  }

  // cost+real, once per run: the trees' cheapest complete schedule, measured whole. One-Func
  // variants cannot make the jumps a whole schedule makes, and those jumps pay where the
  // model ranks well: on mat_mul beam's best, measured whole, runs much faster than the
  // variants of MCTS's best seed reach (`protuner compare` measures beam beside MCTS).
  // Once only, because where the model ranks poorly (harris) such a jump is a wasted
  // compile. A faster one becomes the incumbent; it extends the root, as every tree's
  // schedules do.
  void measure_cheapest_once() {
    if (measured_cheapest_ || !may_measure()) return;
    measured_cheapest_ = true;
    const std::vector<MctsTree::Decision> proposals = collect_proposals();
    const auto cheapest =
        std::min_element(proposals.begin(), proposals.end(),
                         [](const auto &a, const auto &b) { return a.best_cost < b.best_cost; });
    if (cheapest == proposals.end()) return;
    if (const std::optional<double> seconds = timed_measure(*cheapest->best_complete)) {
      note_measured(cheapest->best_complete, cheapest->best_cost, *seconds);
    }
  }

  // Candidates for Func f, the root's next: the tilings one step from the incumbent's
  // decision and the trees' alternatives (cheapest as the trees completed them first), each
  // put into the incumbent (incumbent_variants.h), scored by the model and measured in
  // measuring_order, at most measure_top_k of them.
  void measure_variants_of_incumbent() {
    const int f = root_.num_decided();
    const FuncDecision &own = best_measured_->decision(f);
    std::vector<FuncDecision> tried{own}, decisions;
    std::vector<std::shared_ptr<const ScheduleState>> variants;
    auto add = [&](const FuncDecision &d, const ScheduleState *fallback) {
      if (std::find(tried.begin(), tried.end(), d) != tried.end()) return;
      tried.push_back(d);
      if (auto v = incumbent_variant(func_start_, *best_measured_, d, fallback)) {
        decisions.push_back(d);
        variants.push_back(std::make_shared<const ScheduleState>(std::move(*v)));
      }
    };
    // Building a variant decides every later Func again: a bounded few of each kind.
    const size_t per_kind = kVariantsBuiltPerMeasured * options_.measure_top_k / 2;
    for (const FuncDecision &n : tiling_neighbours(func_start_, own, ctx_.space)) {
      if (variants.size() >= per_kind) break;
      add(n, nullptr);
    }
    std::vector<MctsTree::Decision> alternatives;
    for (const MctsTree &tree : trees_) {
      for (MctsTree::Decision &d : tree.alternatives()) alternatives.push_back(std::move(d));
    }
    std::stable_sort(alternatives.begin(), alternatives.end(),
                     [](const auto &a, const auto &b) { return a.best_cost < b.best_cost; });
    const size_t limit = variants.size() + per_kind;
    for (const MctsTree::Decision &d : alternatives) {
      if (variants.size() >= limit) break;
      add(d.best_complete->decision(f), d.best_complete.get());
    }
    if (variants.empty()) return;
    std::vector<const ScheduleState *> batch;
    for (const auto &v : variants) batch.push_back(v.get());
    const std::vector<double> costs = models_[0]->predict(batch);
    std::vector<size_t> order = measuring_order(decisions, costs, own);
    order.resize(std::min(order.size(), static_cast<size_t>(options_.measure_top_k)));
    for (size_t i : order) {
      if (!may_measure()) break;
      note_cost(variants[i], costs[i]);
      if (const std::optional<double> seconds = timed_measure(*variants[i])) {
        note_measured(variants[i], costs[i], *seconds);
      }
    }
  }

  void advance(const Step &step, const ScheduleState &next_root) {
    path_.push_back(step);
    root_ = next_root;
    if (!root_.mid_decision()) func_start_ = root_;
    for (MctsTree &tree : trees_) tree.advance(step, next_root);
  }

  void note_cost(const std::shared_ptr<const ScheduleState> &s, double cost) {
    if (best_ && cost >= best_cost_) return;
    best_ = s;
    best_cost_ = cost;
    if (!options_.measure) trace_.push_back({elapsed(), cost, std::nullopt});
  }

  void note_measured(const std::shared_ptr<const ScheduleState> &s, double cost, double seconds) {
    if (best_measured_ && seconds >= *best_measured_seconds_) return;
    best_measured_ = s;
    best_measured_cost_ = cost;
    best_measured_seconds_ = seconds;
    incumbent_steps_.clear();
    for (int f = 0; f < s->num_decided(); ++f) {
      for (const Step &step : steps_of(s->decision(f))) incumbent_steps_.push_back(step);
    }
    trace_.push_back({elapsed(), cost, seconds});
  }

  void report_progress() const {
    if (!ctx_.on_progress) return;
    SearchProgress p;
    p.elapsed_seconds = elapsed();
    p.decided_steps = steps_taken(root_);
    p.best_cost = best_cost_;
    p.best_measured_seconds = best_measured_seconds_;
    p.evaluations = evaluations();
    p.measurements = ctx_.measurer ? ctx_.measurer->measurements() : 0;
    for (const MctsTree &t : trees_) p.rollouts += t.stats().rollouts;
    ctx_.on_progress(p);
  }

  int64_t evaluations() const {
    int64_t n = greedy_evaluations_;
    for (const MctsTree &t : trees_) n += t.stats().evaluations;
    return n;
  }

  // When time ran out before any schedule was complete, completes the root at random.
  void ensure_some_schedule() {
    if (best_) return;
    std::mt19937_64 rng(ctx_.seed);
    for (int attempt = 0; attempt < 1000; ++attempt) {
      ScheduleState s = root_;
      if (!ctx_.space->random_rollout(s, rng)) continue;
      const double cost = models_[0]->predict({&s}).at(0);
      note_cost(std::make_shared<const ScheduleState>(std::move(s)), cost);
      return;
    }
    throw Error("MCTS: no complete schedule found within the budget (1000 dead ends)");
  }

  SearchResult finish() {
    if (root_.complete()) {
      // The last decision's winner: its own schedule, scored like any other.
      const double cost = models_[0]->predict({&root_}).at(0);
      note_cost(std::make_shared<const ScheduleState>(root_), cost);
    }
    ensure_some_schedule();
    measure_the_last_func();
    const bool measured = static_cast<bool>(best_measured_);
    SearchResult r(measured ? *best_measured_ : *best_);
    r.best_cost = measured ? best_measured_cost_ : best_cost_;
    r.best_measured_seconds = best_measured_seconds_;
    r.evaluations = evaluations();
    for (const MctsTree &t : trees_) r.rollouts += t.stats().rollouts;
    r.measurements = ctx_.measurer ? ctx_.measurer->measurements() : 0;
    r.trace = trace_;
    return r;
  }

  const MctsOptions &options_;
  const SearchContext &ctx_;
  const SearchBudget &budget_;
  ScheduleState root_;
  ScheduleState func_start_;  // root_ before the first step of its Func's decision
  std::vector<Step> path_;    // the steps from the empty schedule to root_
  int varied_func_ = -1;      // the last Func whose variants of the incumbent were measured
  Clock::time_point start_;
  int threads_ = 1;
  std::vector<std::unique_ptr<CostModel>> models_;  // one per thread
  std::vector<MctsTree> trees_;
  std::shared_ptr<const ScheduleState> best_;  // lowest predicted cost seen
  double best_cost_ = 0;
  std::shared_ptr<const ScheduleState> best_measured_;  // fastest measured
  double best_measured_cost_ = 0;
  std::optional<double> best_measured_seconds_;
  std::vector<Step> incumbent_steps_;  // best_measured_'s steps from the empty schedule
  bool measured_cheapest_ = false;     // see measure_cheapest_once
  int64_t greedy_evaluations_ = 0;     // scored by the greedy descent (add_greedy_descent)
  double measure_seconds_ = 0;
  bool func_completed_unmeasured_ = false;  // see should_measure
  std::vector<TracePoint> trace_;
};

}  // namespace

const std::vector<std::string> &mcts_configuration_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const NamedConfiguration &c : kConfigurations) n.push_back(c.name);
    return n;
  }();
  return names;
}

bool mcts_options_for(const std::string &name, MctsOptions &out) {
  for (const NamedConfiguration &c : kConfigurations) {
    if (name != c.name) continue;
    out = MctsOptions{};
    out.decision_seconds = c.decision_seconds;
    out.formula = c.formula;
    out.cp = c.cp;
    out.measure = c.measure;
    return true;
  }
  return false;
}

MctsSearch::MctsSearch(MctsOptions options, std::string name)
    : options_(options), name_(std::move(name)) {
  if (options_.trees < 1) throw std::invalid_argument("MCTS: trees must be at least 1");
  if (options_.greedy_trees < 0 || options_.greedy_trees > options_.trees) {
    throw std::invalid_argument("MCTS: greedy_trees must be in [0, trees]");
  }
  if (!(options_.cp >= 0)) throw std::invalid_argument("MCTS: cp must be non-negative");
  if (!(options_.decision_seconds > 0)) {
    throw std::invalid_argument("MCTS: decision_seconds must be positive");
  }
  if (options_.measure_top_k < 1) throw std::invalid_argument("MCTS: measure_top_k must be >= 1");
  if (options_.max_nodes_per_tree < 1) {
    throw std::invalid_argument("MCTS: max_nodes_per_tree must be >= 1");
  }
}

SearchResult MctsSearch::run(const SearchContext &ctx, const SearchBudget &budget) {
  check_search_inputs(name_, ctx, budget, options_.measure);
  Ensemble ensemble(options_, ctx, budget);
  return ensemble.run();
}

}  // namespace protuner
