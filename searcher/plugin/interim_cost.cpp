// The interim cost estimate (see interim_cost.h for the formula and why it is interim).
#include "searcher/plugin/interim_cost.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "searcher/search_space.h"

namespace protuner {
namespace {

// The narrowest element of a Func decides how many lanes its vectors hold.
int min_type_bits(const FuncNode &f) {
  int bits = 64;
  for (const std::string &t : f.value_types) bits = std::min(bits, value_type_bits(t));
  return bits;
}

int64_t point_bytes(const FuncNode &f) {
  int64_t bytes = 0;
  for (const std::string &t : f.value_types) bytes += value_type_bits(t) / 8;
  return bytes;
}

bool uses(const StageNode &stage, const std::string &producer) {
  return std::any_of(stage.footprints.begin(), stage.footprints.end(),
                     [&](const Footprint &fp) { return fp.producer() == producer; });
}

}  // namespace

InterimCostParams InterimCostParams::from(const SearchSpaceOptions &space,
                                          uint64_t last_level_cache_bytes) {
  InterimCostParams p;
  p.cores = std::max(1, space.cores);
  p.vector_bits = space.vector_bits;
  if (last_level_cache_bytes > 0) {
    p.cache_bytes_per_core = static_cast<int64_t>(last_level_cache_bytes) / p.cores;
  }
  return p;
}

double InterimCost::parallel_speedup(const ScheduleState &state, int f, int stage) const {
  const FuncBounds &b = state.bounds(f);
  if (b.inside_parallel) return params_.cores;
  for (const Loop &l : b.loops.at(stage)) {
    if (!l.parallel) continue;
    const double tasks = static_cast<double>(l.extent);
    const double rounds = static_cast<double>((l.extent + params_.cores - 1) / params_.cores);
    return std::max(1.0, tasks / rounds);
  }
  return 1.0;
}

double InterimCost::speedup(const ScheduleState &state, int f, int stage) const {
  const FuncBounds &b = state.bounds(f);
  double lanes = 1.0;
  const int native = std::max(1, params_.vector_bits / min_type_bits(state.graph().funcs[f]));
  for (const Loop &l : b.loops.at(stage)) {
    if (l.vectorized) lanes = static_cast<double>(std::min<int64_t>(l.extent, native));
  }
  return parallel_speedup(state, f, stage) * std::max(1.0, lanes);
}

double InterimCost::inlined_cost(const ScheduleState &state, int f) const {
  const PipelineGraph &g = state.graph();
  const double per_use = static_cast<double>(state.inline_footprint(f));
  double cost = 0;
  // Every computed stage that evaluates f, looking through inlined consumers: pairs of
  // (consumer, the Func whose calls to look for in it).
  std::vector<std::pair<int, int>> pending;
  for (int c : g.funcs[f].consumers) pending.emplace_back(c, f);
  while (!pending.empty()) {
    const auto [c, callee] = pending.back();
    pending.pop_back();
    if (state.decision(c).placement == Placement::kInline) {
      for (int cc : g.funcs[c].consumers) pending.emplace_back(cc, c);
      continue;
    }
    const FuncBounds &b = state.bounds(c);
    for (size_t s = 0; s < g.funcs[c].stages.size(); ++s) {
      if (!uses(g.funcs[c].stages[s], g.funcs[callee].name)) continue;
      const double points = static_cast<double>(b.stage_points[s]) * b.realizations;
      cost += per_use * points / speedup(state, c, static_cast<int>(s));
    }
  }
  return cost;
}

double InterimCost::operator()(const ScheduleState &state) const {
  const PipelineGraph &g = state.graph();
  double cost = 0;
  for (int f = 0; f < state.num_decided(); ++f) {
    const FuncBounds &b = state.bounds(f);
    if (b.inlined) {
      cost += inlined_cost(state, f);
      continue;
    }
    for (size_t s = 0; s < b.stage_points.size(); ++s) {
      const double points = static_cast<double>(b.stage_points[s]) * b.realizations;
      cost += points / speedup(state, f, static_cast<int>(s));
    }
    const int64_t stored = region_points(b.store_region);
    if (stored * point_bytes(g.funcs[f]) > params_.cache_bytes_per_core) {
      const double spilled = static_cast<double>(stored) * b.allocations;
      cost += params_.spill_cost_per_point * spilled / parallel_speedup(state, f, 0);
    }
  }
  return cost;
}

}  // namespace protuner
