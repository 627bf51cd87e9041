// Beam search and greedy (see beam_search.h).
#include "searcher/search/beam_search.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "common/errors.h"
#include "searcher/space/search_space.h"

namespace protuner {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// How finely decision prefixes are told apart: pass 2 compares placements, pass 3 loop
// structure, later passes whole decisions (beam_search.h).
enum Level : int { kPlacement = 0, kLoopStructure = 1, kWholeDecision = 2 };
constexpr int kLevels = 3;
using PrefixHashes = std::array<uint64_t, kLevels>;

// Order-sensitive combination, spread by the splitmix64 finalizer. 64-bit prefix hashes
// make a collision (two prefixes judged as one, or a child dropped as a duplicate) about
// as likely as a cosmic-ray bit flip over the states one search sees.
uint64_t mix(uint64_t h, uint64_t v) {
  uint64_t z = h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t mix_loop_ref(uint64_t h, const LoopRef &r) {
  h = mix(h, static_cast<uint64_t>(r.func + 1));
  return r.is_root() ? h : mix(mix(h, r.stage), r.loop);
}

// Func f's decision in `state`, hashed at `level`.
uint64_t decision_hash(const ScheduleState &state, int f, int level) {
  const FuncDecision &d = state.decision(f);
  uint64_t h = mix(0, static_cast<uint64_t>(d.placement));
  if (d.placement == Placement::kAt) h = mix_loop_ref(mix_loop_ref(h, d.compute_at), d.store_at);
  if (level >= kLoopStructure) {
    for (const std::vector<Loop> &stage : state.bounds(f).loops) {
      h = mix(h, stage.size());
      for (const Loop &l : stage) {
        h = mix(h, static_cast<uint64_t>(l.kind) | uint64_t{l.parallel} << 4 |
                       uint64_t{l.vectorized} << 5 | uint64_t{l.unrolled} << 6);
      }
    }
  }
  if (level >= kWholeDecision) {
    for (const StageTiling &t : d.stages) {
      for (size_t v = 0; v < t.tile.size(); ++v) {
        h = mix(mix(h, static_cast<uint64_t>(t.tile[v])), static_cast<uint64_t>(t.inner[v]));
      }
      h = mix(mix(h, static_cast<uint64_t>(t.parallel_loops)),
              uint64_t{t.reduction_outside} | uint64_t{t.unroll_reduction} << 1 |
                  static_cast<uint64_t>(t.reduction_lanes) << 2);
    }
  }
  return h;
}

// The prefix hashes of `state` after deciding Func f, from those before it.
PrefixHashes extend(const PrefixHashes &before, const ScheduleState &state, int f) {
  PrefixHashes out;
  for (int l = 0; l < kLevels; ++l) out[l] = mix(before[l], decision_hash(state, f, l));
  return out;
}

// What earlier passes learned about decision prefixes, per level (002_* 4.5): the cheapest
// complete schedule reached through each prefix, and the cheapest prediction of a state
// with that prefix at its own depth. Complete costs are what the cost model is made for,
// so where a prefix has both, the complete ones decide.
class PrefixRecord {
 public:
  explicit PrefixRecord(double margin) : margin_(margin) {}

  // A scored state with d decisions. Whole-decision prefixes of partial states recur only
  // when the same tile sizes are drawn again, so they are not kept (memory for nothing).
  void record_scored(const PrefixHashes &prefix, int depth, double cost) {
    if (best_at_depth_.size() <= static_cast<size_t>(depth)) {
      best_at_depth_.resize(depth + 1, std::numeric_limits<double>::infinity());
    }
    best_at_depth_[depth] = std::min(best_at_depth_[depth], cost);
    for (int l = 0; l < kWholeDecision; ++l) {
      Evidence &e = evidence_[l][prefix[l]];
      e.best_partial = std::min(e.best_partial, cost);
    }
  }
  void record_complete(const ScheduleState &complete, double cost) {
    best_complete_ = std::min(best_complete_, cost);
    PrefixHashes h{};
    for (int f = 0; f < complete.num_decided(); ++f) {
      h = extend(h, complete, f);
      for (int l = 0; l < kLevels; ++l) {
        Evidence &e = evidence_[l][h[l]];
        e.best_complete = std::min(e.best_complete, cost);
      }
    }
  }
  // Known bad: every complete schedule through the prefix cost more than (1 + margin) times
  // the best complete one; or, never completed, its best prediction was that much worse
  // than the best state of its depth. A prefix never seen is not known bad: it is
  // unexplored.
  bool known_bad(int level, uint64_t prefix, int depth) const {
    auto it = evidence_[level].find(prefix);
    if (it == evidence_[level].end()) return false;
    const Evidence &e = it->second;
    if (e.best_complete < kNone) return e.best_complete > (1 + margin_) * best_complete_;
    return e.best_partial < kNone && e.best_partial > (1 + margin_) * best_at_depth_.at(depth);
  }

 private:
  static constexpr double kNone = std::numeric_limits<double>::infinity();
  struct Evidence {
    double best_partial = kNone;
    double best_complete = kNone;
  };
  double margin_;
  std::array<std::unordered_map<uint64_t, Evidence>, kLevels> evidence_;
  std::vector<double> best_at_depth_;
  double best_complete_ = kNone;
};

struct Node {
  ScheduleState state;
  PrefixHashes prefix{};
  double cost = 0;    // predicted seconds
  double ranked = 0;  // what the beam sorts by: cost, times the penalty when known bad
};

// How hard one beam step tries: the normal beam, or the greedy finish after a deadline.
struct Effort {
  int beam_size;
  int samples_per_state;
  int min_samples_per_placement;
};

// One run of the search: its context, the best schedule so far and what passes learned.
class BeamRun {
 public:
  BeamRun(const BeamSearchOptions &options, const SearchContext &ctx, const SearchBudget &budget,
          std::unique_ptr<CostModel> model, BeamSearchStats &stats)
      : options_(options),
        ctx_(ctx),
        budget_(budget),
        model_(std::move(model)),
        rng_(ctx.seed),
        stats_(stats),
        record_(options.known_bad_margin) {}

  SearchResult run();

 private:
  bool past_deadline() const { return budget_.expired(); }
  bool advance(std::vector<Node> &beam, int64_t pass, const Effort &effort, bool stop_at_deadline);
  void step(std::vector<Node> &beam, int64_t pass, const Effort &effort);
  std::vector<Node> expand(const std::vector<Node> &beam, const Effort &effort);
  void sample_children(const Node &parent, const Effort &effort, std::vector<Node> &out);
  bool finish_decision(ScheduleState &state, int f);
  void score(std::vector<Node> &children, int64_t pass, const Effort &effort);
  std::vector<double> predict(const std::vector<const ScheduleState *> &batch);
  std::vector<double> look_ahead(const std::vector<Node> &children,
                                 const std::vector<double> &costs, const Effort &effort);
  void learn(const std::vector<Node> &complete);
  void report_progress(const std::vector<Node> &beam) const;

  const BeamSearchOptions &options_;
  const SearchContext &ctx_;
  const SearchBudget &budget_;
  std::unique_ptr<CostModel> model_;
  std::mt19937_64 rng_;
  BeamSearchStats &stats_;
  const Clock::time_point start_ = Clock::now();
  PrefixRecord record_;
  SearchResult result_{ScheduleState(ctx_.graph)};
  bool have_best_ = false;
};

SearchResult BeamRun::run() {
  const int64_t passes = budget_.iterations ? *budget_.iterations : options_.passes;
  const Effort full{options_.beam_size, options_.samples_per_state,
                    options_.min_samples_per_placement};
  // The fewest samples that still rank something: one per placement.
  const Effort greedy{1, 1, 1};
  for (int64_t pass = 0; pass < passes; ++pass) {
    if (have_best_ && past_deadline()) break;
    std::vector<Node> beam{Node{ScheduleState(ctx_.graph)}};
    if (!advance(beam, pass, full, true)) {
      if (have_best_) break;  // an earlier pass's schedule stands; stop now
      stats_.finished_after_deadline = true;
      beam.erase(beam.begin() + 1, beam.end());  // keep the best-ranked state
      advance(beam, pass, greedy, false);
      break;
    }
    ++stats_.passes_completed;
  }
  return std::move(result_);
}

// Beam steps until the beam is complete; false when the deadline stopped it first.
bool BeamRun::advance(std::vector<Node> &beam, int64_t pass, const Effort &effort,
                      bool stop_at_deadline) {
  while (!beam.front().state.complete()) {
    if (stop_at_deadline && past_deadline()) return false;
    step(beam, pass, effort);
  }
  return true;
}

void BeamRun::step(std::vector<Node> &beam, int64_t pass, const Effort &effort) {
  std::vector<Node> children = expand(beam, effort);
  score(children, pass, effort);
  if (children.front().state.complete()) learn(children);
  std::vector<size_t> order(children.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // Stable: equal costs keep sampling order, so a seed fixes the beam.
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return children[a].ranked < children[b].ranked; });
  order.resize(std::min(order.size(), static_cast<size_t>(effort.beam_size)));
  beam.clear();
  for (size_t i : order) beam.push_back(std::move(children[i]));
  ++stats_.beam_steps;
  report_progress(beam);
}

// Every state's sampled children. A step where every sample dead-ended is redrawn.
std::vector<Node> BeamRun::expand(const std::vector<Node> &beam, const Effort &effort) {
  const Clock::time_point t0 = Clock::now();
  std::vector<Node> children;
  for (int attempt = 0; children.empty(); ++attempt) {
    if (attempt >= options_.max_dead_ends) {
      const int f = beam.front().state.num_decided();
      throw Error("beam search found no complete schedule: Func '" + ctx_.graph->funcs[f].name +
                  "' had no decision in the space after " + std::to_string(attempt) +
                  " attempts (every choice pruned)");
    }
    for (const Node &parent : beam) sample_children(parent, effort, children);
  }
  stats_.sampling_seconds += seconds_since(t0);
  return children;
}

// Whole decisions for the next Func of `parent`, sampled hierarchically (002_* 3.1): each
// placement the space offers gets an equal share of the samples, and each sample draws
// that placement's tiling steps uniformly. Duplicate decisions are dropped.
void BeamRun::sample_children(const Node &parent, const Effort &effort, std::vector<Node> &out) {
  const int f = parent.state.num_decided();
  const std::vector<Step> places = ctx_.space->children(parent.state);
  if (places.empty()) {
    ++stats_.dead_ends;
    return;
  }
  const int n = static_cast<int>(places.size());
  const int share =
      std::max(effort.min_samples_per_placement, (effort.samples_per_state + n - 1) / n);
  std::unordered_set<uint64_t> seen;
  for (const Step &place : places) {
    const ScheduleState placed = parent.state.with_step(place);
    const int draws = placed.num_decided() > f ? 1 : share;  // inlining is one decision
    for (int i = 0; i < draws; ++i) {
      ScheduleState s = placed;
      if (!finish_decision(s, f)) {
        ++stats_.dead_ends;
        continue;
      }
      const PrefixHashes prefix = extend(parent.prefix, s, f);
      if (!seen.insert(prefix[kWholeDecision]).second) continue;
      out.push_back(Node{std::move(s), prefix});
    }
  }
}

// Random steps until Func f is decided; false at a state without children.
bool BeamRun::finish_decision(ScheduleState &state, int f) {
  while (state.num_decided() == f) {
    const std::optional<Step> next = ctx_.space->random_child(state, rng_);
    if (!next) return false;
    state.take_step(*next);
  }
  return true;
}

// The model's predictions for `batch`, a NaN as infinity: it must not poison an ordering.
std::vector<double> BeamRun::predict(const std::vector<const ScheduleState *> &batch) {
  const Clock::time_point t0 = Clock::now();
  std::vector<double> costs = model_->predict(batch);
  stats_.cost_model_seconds += seconds_since(t0);
  if (costs.size() != batch.size()) {
    throw Error("cost model '" + model_->name() + "' returned " + std::to_string(costs.size()) +
                " predictions for " + std::to_string(batch.size()) + " states");
  }
  result_.evaluations += static_cast<int64_t>(batch.size());
  for (double &c : costs) {
    if (std::isnan(c)) c = std::numeric_limits<double>::infinity();
  }
  return costs;
}

// What each child is ranked by, before any penalty: with look-ahead, the cheapest of
// options_.lookahead_samples decisions sampled for its next Func, else (or when complete,
// or when every sample dead-ends) its own cost. One batch for all children. The greedy
// finish after a deadline samples one decision per placement, as for its children.
std::vector<double> BeamRun::look_ahead(const std::vector<Node> &children,
                                        const std::vector<double> &costs, const Effort &effort) {
  if (options_.lookahead_samples <= 0) return costs;
  const Effort next{1, std::min(options_.lookahead_samples, effort.samples_per_state), 1};
  std::vector<Node> states;
  std::vector<size_t> owner;
  const Clock::time_point t0 = Clock::now();
  for (size_t i = 0; i < children.size(); ++i) {
    if (children[i].state.complete()) continue;
    const size_t before = states.size();
    sample_children(children[i], next, states);
    owner.insert(owner.end(), states.size() - before, i);
  }
  stats_.sampling_seconds += seconds_since(t0);
  if (states.empty()) return costs;  // the last Func's step: complete schedules
  std::vector<const ScheduleState *> batch;
  batch.reserve(states.size());
  for (const Node &n : states) batch.push_back(&n.state);
  const std::vector<double> ahead = predict(batch);
  stats_.lookahead_states += static_cast<int64_t>(batch.size());
  std::vector<double> ranks(children.size(), std::numeric_limits<double>::infinity());
  for (size_t k = 0; k < ahead.size(); ++k) {
    ranks[owner[k]] = std::min(ranks[owner[k]], ahead[k]);
  }
  for (size_t i = 0; i < children.size(); ++i) {
    if (ranks[i] == std::numeric_limits<double>::infinity()) ranks[i] = costs[i];
  }
  return ranks;
}

// Predicts every child in one batch and ranks it (by its look-ahead when on), penalizing
// known-bad prefixes after the first pass (at the level of detail the pass compares).
void BeamRun::score(std::vector<Node> &children, int64_t pass, const Effort &effort) {
  std::vector<const ScheduleState *> batch;
  batch.reserve(children.size());
  for (const Node &c : children) batch.push_back(&c.state);
  const std::vector<double> costs = predict(batch);
  stats_.children += static_cast<int64_t>(batch.size());
  const std::vector<double> ranks = look_ahead(children, costs, effort);
  const bool penalize = pass > 0 && options_.known_bad_penalty > 1;
  const int level = static_cast<int>(std::min<int64_t>(pass - 1, kLevels - 1));
  for (size_t i = 0; i < children.size(); ++i) {
    Node &c = children[i];
    c.cost = costs[i];
    c.ranked = ranks[i];
    const int depth = c.state.num_decided();
    if (penalize && record_.known_bad(level, c.prefix[level], depth)) {
      c.ranked *= options_.known_bad_penalty;
      ++stats_.penalized;
    }
  }
  // Recorded after ranking: a step is judged by earlier passes only (each depth is visited
  // once per pass).
  for (const Node &c : children) record_.record_scored(c.prefix, c.state.num_decided(), c.cost);
}

// The last step of a pass scored complete schedules: remember all of them for later
// passes (the ones the beam drops are what makes a prefix known bad), keep the best.
void BeamRun::learn(const std::vector<Node> &complete) {
  for (const Node &n : complete) {
    ++result_.rollouts;
    record_.record_complete(n.state, n.cost);
    if (have_best_ && n.cost >= result_.best_cost) continue;
    have_best_ = true;
    result_.best = n.state;
    result_.best_cost = n.cost;
    result_.trace.push_back(TracePoint{seconds_since(start_), n.cost, std::nullopt});
  }
}

void BeamRun::report_progress(const std::vector<Node> &beam) const {
  if (!ctx_.on_progress) return;
  SearchProgress p;
  p.elapsed_seconds = seconds_since(start_);
  if (have_best_) {
    p.best_cost = result_.best_cost;
  } else {
    p.best_cost = std::min_element(beam.begin(), beam.end(), [](const Node &a, const Node &b) {
                    return a.cost < b.cost;
                  })->cost;
  }
  p.evaluations = result_.evaluations;
  p.rollouts = result_.rollouts;
  ctx_.on_progress(p);
}

}  // namespace

