#include "searcher/space/search_space.h"

#include <Halide.h>

#include <algorithm>
#include <array>
#include <memory>
#include <atomic>
#include <cmath>
#include <limits>
#include <set>
#include <thread>

#include "common/pipeline/region.h"
#include "common/schedule/loop_nest.h"

namespace protuner {
namespace {

using Pair = std::pair<int64_t, int64_t>;  // (tile, inner) of one variable

// The k of extent / k that outer tile sizes are made from.
constexpr int64_t kTileDivisors[] = {2, 3, 4, 5, 6, 8, 10, 12, 16, 24, 32, 48, 64, 128, 256};
constexpr size_t kMaxTileSizes = std::size(kTileDivisors) + 1;

// A short list on the stack: sampling a random child must not allocate per candidate.
struct TileSizes {
  int64_t size[kMaxTileSizes];
  size_t n = 0;
};

// Outer tile sizes for a variable of `extent` points with inner tiles of `inner`, into
// `out`: divisors and near-divisors (extent / k rounded up to a whole number of inner
// tiles), spread over the range, plus the whole extent (no outer split). Drawn per step,
// so nothing is sorted or copied: the candidates come out ascending when k descends.
void tile_sizes(int64_t extent, int64_t inner, int max_options, TileSizes &out) {
  int64_t all[kMaxTileSizes];
  size_t n = 0;
  for (size_t i = std::size(kTileDivisors); i-- > 0;) {
    const int64_t k = kTileDivisors[i];
    const int64_t t = round_up((extent + k - 1) / k, inner);
    if (t >= inner && t < extent && (n == 0 || t != all[n - 1])) all[n++] = t;
  }
  const size_t keep = static_cast<size_t>(std::max(max_options, 2));
  out.n = 0;
  if (n <= keep) {
    for (size_t i = 0; i < n; ++i) out.size[out.n++] = all[i];
  } else {
    // Evenly spaced through the sorted candidates, smallest and largest included.
    for (size_t i = 0; i < keep && i < kMaxTileSizes - 1; ++i)
      out.size[out.n++] = all[i * (n - 1) / (keep - 1)];
  }
  out.size[out.n++] = extent;
}

}  // namespace

SearchSpaceOptions SearchSpaceOptions::for_target(const Halide::Target &target) {
  SearchSpaceOptions o;
  o.cores = std::max(1u, std::thread::hardware_concurrency());
  if (target.has_feature(Halide::Target::AVX512))
    o.vector_bits = 512;
  else if (target.has_feature(Halide::Target::AVX2) || target.has_feature(Halide::Target::AVX))
    o.vector_bits = 256;
  else
    o.vector_bits = 128;
  return o;
}

namespace {

int64_t tasks_of(int64_t extent, int64_t tile) {
  return tile >= extent ? 1 : (extent + tile - 1) / tile;
}

// The most parallel tasks any offered tiling of a variable of extent `e` gives: its
// smallest outer tile, which tile_sizes() always keeps (with one-point inner tiles: extent
// / the largest divisor, rounded up, whenever the extent can be split at all).
int64_t max_tasks(int64_t e) {
  constexpr int64_t k = kTileDivisors[std::size(kTileDivisors) - 1];
  return e < 2 ? 1 : tasks_of(e, (e + k - 1) / k);
}

// What the steps of one stage of the pending decision depend on.
struct StageContext {
  const std::vector<int64_t> &extents;  // per pure variable (the state's)
  int64_t points = 0;                   // over all realizations
  bool at_root = false;
  bool inside_parallel = false;
  bool may_fuse = true;  // no_fused_parallel_loops_reason gives none
  int64_t lanes = 1;
};

// Rule 2 applies to a stage whose pure variables can give `cores` tasks at all: fused,
// or, for a stage that may not fuse, in one loop.
bool can_fill_cores(const StageContext &c, const SearchSpaceOptions &o) {
  int64_t tasks = 1;
  for (int64_t e : c.extents) {
    tasks = c.may_fuse ? tasks * max_tasks(e) : std::max(tasks, max_tasks(e));
  }
  return tasks >= o.cores;
}

bool rule_2_applies(const StageContext &c, const SearchSpaceOptions &o) {
  return c.at_root && c.points >= o.min_parallel_points && can_fill_cores(c, o);
}

// Whether tiling `t` of a stage is in the space for this placement: representable
// parallelism, no nested parallelism, enough tasks for big root stages.
bool tiling_allowed(const StageTiling &t, const StageContext &c, const SearchSpaceOptions &o) {
  int outer = 0;
  int64_t tasks = 1;
  for (int v = static_cast<int>(c.extents.size()) - 1; v >= 0; --v) {
    if (t.tile[v] >= c.extents[v]) continue;
    ++outer;
    if (outer <= t.parallel_loops) tasks *= tasks_of(c.extents[v], t.tile[v]);
  }
  if (t.parallel_loops > outer) return false;
  if (!c.may_fuse && t.parallel_loops > 1) return false;
  if (c.inside_parallel && t.parallel_loops > 0) return false;
  return !(rule_2_applies(c, o) && (t.parallel_loops == 0 || tasks < o.cores));
}

// The pending decision's tiling of `stage` so far (empty before its first tile step).
StageTiling pending_tiling(const ScheduleState &state, int stage) {
  const std::vector<StageTiling> &tiled = state.pending().stages;
  return static_cast<int>(tiled.size()) > stage ? tiled[stage] : StageTiling{};
}

StageContext stage_context(const ScheduleState &state, const SearchSpaceOptions &o) {
  const FuncNode &node = state.graph().funcs[state.num_decided()];
  StageContext c{state.pending_stage_extents()};
  c.points = state.pending_stage_points();
  c.at_root = state.pending().placement == Placement::kRoot;
  c.inside_parallel = state.pending_inside_parallel();
  c.may_fuse = !no_fused_parallel_loops_reason(node, state.pending().placement);
  int bits = 8;
  for (const std::string &t : node.value_types) bits = std::max(bits, value_type_bits(t));
  c.lanes = std::max(1, o.vector_bits / bits);
  return c;
}

// The (tile, inner) pairs offered for variable `v` of extent `e`, grouped by inner size:
// inner tiles of one point, of 1..max_vector_multiple vectors (variable 0; or of its
// whole extent, when that is under a vector and at least half of one) or of the unroll
// sizes (the others), each with the outer tile sizes of tile_sizes(). On the stack:
// drawing a random child must not allocate per candidate.
struct VarPairs {
  static constexpr size_t kMaxInners = 8;
  int64_t inner[kMaxInners];
  TileSizes tiles[kMaxInners];
  size_t n = 0;

