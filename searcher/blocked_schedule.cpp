#include "searcher/blocked_schedule.h"

#include <algorithm>
#include <optional>

#include "searcher/fallback_schedule.h"
#include "searcher/strip_schedule.h"

namespace protuner {
namespace {

int64_t round_up(int64_t a, int64_t b) { return (a + b - 1) / b * b; }

int64_t largest_divisor_at_most(int64_t n, int64_t limit) {
  for (int64_t d = std::min(n, limit); d > 1; --d) {
    if (n % d == 0) return d;
  }
  return 1;
}

// Whether `stage` is what a register block accumulates: an update with reduction
// variables over two pure variables or more.
bool blockable_reduction(const StageNode &stage) {
  return stage.index > 0 && stage.num_pure >= 2 &&
         static_cast<int>(stage.loop_vars.size()) > stage.num_pure;
}

// Every pure variable of a stage over `loops` whole, but the first two, whose inner tile is
// a bx x by block (their tiles are the caller's to set).
StageTiling block_of(const Region &loops, int num_pure, int64_t bx, int64_t by) {
  StageTiling t;
  for (int v = 0; v < num_pure; ++v) {
    t.tile.push_back(std::max<int64_t>(1, loops[v].extent()));
    t.inner.push_back(v == 0 ? bx : v == 1 ? by : 1);
  }
  return t;
}

// The update `stage` of f register-blocked with `block`, or nothing when it is not a
// blockable reduction or is shorter than a block.
std::optional<StageTiling> blocked_tiling(const FuncNode &f, const StageNode &stage,
                                          const RegisterBlock &block,
                                          const SearchSpaceOptions &options) {
  if (!blockable_reduction(stage)) return std::nullopt;
  const Region loops = stage.loop_region(f.root_region);
  const int64_t bx = native_lanes(f, options) * block.vectors, by = block.rows;
  const int64_t ex = loops[0].extent(), ey = loops[1].extent();
  if (ex < bx || ey < by) return std::nullopt;
  StageTiling t = block_of(loops, stage.num_pure, bx, by);
  t.tile[0] = std::min(round_up(ex, bx), bx * kTileBlocksInner);
  t.tile[1] = std::min(round_up(ey, by), by * kTileBlocksRows);
  // Every outer loop (the cache tiles) fused into one parallel loop, where it may fuse.
  t.parallel_loops = (t.tile[0] < ex ? 1 : 0) + (t.tile[1] < ey ? 1 : 0);
  if (!f.may_fuse_parallel_loops()) t.parallel_loops = std::min(t.parallel_loops, 1);
  return t;
}

// The output's stage 0 in parallel cache tiles of `block`s, or nothing when it is not a
// pure 2-D-or-more stage at least a block long.
std::optional<StageTiling> tiled_blocks(const FuncNode &f, const RegisterBlock &block,
                                        const SearchSpaceOptions &options) {
  const StageNode &stage = f.stages[0];
  if (f.stages.size() != 1 || stage.num_pure < 2) return std::nullopt;
  const Region loops = stage.loop_region(f.root_region);
  const int64_t bx = native_lanes(f, options) * block.vectors, by = block.rows;
  const int64_t ex = loops[0].extent(), ey = loops[1].extent();
  // Blocks and tiles divide the output: a reduction computed inside a partial last tile is
  // computed for the whole tile, and a convolution's would read its input past the end
  // (ScheduleState refuses that placement).
  if (ex % bx != 0 || ey % by != 0) return std::nullopt;
  StageTiling t = block_of(loops, stage.num_pure, bx, by);
  t.tile[0] = bx * largest_divisor_at_most(ex / bx, kTileBlocksInner);
  t.tile[1] = by * largest_divisor_at_most(ey / by, kTileBlocksRows);
  // Only the outermost tile loop runs in parallel: nothing may be computed inside fused
  // loops (a Halide 14 bounds bug, ScheduleState's inside_fused_loop rule).
  if (t.tile[0] >= ex && t.tile[1] >= ey) return std::nullopt;
  t.parallel_loops = 1;
  return t;
}

// The reduction Func the output maps pointwise (its only consumer is the output, which
// reads it at the point it computes), or -1.
int pointwise_reduction(const ScheduleState &state) {
  const PipelineGraph &g = state.graph();
  for (int p : g.funcs[0].producers) {
    const FuncNode &node = g.funcs[p];
    const bool reduces =
        std::any_of(node.stages.begin(), node.stages.end(), blockable_reduction);
    if (reduces && node.consumers.size() == 1 && state.inline_footprint(p) == 1) return p;
  }
  return -1;
}

std::optional<ScheduleState> blocked_in_tile(std::shared_ptr<const PipelineGraph> graph,
                                             const RegisterBlock &block,
                                             const SearchSpaceOptions &options) {
  const FuncNode &owner = graph->funcs[0];
  if (!owner.is_output) return std::nullopt;
  const std::optional<StageTiling> tiles = tiled_blocks(owner, block, options);
  if (!tiles) return std::nullopt;
  ScheduleState state(graph);
  FuncDecision out;
  out.placement = Placement::kRoot;
  out.stages = {*tiles};
  if (!state.check_decision(out).empty()) return std::nullopt;
  state.decide(std::move(out));
  const int reduction = pointwise_reduction(state);
  // The block loop: the innermost middle loop, around the vectorized and unrolled block.
  const std::vector<Loop> &loops = state.bounds(0).loops[0];
  int block_loop = -1;
  for (int l = 0; l < static_cast<int>(loops.size()); ++l) {
    if (loops[l].kind == LoopKind::kMiddle) block_loop = l;
  }
  if (reduction < 0 || block_loop < 0) return std::nullopt;

  for (int f = 1; f < static_cast<int>(graph->funcs.size()); ++f) {
    const FuncNode &node = graph->funcs[f];
    if (f == reduction) {
      FuncDecision d;
      d.placement = Placement::kAt;
      d.compute_at = d.store_at = LoopRef{0, 0, block_loop};
      const Region region = state.region_at(f, d.compute_at);
      for (const StageNode &stage : node.stages) {
        const Region r = stage.loop_region(region);
        StageTiling t;
        for (int v = 0; v < stage.num_pure; ++v) {
          t.tile.push_back(std::max<int64_t>(1, r[v].extent()));
          t.inner.push_back(v < 2 ? t.tile.back() : 1);  // the whole block, in registers
        }
        d.stages.push_back(t);
      }
      if (!state.check_decision(d).empty()) return std::nullopt;
      state.decide(std::move(d));
      continue;
    }
    FuncDecision inlined;
    inlined.placement = Placement::kInline;
    if (seed_inlines(state, f) && state.check_decision(inlined).empty()) {
      state.decide(std::move(inlined));
    } else {
      state.decide(fallback_decision(node, options));
    }
  }
  return state;
}

}  // namespace

std::vector<ScheduleState> blocked_in_tile_schedules(std::shared_ptr<const PipelineGraph> graph,
                                                     const SearchSpaceOptions &options) {
  std::vector<ScheduleState> out;
  for (const RegisterBlock &block : kRegisterBlocks) {
    if (std::optional<ScheduleState> s = blocked_in_tile(graph, block, options)) {
      out.push_back(std::move(*s));
    }
  }
  return out;
}

std::vector<ScheduleState> blocked_schedules(std::shared_ptr<const PipelineGraph> graph,
                                             const SearchSpaceOptions &options) {
  const ScheduleState fallback = fallback_schedule(graph, options);
  std::vector<ScheduleState> out;
  for (const RegisterBlock &block : kRegisterBlocks) {
    ScheduleState state(graph);
    bool blocked = false;
    for (int f = 0; f < static_cast<int>(graph->funcs.size()); ++f) {
      const FuncNode &node = graph->funcs[f];
      FuncDecision d = fallback.decision(f);
      FuncDecision candidate = d;
      for (size_t s = 0; s < node.stages.size(); ++s) {
        if (auto t = blocked_tiling(node, node.stages[s], block, options)) candidate.stages[s] = *t;
      }
      if (!(candidate == d) && state.check_decision(candidate).empty()) {
        d = std::move(candidate);
        blocked = true;
      }
      state.decide(std::move(d));
    }
    if (blocked) out.push_back(std::move(state));
  }
  return out;
}

}  // namespace protuner
