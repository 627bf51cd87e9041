#include "common/schedule/loop_nest.h"

#include <algorithm>
#include <iterator>

#include "common/pipeline/pipeline_graph.h"
#include "common/pipeline/region.h"

namespace protuner {

VarSplit split_of(const StageNode &stage, const StageTiling &t, int var, int64_t extent) {
  VarSplit s;
  s.extent = std::max<int64_t>(extent, 1);
  s.tile = std::clamp<int64_t>(t.tile[var], 1, s.extent);
  s.inner = std::clamp<int64_t>(t.inner[var], 1, s.tile);
  s.has_outer = s.tile < s.extent;
  s.has_inner = s.inner > 1;
  // Without an inner loop the middle loop is the tile's loop (or the whole variable); an
  // inner loop always comes from a split, even over the whole extent, because Halide
  // vectorizes and unrolls only loops of constant extent. A one-point tile has no middle.
  s.has_middle = s.tile > s.inner || (!s.has_inner && s.tile > 1) || !s.has_outer;
  s.split_outer = s.has_outer && s.tile > 1;
  s.shifts_inwards = stage.shifts_tails;
  const std::string base = loop_base_name(stage, var);
  const bool split = s.split_outer || s.has_inner;
  s.outer_name = s.split_outer ? base + "_o" : base;
  s.middle_name = split ? base + "_m" : base;
  s.inner_name = base + "_i";
  return s;
}

bool reduction_order_matters(const StageNode &stage, const StageTiling &t,
                             const std::vector<int64_t> &extents) {
  if (!stage.reorderable_reduction()) return false;
  for (size_t v = 0; v < extents.size() && v < t.tile.size(); ++v) {
    if (split_of(stage, t, static_cast<int>(v), extents[v]).has_middle) return true;
  }
  return false;
}

bool reduction_in_bands(const StageNode &stage, const StageTiling &t) {
  return stage.rfactorable && stage.num_pure == 0 && t.parallel_loops == 1;
}

int64_t reduction_band_points(int64_t extent) {
  return ceil_div(std::max<int64_t>(extent, 1), kParallelReductionBands);
}

const char *unroll_reduction_refusal(const StageNode &stage, int parallel_loops,
                                     bool reduction_outside) {
  if (static_cast<int>(stage.loop_vars.size()) == stage.num_pure) return "it has no reduction";
  if (!stage.constant_reduction_extent) {
    return "its innermost reduction loop has an extent Halide learns at run time";
  }
  const int64_t extent = stage.rvar_region.front().extent();
  if (extent < 2 || extent > kMaxUnrolledReduction) {
    return "its innermost reduction loop has fewer than 2 points or more than "
           "kMaxUnrolledReduction";
  }
  if (reduction_outside) return "its reduction runs outside the middle loops";
  StageTiling bands;
  bands.parallel_loops = parallel_loops;
  if (reduction_in_bands(stage, bands)) return "its reduction runs in parallel bands";
  return nullptr;
}

const char *lane_reduction_refusal(const StageNode &stage, const StageTiling &t) {
  if (!stage.lane_rfactorable) {
    return "its update is not associative, or it has no pure variable to merge lanes into";
  }
  if (t.reduction_lanes < 2) return "a reduction in lanes needs 2 lanes or more";
  const int64_t extent = stage.rvar_region.front().extent();
  if (extent % t.reduction_lanes != 0 || extent < 2 * t.reduction_lanes) {
    return "its innermost reduction variable is no multiple of two vectors of lanes or more";
  }
  for (int64_t inner : t.inner) {
    if (inner > 1) return "it has an inner tile (the lanes are its block)";
  }
  if (t.unroll_reduction || t.reduction_outside) {
    return "its reduction is unrolled or runs outside the middle loops";
  }
  return nullptr;
}

LaneNames lane_names(const StageNode &stage) {
  const std::string &r = stage.loop_vars[stage.num_pure];
  std::string lane = loop_base_name(stage, 0) + "_" + r + "_lane";
  std::replace(lane.begin(), lane.end(), '$', '_');
  return {r + "_vectors", r + "_lanes", lane};
}

int64_t stage_block_points(const StageNode &stage, const StageTiling &t) {
  if (t.reduction_lanes > 0) return t.reduction_lanes;
  int64_t points = t.unroll_reduction ? stage.rvar_region.front().extent() : 1;
  for (int64_t n : t.inner) points *= n;
  return points;
}

std::string loop_base_name(const StageNode &stage, int var) {
  const std::string &v = stage.loop_vars[var];
  return stage.index == 0 || var >= stage.num_pure ? v : v + "_s" + std::to_string(stage.index);
}

std::vector<Loop> stage_loops(const StageNode &stage, const StageTiling &t,
                              const Region &loop_region) {
  const int n = stage.num_pure;
  std::vector<VarSplit> splits;
  splits.reserve(n);
  for (int v = 0; v < n; ++v) splits.push_back(split_of(stage, t, v, loop_region[v].extent()));

  std::vector<Loop> outer, middle, inner;
  for (int v = n - 1; v >= 0; --v) {
    const VarSplit &s = splits[v];
    const bool split = s.split_outer || s.has_inner;
    if (s.has_outer) {
      outer.push_back({s.outer_name, LoopKind::kOuter, {v}, ceil_div(s.extent, s.tile)});
      outer.back().has_tail = s.has_tail();
      outer.back().shifted_tail = s.shifts_tail();
      outer.back().split = split;
    }
    if (s.has_middle) {
      const int64_t ext = s.has_outer ? ceil_div(s.tile, s.inner) : ceil_div(s.extent, s.inner);
      middle.push_back({s.middle_name, LoopKind::kMiddle, {v}, ext});
      middle.back().has_tail = s.has_tail();
      middle.back().shifted_tail = s.shifts_tail();
      middle.back().split = split;
    }
    if (s.has_inner) {
      Loop l{s.inner_name, LoopKind::kInner, {v}, s.inner};
      l.vectorized = v == 0;
      l.unrolled = v != 0;
      l.has_tail = s.has_tail();
      l.shifted_tail = s.shifts_tail();
      l.split = split;
      inner.push_back(std::move(l));
    }
  }
  // The outermost parallel_loops outer loops become one fused parallel loop.
  const int fuse = std::min<int>(t.parallel_loops, static_cast<int>(outer.size()));
  // Built at every decision of every rollout: loops are moved, not copied.
  std::vector<Loop> loops;
  loops.reserve(outer.size() + middle.size() + inner.size() + stage.loop_vars.size() - n);
  if (fuse > 0) {
    Loop fused = std::move(outer[0]);
    for (int k = 1; k < fuse; ++k) {
      fused.name += "_" + outer[k].name;
      fused.vars.push_back(outer[k].vars[0]);
      fused.extent *= outer[k].extent;
      fused.has_tail = fused.has_tail || outer[k].has_tail;
      fused.shifted_tail = fused.shifted_tail || outer[k].shifted_tail;
      fused.split = fused.split || outer[k].split;
    }
    fused.parallel = true;
    loops.push_back(std::move(fused));
  }
  std::move(outer.begin() + fuse, outer.end(), std::back_inserter(loops));
  const bool bands = reduction_in_bands(stage, t);
  const int outermost = static_cast<int>(stage.loop_vars.size()) - 1;
  if (bands) {
    const int64_t extent = loop_region[outermost].extent();
    const int64_t points = reduction_band_points(extent);
    Loop band{stage.loop_vars[outermost] + "_band",
              LoopKind::kOuter,
              {outermost},
              ceil_div(extent, points)};
    band.parallel = true;
    band.split = true;
    band.has_tail = extent % points != 0;
    loops.push_back(std::move(band));
  }
  auto add_reduction = [&] {
    for (int r = outermost; r >= n; --r) {
      const int64_t extent = loop_region[r].extent();
      if (bands && r == outermost) {
        loops.push_back({stage.loop_vars[r] + "_in_band",
                         LoopKind::kReduction,
                         {r},
                         reduction_band_points(extent)});
      } else if (r == n && t.reduction_lanes > 0) {
        loops.push_back({lane_names(stage).outer, LoopKind::kReduction, {r},
                         ceil_div(extent, t.reduction_lanes)});
        loops.back().split = true;
      } else {
        loops.push_back({stage.loop_vars[r], LoopKind::kReduction, {r}, extent});
        loops.back().unrolled = r == n && t.unroll_reduction;
      }
    }
  };
  if (t.reduction_outside) add_reduction();
  std::move(middle.begin(), middle.end(), std::back_inserter(loops));
  if (!t.reduction_outside) add_reduction();
  std::move(inner.begin(), inner.end(), std::back_inserter(loops));
  if (t.reduction_lanes > 0) {
    Loop lanes{lane_names(stage).lane, LoopKind::kInner, {n}, t.reduction_lanes};
    lanes.vectorized = true;
    lanes.split = true;
    loops.push_back(std::move(lanes));
  }
  return loops;
}

Region iteration_region(const std::vector<Loop> &loops, int l, const StageTiling &t,
                        const StageNode &stage, const Region &loop_region) {
  Region r = loop_region;
  for (size_t v = 0; v < loop_region.size(); ++v) {
    const Loop *innermost = nullptr;
    for (int k = 0; k <= l && k < static_cast<int>(loops.size()); ++k) {
      for (int lv : loops[k].vars) {
        if (lv == static_cast<int>(v)) innermost = &loops[k];
      }
    }
    if (innermost == nullptr) continue;  // not iterated yet: the whole range
    const int64_t extent = loop_region[v].extent();
    int64_t covered = 1;
    if (static_cast<int>(v) < stage.num_pure) {
      const VarSplit s = split_of(stage, t, static_cast<int>(v), extent);
      if (innermost->kind == LoopKind::kOuter)
        covered = s.tile;
      else if (innermost->kind == LoopKind::kMiddle)
        covered = s.inner;
    } else if (innermost->kind == LoopKind::kOuter) {  // a band of a reduction in bands
      covered = reduction_band_points(extent);
    } else if (t.reduction_lanes > 0 && static_cast<int>(v) == stage.num_pure &&
               innermost->kind == LoopKind::kReduction) {  // a vector of lanes
      covered = t.reduction_lanes;
    }
    if (covered >= extent) continue;
    // A tile in the middle of the range, shifted inwards at the end like Halide's tails.
    const int64_t index = ceil_div(extent, covered) / 2;
    int64_t min = loop_region[v].min + index * covered;
    if (min + covered - 1 > loop_region[v].max) min = loop_region[v].max - covered + 1;
    r[v] = {min, min + covered - 1};
  }
  return r;
}

int64_t FuncBounds::points_computed() const {
  int64_t total = 0;
  for (int64_t p : stage_points) total += p;
  return total * realizations;
}

}  // namespace protuner