  // The SearchSpace constructor keeps the options within kMaxInners.
  VarPairs(int v, int64_t e, int64_t lanes, const SearchSpaceOptions &o) {
    auto add = [&](int64_t in) {
      inner[n] = in;
      tile_sizes(e, in, o.max_tile_options, tiles[n++]);
    };
    add(1);
    if (v == 0) {
      for (int k = 1; k <= o.max_vector_multiple && lanes * k <= e; ++k) add(lanes * k);
      // A variable narrower than a vector but at least half as wide is vectorized whole:
      // bgu's 12 coefficients a cell, one vector of 16 lanes (its expert's vectorize(k, 12)).
      if (e < lanes && 2 * e >= lanes) add(e);
    } else {
      for (int64_t u : o.unroll_extents) {
        if (u > 1 && u <= e) add(u);
      }
    }
  }
  template <typename Fn>
  void for_each(const Fn &fn) const {
    for (size_t i = 0; i < n; ++i) {
      for (size_t t = 0; t < tiles[i].n; ++t) fn(tiles[i].size[t], inner[i]);
    }
  }
};

// The VarPairs of a (variable, extent, lanes) under the options of the SearchSpace with id
// `space`, from a small per-thread cache: a rollout tiles the same few extents over and
// over, and building the pairs took a sixth of drawing a random rollout.
const VarPairs &var_pairs(uint64_t space, int v, int64_t e, int64_t lanes,
                          const SearchSpaceOptions &o) {
  struct Entry {
    uint64_t space = 0;  // 0: empty (ids start at 1)
    bool first_var = false;
    int64_t extent = 0;
    int64_t lanes = 0;
    std::optional<VarPairs> pairs;
  };
  constexpr size_t kEntries = 64;
  // On the heap, not in static TLS: every thread of the process reserves the executable's
  // static TLS on its stack, and libraries that start threads with small fixed stacks
  // (civetweb's, serving /metrics) fail to start them when that TLS is large.
  thread_local std::unique_ptr<std::array<Entry, kEntries>> cache;
  if (!cache) cache = std::make_unique<std::array<Entry, kEntries>>();
  const bool first_var = v == 0;
  Entry &entry = (*cache)[static_cast<size_t>(e * 2 + first_var) % kEntries];
  if (entry.space != space || entry.first_var != first_var || entry.extent != e ||
      entry.lanes != lanes) {
    entry.pairs.emplace(v, e, lanes, o);
    entry.space = space;
    entry.first_var = first_var;
    entry.extent = e;
    entry.lanes = lanes;
  }
  return *entry.pairs;
}

// Rule 2 looks ahead: a (tile, inner) choice is offered only if some completion of the
// stage still has enough parallel tasks, so a rollout never walks into a dead end.
// Variables are tiled innermost first; the parallel loops are the outermost split ones.
struct TileTaskRule {
  int64_t split_needs = 1;  // the fewest tasks a split of the variable must give
  bool whole_ok = true;     // whether leaving the variable unsplit is offered