BeamSearchOptions lookahead_beam_options() {
  BeamSearchOptions o;
  o.lookahead_samples = kDefaultLookaheadSamples;
  return o;
}

BeamSearchOptions greedy_options() {
  BeamSearchOptions o;
  o.beam_size = 1;
  o.passes = 1;
  return o;
}

BeamSearch::BeamSearch(BeamSearchOptions options, std::string name)
    : options_(options), name_(std::move(name)) {
  const BeamSearchOptions &o = options_;
  if (o.beam_size < 1 || o.passes < 1 || o.samples_per_state < 1 ||
      o.min_samples_per_placement < 1 || o.max_dead_ends < 1) {
    throw std::invalid_argument(name_ +
                                ": beam_size, passes, samples_per_state, "
                                "min_samples_per_placement and max_dead_ends must be at least 1");
  }
  if (o.lookahead_samples < 0) {
    throw std::invalid_argument(name_ + ": lookahead_samples must be non-negative (0: off)");
  }
  if (!(o.known_bad_penalty >= 1) || !(o.known_bad_margin >= 0)) {
    throw std::invalid_argument(name_ +
                                ": known_bad_penalty must be at least 1 (1: off) and "
                                "known_bad_margin non-negative");
  }
}

SearchResult BeamSearch::run(const SearchContext &ctx, const SearchBudget &budget) {
  check_search_inputs(name_, ctx, budget, false);
  std::unique_ptr<CostModel> model = ctx.cost_model();
  if (!model) throw std::invalid_argument(name_ + ": the cost model factory gave null");
  stats_ = BeamSearchStats{};
  return BeamRun(options_, ctx, budget, std::move(model), stats_).run();
}

}  // namespace protuner
