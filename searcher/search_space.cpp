#include "searcher/search_space.h"

#include <Halide.h>
#include <set>
#include <thread>

namespace protuner {
namespace {

using Pair = std::pair<int64_t, int64_t>;  // (tile, inner) of one variable

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

int type_bits(const std::string &type) {
  size_t i = type.size();
  while (i > 0 && std::isdigit(static_cast<unsigned char>(type[i - 1]))) --i;
  const int bits = i < type.size() ? std::stoi(type.substr(i)) : 32;
  return std::max(bits, 8);
}

// Outer tile sizes for a variable of `extent` points with inner tiles of `inner`: divisors
// and near-divisors (extent / k rounded up to a whole number of inner tiles), spread over
// the range, plus the whole extent (no outer split).
std::vector<int64_t> tile_sizes(int64_t extent, int64_t inner, int max_options) {
  std::set<int64_t> c;
  for (int64_t k : {2, 3, 4, 5, 6, 8, 10, 12, 16, 24, 32, 48, 64, 128, 256}) {
    const int64_t t = round_up((extent + k - 1) / k, inner);
    if (t >= inner && t < extent) c.insert(t);
  }
  std::vector<int64_t> all(c.begin(), c.end()), picked;
  const size_t n = all.size(), keep = static_cast<size_t>(std::max(max_options, 2));
  if (n <= keep) {
    picked = all;
  } else {
    // Evenly spaced through the sorted candidates, smallest and largest included.
    for (size_t i = 0; i < keep; ++i) picked.push_back(all[i * (n - 1) / (keep - 1)]);
  }
  picked.push_back(extent);
  return picked;
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

struct SearchSpace::Candidate {
  Placement placement = Placement::kRoot;
  LoopRef compute_at;
  std::vector<LoopRef> stores;  // kAt: the compute loop, the loops enclosing it, root
  bool inside_parallel = false;
  std::vector<std::vector<int64_t>> extents;          // per stage, per pure variable
  std::vector<std::vector<std::vector<Pair>>> pairs;  // per stage, per pure variable
  std::vector<int64_t> stage_points;                  // total over all realizations
  double size = 1;  // decisions in the (unpruned) product space of this placement
};

std::vector<SearchSpace::Candidate> SearchSpace::candidates(const ScheduleState &state) const {
  std::vector<Candidate> out;
  if (state.complete()) return out;
  const int f = state.num_decided();
  const FuncNode &node = state.graph().funcs[f];

  if (node.inlinable() && state.inline_footprint(f) <= options_.max_inline_footprint) {
    Candidate c;
    c.placement = Placement::kInline;
    out.push_back(c);
  }
  std::vector<Candidate> placed(1);  // root first
  if (!node.is_output) {
    for (int g = 0; g < f; ++g) {
      if (state.decision(g).placement == Placement::kInline) continue;
      const auto &loops = state.bounds(g).loops;
      for (size_t s = 0; s < loops.size(); ++s) {
        for (size_t l = 0; l < loops[s].size(); ++l) {
          const LoopRef at{g, static_cast<int>(s), static_cast<int>(l)};
          if (loops[s][l].kind == LoopKind::kInner || !state.can_compute_at(f, at)) continue;
          Candidate c;
          c.placement = Placement::kAt;
          c.compute_at = at;
          c.stores = state.store_options(at);
          for (const LoopRef &e : state.enclosing_loops(at)) {
            c.inside_parallel =
                c.inside_parallel || state.bounds(e.func).loops[e.stage][e.loop].parallel;
          }
          placed.push_back(c);
        }
      }
    }
  }

  int bits = 8;
  for (const std::string &t : node.value_types) bits = std::max(bits, type_bits(t));
  const int64_t lanes = std::max(1, options_.vector_bits / bits);
  for (Candidate &c : placed) {
    const LoopRef at = c.placement == Placement::kAt ? c.compute_at : LoopRef{};
    const Region region = state.region_at(f, at);
    const int64_t realizations = state.realizations_at(at);
    c.size = static_cast<double>(std::max<size_t>(c.stores.size(), 1));
    for (const StageNode &stage : node.stages) {
      const Region loops = stage.loop_region(region);
      std::vector<int64_t> extents;
      std::vector<std::vector<Pair>> vars;
      for (int v = 0; v < stage.num_pure; ++v) {
        const int64_t e = std::max<int64_t>(loops[v].extent(), 1);
        std::vector<int64_t> inners{1};
        if (v == 0) {
          for (int k = 1; k <= options_.max_vector_multiple && lanes * k <= e; ++k)
            inners.push_back(lanes * k);
        } else {
          for (int64_t u : options_.unroll_extents) {
            if (u <= e) inners.push_back(u);
          }
        }
        std::vector<Pair> p;
        for (int64_t in : inners) {
          for (int64_t t : tile_sizes(e, in, options_.max_tile_options)) p.push_back({t, in});
        }
        c.size *= static_cast<double>(p.size());
        extents.push_back(e);
        vars.push_back(std::move(p));
      }
      c.size *= stage.num_pure + 1;  // parallel_loops 0..num_pure
      c.extents.push_back(std::move(extents));
      c.pairs.push_back(std::move(vars));
      c.stage_points.push_back(region_points(loops) * realizations);
    }
    out.push_back(std::move(c));
  }
  return out;
}

namespace {

// Whether tiling `t` of a stage is in the space for this placement: representable
// parallelism, no nested parallelism, enough tasks for big root stages.
bool tiling_allowed(const StageTiling &t, const std::vector<int64_t> &extents, bool inside_parallel,
                    bool at_root, int64_t points, const SearchSpaceOptions &o) {
  int outer = 0;
  int64_t tasks = 1;
  for (int v = static_cast<int>(extents.size()) - 1; v >= 0; --v) {
    if (t.tile[v] >= extents[v]) continue;
    ++outer;
    if (outer <= t.parallel_loops) tasks *= (extents[v] + t.tile[v] - 1) / t.tile[v];
  }
  if (t.parallel_loops > outer) return false;
  if (!at_root && t.parallel_loops > 1) return false;  // see ScheduleState::check_decision
  if (inside_parallel && t.parallel_loops > 0) return false;
  if (at_root && points >= o.min_parallel_points && (t.parallel_loops == 0 || tasks < o.cores)) {
    return false;
  }
  return true;
}

FuncDecision decision_shell(const Placement p, const LoopRef &at, const LoopRef &store) {
  FuncDecision d;
  d.placement = p;
  if (p == Placement::kAt) {
    d.compute_at = at;
    d.store_at = store;
  }
  return d;
}

}  // namespace

std::vector<FuncDecision> SearchSpace::children(const ScheduleState &state) const {
  std::vector<FuncDecision> out;
  for (const Candidate &c : candidates(state)) {
    if (c.placement == Placement::kInline) {
      out.push_back(decision_shell(Placement::kInline, {}, {}));
      continue;
    }
    const bool at_root = c.placement == Placement::kRoot;
    // All tilings of every stage, then their product across stages and stores.
    std::vector<std::vector<StageTiling>> per_stage;
    for (size_t s = 0; s < c.pairs.size(); ++s) {
      std::vector<StageTiling> tilings{StageTiling{}};
      for (const auto &var_pairs : c.pairs[s]) {
        std::vector<StageTiling> next;
        for (const StageTiling &t : tilings) {
          for (const Pair &p : var_pairs) {
            StageTiling n = t;
            n.tile.push_back(p.first);
            n.inner.push_back(p.second);
            next.push_back(std::move(n));
          }
        }
        tilings = std::move(next);
      }
      std::vector<StageTiling> allowed;
      for (const StageTiling &t : tilings) {
        for (int par = 0; par <= static_cast<int>(c.pairs[s].size()); ++par) {
          StageTiling n = t;
          n.parallel_loops = par;
          if (tiling_allowed(n, c.extents[s], c.inside_parallel, at_root, c.stage_points[s],
                             options_)) {
            allowed.push_back(std::move(n));
          }
        }
      }
      per_stage.push_back(std::move(allowed));
    }
    const std::vector<LoopRef> stores = at_root ? std::vector<LoopRef>{LoopRef{}} : c.stores;
    for (const LoopRef &store : stores) {
      std::vector<FuncDecision> partial{decision_shell(c.placement, c.compute_at, store)};
      for (const auto &options : per_stage) {
        std::vector<FuncDecision> next;
        for (const FuncDecision &d : partial) {
          for (const StageTiling &t : options) {
            FuncDecision n = d;
            n.stages.push_back(t);
            next.push_back(std::move(n));
          }
        }
        partial = std::move(next);
      }
      out.insert(out.end(), partial.begin(), partial.end());
    }
  }
  return out;
}

std::optional<FuncDecision> SearchSpace::random_child(const ScheduleState &state,
                                                      std::mt19937_64 &rng) const {
  const std::vector<Candidate> cands = candidates(state);
  if (cands.empty()) return std::nullopt;
  std::vector<double> weights;
  for (const Candidate &c : cands) weights.push_back(c.size);
  std::discrete_distribution<size_t> pick_candidate(weights.begin(), weights.end());
  // Rejection sampling: every decision of the unpruned product space is equally likely,
  // so the accepted ones are uniform over the pruned space. Pruning rejects few, so this
  // rarely loops; the bound only guards against a space pruned almost empty.
  constexpr int kMaxAttempts = 10000;
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    const Candidate &c = cands[pick_candidate(rng)];
    if (c.placement == Placement::kInline) return decision_shell(Placement::kInline, {}, {});
    const bool at_root = c.placement == Placement::kRoot;
    const LoopRef store =
        at_root ? LoopRef{}
                : c.stores[std::uniform_int_distribution<size_t>(0, c.stores.size() - 1)(rng)];
    FuncDecision d = decision_shell(c.placement, c.compute_at, store);
    bool ok = true;
    for (size_t s = 0; s < c.pairs.size() && ok; ++s) {
      StageTiling t;
      for (const auto &var_pairs : c.pairs[s]) {
        const Pair &p =
            var_pairs[std::uniform_int_distribution<size_t>(0, var_pairs.size() - 1)(rng)];
        t.tile.push_back(p.first);
        t.inner.push_back(p.second);
      }
      t.parallel_loops =
          std::uniform_int_distribution<int>(0, static_cast<int>(c.pairs[s].size()))(rng);
      ok = tiling_allowed(t, c.extents[s], c.inside_parallel, at_root, c.stage_points[s], options_);
      d.stages.push_back(std::move(t));
    }
    if (ok) return d;
  }
  // The space is pruned almost empty here: fall back to drawing from the full list.
  std::vector<FuncDecision> all = children(state);
  if (all.empty()) return std::nullopt;
  return all[std::uniform_int_distribution<size_t>(0, all.size() - 1)(rng)];
}

std::string SearchSpace::pruned_because(const ScheduleState &state, const FuncDecision &d) const {
  const std::string illegal = state.check_decision(d);
  if (!illegal.empty()) return "illegal: " + illegal;
  for (const Candidate &c : candidates(state)) {
    if (c.placement != d.placement) continue;
    if (c.placement == Placement::kInline) return "";
    if (c.placement == Placement::kAt && !(c.compute_at == d.compute_at)) continue;
    if (c.placement == Placement::kAt &&
        std::find(c.stores.begin(), c.stores.end(), d.store_at) == c.stores.end()) {
      return "store_at is not offered for this compute_at";
    }
    for (size_t s = 0; s < c.pairs.size(); ++s) {
      const StageTiling &t = d.stages[s];
      for (size_t v = 0; v < c.pairs[s].size(); ++v) {
        const auto &ps = c.pairs[s][v];
        if (std::find(ps.begin(), ps.end(), Pair{t.tile[v], t.inner[v]}) == ps.end()) {
          return "stage " + std::to_string(s) + " variable " + std::to_string(v) + ": tile " +
                 std::to_string(t.tile[v]) + " / inner " + std::to_string(t.inner[v]) +
                 " is not offered";
        }
      }
      if (!tiling_allowed(t, c.extents[s], c.inside_parallel, c.placement == Placement::kRoot,
                          c.stage_points[s], options_)) {
        return "stage " + std::to_string(s) +
               ": parallelism rule (too few tasks, nested, or "
               "more parallel loops than outer loops)";
      }
    }
    return "";
  }
  return d.placement == Placement::kInline ? "inlining would recompute too much"
                                           : "placement is not offered";
}

bool SearchSpace::random_rollout(ScheduleState &state, std::mt19937_64 &rng) const {
  while (!state.complete()) {
    std::optional<FuncDecision> d = random_child(state, rng);
    if (!d) return false;
    state.decide(std::move(*d));
  }
  return true;
}

}  // namespace protuner
