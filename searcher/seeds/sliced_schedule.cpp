#include "searcher/seeds/sliced_schedule.h"

#include <algorithm>
#include <optional>

#include "common/pipeline/region.h"
#include "searcher/seeds/fallback_schedule.h"
#include "searcher/seeds/strip_schedule.h"

namespace protuner {
namespace {

// The output f in parallel tiles of `tile` over its first two pure variables, the others
// whole, the innermost vectorized; nothing when f is not one stage over two pure variables
// or more, or is a single tile.
std::optional<FuncDecision> in_tiles(const FuncNode &f, const SliceShape &tile,
                                     const SearchSpaceOptions &options) {
  if (f.stages.size() != 1 || f.stages[0].num_pure < 2) return std::nullopt;
  const StageNode &stage = f.stages[0];
  const Region loops = stage.loop_region(f.root_region);
  const int64_t lanes = native_lanes(f, options);
  StageTiling t;
  int outer = 0;
  for (int v = 0; v < stage.num_pure; ++v) {
    const int64_t extent = std::max<int64_t>(1, loops[v].extent());
    const int64_t inner = v == 0 && extent >= lanes ? lanes : 1;
    const int64_t wanted = v == 0 ? tile.columns : v == 1 ? tile.rows : extent;
    t.inner.push_back(inner);
    t.tile.push_back(std::min(round_up(wanted, inner), round_up(extent, inner)));
    outer += t.tile.back() < extent ? 1 : 0;
  }
  if (outer == 0) return std::nullopt;
  t.parallel_loops = f.may_fuse_parallel_loops() ? outer : 1;
  FuncDecision d;
  d.placement = Placement::kRoot;
  d.stages = {t};
  return d;
}

// Whether some update of f is a sum per point: reduction variables, and a pure variable
// for every dimension of f (not a scan or a histogram).
bool sums_per_point(const FuncNode &f) {
  return std::any_of(f.stages.begin(), f.stages.end(), [&](const StageNode &s) {
    return s.index > 0 && !s.rvar_region.empty() &&
           s.num_pure == static_cast<int>(f.root_region.size());
  });
}

// Func f (the next of `state`) computed per iteration of `at` in `shape`'s order: the
// reduction loops of every update outside the pixels, or around row segments of
// shape.row_vectors vectors. Nothing when that is not legal.
std::optional<FuncDecision> reduction_per_tile(const ScheduleState &state, int f,
                                               const LoopRef &at, const SliceShape &shape,
                                               const SearchSpaceOptions &options) {
  std::optional<FuncDecision> d = per_iteration(state, f, at, options);
  if (!d) return std::nullopt;
  const FuncNode &node = state.graph().funcs[f];
  const int64_t segment = native_lanes(node, options) * shape.row_vectors;
  for (size_t s = 0; s < node.stages.size(); ++s) {
    if (node.stages[s].rvar_region.empty()) continue;
    StageTiling &t = d->stages[s];
    if (segment == 0) {
      t.reduction_outside = true;
    } else if (t.tile[0] % segment == 0) {
      t.inner[0] = segment;
    } else {
      return std::nullopt;
    }
  }
  if (!state.check_decision(*d).empty()) return std::nullopt;
  return d;
}

// The innermost reduction loop of decided Func f's last update with one, if any.
std::optional<LoopRef> innermost_reduction_loop(const ScheduleState &state, int f) {
  const std::vector<std::vector<Loop>> &stages = state.bounds(f).loops;
  for (int s = static_cast<int>(stages.size()) - 1; s >= 0; --s) {
    for (int l = static_cast<int>(stages[s].size()) - 1; l >= 0; --l) {
      if (stages[s][l].kind == LoopKind::kReduction) return LoopRef{f, s, l};
    }
  }
  return std::nullopt;
}

std::optional<ScheduleState> sliced_reduction(std::shared_ptr<const PipelineGraph> graph,
                                              const SliceShape &shape,
                                              const SearchSpaceOptions &options) {
  ScheduleState state(graph);
  std::optional<FuncDecision> out = in_tiles(graph->funcs[0], shape, options);
  if (!out || !state.check_decision(*out).empty()) return std::nullopt;
  state.decide(std::move(*out));
  const LoopRef tile_loop{0, 0, 0};  // the fused parallel loop over the tiles
  std::optional<LoopRef> slice;      // the reduction's innermost loop, once decided
  std::optional<LoopRef> rows;       // the loop over the tile's rows around it, if any
  bool sliced = false;               // some Func is computed at the slice loop
  for (int f = 1; f < static_cast<int>(graph->funcs.size()); ++f) {
    const FuncNode &node = graph->funcs[f];
    std::optional<FuncDecision> d = inlined_if_seed_inlines(state, f);
    if (!d && !slice && !node.is_output && sums_per_point(node)) {
      d = reduction_per_tile(state, f, tile_loop, shape, options);
      if (d) {
        state.decide(std::move(*d));
        slice = innermost_reduction_loop(state, f);
        if (slice && state.bounds(f).loops[slice->stage][0].kind == LoopKind::kMiddle) {
          rows = LoopRef{f, slice->stage, 0};
        }
        continue;
      }
    }
    if (!d && slice && !node.is_output) {
      d = per_iteration(state, f, *slice, options);
      sliced = sliced || d.has_value();
    }
    if (!d && rows && !node.is_output) d = per_iteration(state, f, *rows, options, tile_loop);
    if (!d && !node.is_output) d = per_iteration(state, f, tile_loop, options);
    state.decide(d ? std::move(*d) : fallback_decision(node, options));
  }
  if (!sliced) return std::nullopt;
  return state;
}

}  // namespace

std::vector<ScheduleState> sliced_reduction_schedules(std::shared_ptr<const PipelineGraph> graph,
                                                      const SearchSpaceOptions &options) {
  std::vector<ScheduleState> out;
  if (graph->funcs.empty() || !graph->funcs[0].is_output) return out;
  for (const SliceShape &shape : kSliceShapes) {
    if (std::optional<ScheduleState> s = sliced_reduction(graph, shape, options)) {
      out.push_back(std::move(*s));
    }
  }
  return out;
}

}  // namespace protuner