  bool allows(int64_t extent, int64_t tile) const {
    return tile >= extent ? whole_ok : tasks_of(extent, tile) >= split_needs;
  }
};

TileTaskRule tile_task_rule(const ScheduleState &state, int stage, int var, const StageContext &c,
                            const SearchSpaceOptions &o) {
  if (!rule_2_applies(c, o)) return {};
  const FuncDecision &d = state.pending();
  const StageTiling *t = static_cast<int>(d.stages.size()) > stage ? &d.stages[stage] : nullptr;
  const int64_t cores = o.cores;
  if (c.may_fuse) {
    // The outer loops fuse: tasks multiply over the variables tiled so far and the most
    // the later ones can add.
    int64_t others = 1;
    for (int u = 0; t && u < var; ++u) others *= tasks_of(c.extents[u], t->tile[u]);
    for (size_t u = var + 1; u < c.extents.size(); ++u) others *= max_tasks(c.extents[u]);
    const int64_t needed = (cores + others - 1) / others;
    return {needed, needed <= 1};
  }
  // One parallel loop: the outermost split variable alone must give the tasks. A later
  // variable that can still do it leaves this one free; otherwise a split here must, and
  // leaving it whole is fine only if the outermost split so far already does.
  for (size_t u = var + 1; u < c.extents.size(); ++u) {
    if (max_tasks(c.extents[u]) >= cores) return {};
  }
  int64_t outermost_so_far = 1;
  for (int u = 0; t && u < var; ++u) {
    if (t->tile[u] < c.extents[u]) outermost_so_far = tasks_of(c.extents[u], t->tile[u]);
  }
  return {cores, outermost_so_far >= cores};
}

int64_t block_points(const StageTiling &t, size_t vars) {
  int64_t n = 1;
  for (size_t u = 0; u < vars && u < t.inner.size(); ++u) n *= t.inner[u];
  return n;
}

// Rule 7's lane-operations of every block decided so far: the decided Funcs
// (ScheduleState::block_lane_ops), the pending decision's earlier stages, and `stage`'s
// variables before `var`, whose block points are returned in `partial_block`.
int64_t block_lane_ops(const ScheduleState &state, int stage, int var, int64_t &partial_block) {
  int64_t total = state.block_lane_ops();
  const FuncDecision &p = state.pending();
  const FuncNode &node = state.graph().funcs[state.num_decided()];
  for (int s = 0; s < stage && s < static_cast<int>(p.stages.size()); ++s) {
    total += stage_block_points(node.stages[s], p.stages[s]) * node.stages[s].code_per_point;
  }
  partial_block = static_cast<int>(p.stages.size()) > stage
                      ? block_points(p.stages[stage], static_cast<size_t>(var))
                      : 1;
  return total;
}

// The largest inner tile variable `var` of `stage` of the pending decision may take under
// rules 6 (the stage's own gathered loads per block) and 7 (lane-operations of all blocks).
int64_t max_inner(const ScheduleState &state, int stage, int var, const SearchSpaceOptions &o) {
  const StageNode &node = state.graph().funcs[state.num_decided()].stages[stage];
  int64_t block = 1;
  const int64_t spent = block_lane_ops(state, stage, var, block);
  int64_t widest =
      std::max<int64_t>(0, o.max_block_lane_ops - spent) / (block * node.code_per_point);
  if (node.gathers > 0) widest = std::min(widest, o.max_block_gathers / (block * node.gathers));
  return std::max<int64_t>(1, widest);
}

// Whether the pending decision's `stage` may hold `reduction_points` points of its
// innermost reduction in its block under rules 6 and 7 (stage_block_points): the block is
// then those points times its inner tile. An unrolled reduction brings its extent, a
// reduction in lanes its lanes (with no inner tile, which lane_reduction_refusal checks).
bool reduction_block_allowed(const ScheduleState &state, int stage, int64_t reduction_points,
                             const SearchSpaceOptions &o) {
  const StageNode &node = state.graph().funcs[state.num_decided()].stages[stage];
  int64_t block = 1;
  const int64_t spent = block_lane_ops(state, stage, node.num_pure, block);
  const int64_t points = block * reduction_points;
  return spent + points * node.code_per_point <= o.max_block_lane_ops &&
         points * node.gathers <= o.max_block_gathers;
}

// Whether the pending decision's `stage` may unroll its reduction loop (rules 6 and 7).
bool unrolled_block_allowed(const ScheduleState &state, int stage, const SearchSpaceOptions &o) {
  const StageNode &node = state.graph().funcs[state.num_decided()].stages[stage];
  return static_cast<int>(node.loop_vars.size()) > node.num_pure &&
         reduction_block_allowed(state, stage, node.rvar_region.front().extent(), o);
}

// How many loops outside compute loop `at` storage at `store` is, counted within the
// consumer's own loop nest; storage in another Func's loops or at root counts as unbounded.
int storage_hoist(const LoopRef &at, const LoopRef &store) {
  if (store == at) return 0;
  if (store.is_root() || store.func != at.func || store.stage != at.stage) {
    return std::numeric_limits<int>::max();
  }
  return at.loop - store.loop;
}

Step place_step(Placement p, const LoopRef &at = {}, const LoopRef &store = {}) {
  Step s;
  s.placement = p;
  if (p == Placement::kAt) {
    s.compute_at = at;
    s.store_at = store;
  }
  return s;
}

}  // namespace

SearchSpace::SearchSpace(SearchSpaceOptions options) : options_(std::move(options)) {
  static std::atomic<uint64_t> next_id{1};
  id_ = next_id++;
  // Inner sizes per variable live in a fixed array (VarPairs): one point plus these.
  constexpr size_t kMaxExtraInners = VarPairs::kMaxInners - 1;
  if (options_.unroll_extents.size() > kMaxExtraInners || options_.max_vector_multiple < 1 ||
      static_cast<size_t>(options_.max_vector_multiple) > kMaxExtraInners) {
    throw std::invalid_argument("SearchSpaceOptions: at most " + std::to_string(kMaxExtraInners) +
                                " unroll_extents and max_vector_multiple in 1.." +
                                std::to_string(kMaxExtraInners));
  }
  if (options_.max_inlined_block_calls < 1 || options_.max_block_gathers < 1 ||
      options_.max_block_lane_ops < 1) {
    throw std::invalid_argument(
        "SearchSpaceOptions: max_inlined_block_calls, max_block_gathers and max_block_lane_ops "
        ">= 1 required");
  }
  if (options_.cores < 1 || options_.vector_bits < 8 || options_.max_tile_options < 2) {
    throw std::invalid_argument(
        "SearchSpaceOptions: cores >= 1, vector_bits >= 8 and max_tile_options >= 2 required");
  }
}

std::vector<Step> SearchSpace::place_steps(const ScheduleState &state) const {
  std::vector<Step> out;
  const int f = state.num_decided();
  const FuncNode &node = state.graph().funcs[f];
  if (node.inlinable() && state.inline_footprint(f) <= options_.max_inline_footprint &&
      state.inlined_block_calls(f) <= options_.max_inlined_block_calls &&
      state.block_lane_ops() + state.inlined_block_lane_ops(f) <= options_.max_block_lane_ops) {
    out.push_back(place_step(Placement::kInline));
  }
  out.push_back(place_step(Placement::kRoot));
  if (node.is_output) return out;
  for (int g = 0; g < f; ++g) {
    if (state.decision(g).placement == Placement::kInline) continue;
    const auto &loops = state.bounds(g).loops;
    for (size_t s = 0; s < loops.size(); ++s) {
      for (size_t l = 0; l < loops[s].size(); ++l) {
        const LoopRef at{g, static_cast<int>(s), static_cast<int>(l)};
        if (state.compute_at_refusal(at)) continue;
        for (const LoopRef &store : state.store_options(at)) {
          if (storage_hoist(at, store) <= options_.max_storage_hoist) {
            out.push_back(place_step(Placement::kAt, at, store));
          }
        }
      }
    }
  }
  return out;
}

std::vector<Step> SearchSpace::tile_steps(const ScheduleState &state, int stage, int var) const {
  const StageContext c = stage_context(state, options_);
  const TileTaskRule tasks = tile_task_rule(state, stage, var, c, options_);
  const int64_t widest = max_inner(state, stage, var, options_);
  const int64_t e = c.extents[var];
  std::vector<Step> out;
  var_pairs(id_, var, e, c.lanes, options_).for_each([&](int64_t tile, int64_t inner) {
    if (!tasks.allows(e, tile) || inner > widest) return;
    Step s;
    s.kind = Step::Kind::kTile;
    s.tile = tile;
    s.inner = inner;
    out.push_back(s);
  });
  return out;
}

std::vector<Step> SearchSpace::parallel_steps(const ScheduleState &state, int stage) const {
  const StageContext c = stage_context(state, options_);
  StageTiling t = pending_tiling(state, stage);
  const StageNode &node = state.graph().funcs[state.num_decided()].stages[stage];
  const bool movable = reduction_order_matters(node, t, c.extents);
  const bool unrollable = unrolled_block_allowed(state, stage, options_);
  std::vector<Step> out;
  // One past the pure variables is a reduction in parallel bands, where
  // parallel_loops_refusal (the state's own rule) allows it.
  const Placement placement = state.pending().placement;
  for (int par = 0; par <= static_cast<int>(c.extents.size()) + 1; ++par) {
    if (parallel_loops_refusal(node, par, placement)) continue;
    t.parallel_loops = par;
    if (!reduction_in_bands(node, t) && !tiling_allowed(t, c, options_)) continue;
    Step s;
    s.kind = Step::Kind::kParallel;
    s.parallel_loops = par;
    out.push_back(s);
    if (movable) {
      s.reduction_outside = true;
      out.push_back(s);
      s.reduction_outside = false;
    }
    if (unrollable && !unroll_reduction_refusal(node, par, false)) {
      s.unroll_reduction = true;
      out.push_back(s);
      s.unroll_reduction = false;
    }
    if (!node.lane_rfactorable) continue;
    for (int multiple : kLaneReductionMultiples) {
      StageTiling lanes = t;
      lanes.reduction_lanes = multiple * c.lanes;
      if (lane_reduction_refusal(node, lanes) ||
          !reduction_block_allowed(state, stage, lanes.reduction_lanes, options_)) {
        continue;
      }
      s.reduction_lanes = lanes.reduction_lanes;
      out.push_back(s);
    }
    s.reduction_lanes = 0;
  }
  return out;
}

std::vector<Step> SearchSpace::children(const ScheduleState &state) const {
  if (state.complete()) return {};
  const ScheduleState::NextStep next = state.next_step();
  switch (next.kind) {
    case Step::Kind::kPlace:
      return place_steps(state);
    case Step::Kind::kTile:
      return tile_steps(state, next.stage, next.var);
    case Step::Kind::kParallel:
      return parallel_steps(state, next.stage);
  }
  return {};
}

std::optional<Step> SearchSpace::random_child(const ScheduleState &state,
                                              std::mt19937_64 &rng) const {
  if (state.complete()) return std::nullopt;
  const ScheduleState::NextStep next = state.next_step();
  if (next.kind == Step::Kind::kTile) {
    // The commonest step: count the offered pairs, then walk to the drawn one.
    const StageContext c = stage_context(state, options_);
    const TileTaskRule tasks = tile_task_rule(state, next.stage, next.var, c, options_);
    const int64_t widest = max_inner(state, next.stage, next.var, options_);
    const int64_t e = c.extents[next.var];
    const VarPairs &pairs = var_pairs(id_, next.var, e, c.lanes, options_);
    auto offered = [&](int64_t tile, int64_t inner) {
      return tasks.allows(e, tile) && inner <= widest;
    };
    int64_t count = 0;
    pairs.for_each([&](int64_t tile, int64_t inner) { count += offered(tile, inner); });
    if (count == 0) return std::nullopt;
    int64_t pick = std::uniform_int_distribution<int64_t>(0, count - 1)(rng);
    Step s;
    s.kind = Step::Kind::kTile;
    pairs.for_each([&](int64_t tile, int64_t inner) {
      if (!offered(tile, inner) || pick-- != 0) return;
      s.tile = tile;
      s.inner = inner;
    });
    return s;
  }
  // Other steps have few children; listing them builds no child state.
  std::vector<Step> steps = children(state);
  if (steps.empty()) return std::nullopt;
  return steps[std::uniform_int_distribution<size_t>(0, steps.size() - 1)(rng)];
}

std::optional<FuncDecision> SearchSpace::random_decision(const ScheduleState &state,
                                                         std::mt19937_64 &rng) const {
  if (state.complete() || state.mid_decision()) return std::nullopt;
  ScheduleState s = state;
  const int f = s.num_decided();
  while (s.num_decided() == f) {
    std::optional<Step> step = random_child(s, rng);
    if (!step) return std::nullopt;
    s.take_step(*step);
  }
  return s.decision(f);
}

std::string SearchSpace::pruned_because(const ScheduleState &state, const FuncDecision &d) const {
  const std::string illegal = state.check_decision(d);
  if (!illegal.empty()) return "illegal: " + illegal;
  ScheduleState s = state;
  for (const Step &step : steps_of(d)) {
    const ScheduleState::NextStep next = s.next_step();
    const std::vector<Step> offered = children(s);
    if (std::find(offered.begin(), offered.end(), step) == offered.end()) {
      const std::string where = "stage " + std::to_string(next.stage);
      switch (step.kind) {
        case Step::Kind::kPlace:
          if (step.placement == Placement::kInline) {
            const int f = s.num_decided();
            if (s.inline_footprint(f) > options_.max_inline_footprint) {
              return "inlining would recompute too much";
            }
            return s.inlined_block_calls(f) > options_.max_inlined_block_calls
                       ? "inlining would unroll too many calls into a consumer's inner block"
                       : "inlining would put too much code into the blocks using it";
          }
          if (step.placement == Placement::kAt &&
              storage_hoist(step.compute_at, step.store_at) > options_.max_storage_hoist) {
            return "storage more than " + std::to_string(options_.max_storage_hoist) +
                   " loop(s) outside the compute loop, or outside its loop nest, is not "
                   "offered (max_storage_hoist)";
          }
          return "placement is not offered";
        case Step::Kind::kTile:
          return where + " variable " + std::to_string(next.var) + ": tile " +
                 std::to_string(step.tile) + " / inner " + std::to_string(step.inner) +
                 " is not offered (or leaves too few parallel tasks, or unrolls too many "
                 "gathers or too much code)";
        case Step::Kind::kParallel:
          if (step.reduction_lanes > 0) {
            return where + ": a reduction in " + std::to_string(step.reduction_lanes) +
                   " lanes is not offered (not associative, no pure variable, an inner tile, "
                   "a reduction no multiple of two vectors of the Func's native lanes, or a "
                   "block past the code rules)";
          }
          if (step.unroll_reduction) {
            const StageNode &stage = s.graph().funcs[s.num_decided()].stages[next.stage];
            if (const char *why = unroll_reduction_refusal(stage, step.parallel_loops,
                                                           step.reduction_outside)) {
              return where + ": cannot unroll its reduction: " + why;
            }
            if (!unrolled_block_allowed(s, next.stage, options_)) {
              return where + ": unrolling its reduction would put too much code or too many "
                             "gathers into one block";
            }
          }
          if (step.reduction_outside) {
            const StageNode &stage = s.graph().funcs[s.num_decided()].stages[next.stage];
            if (!reduction_order_matters(stage, pending_tiling(s, next.stage),
                                         s.pending_stage_extents())) {
              return where + ": reduction_outside would change nothing (no middle loop)";
            }
          }
          return where +
                 ": parallelism rule (too few tasks, nested, or more parallel loops than outer "
                 "loops)";
      }
    }
    s.take_step(step);
  }
  return "";
}

bool SearchSpace::random_rollout(ScheduleState &state, std::mt19937_64 &rng) const {
  while (!state.complete()) {
    std::optional<Step> step = random_child(state, rng);
    if (!step) return false;
    state.take_step(*step);
  }
  return true;
}

}  // namespace protuner
