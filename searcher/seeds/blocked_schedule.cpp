#include "searcher/seeds/blocked_schedule.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "common/pipeline/region.h"
#include "common/schedule/schedule_json.h"
#include "searcher/seeds/fallback_schedule.h"
#include "searcher/seeds/strip_schedule.h"

namespace protuner {
namespace {

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

// The stage 0 of f in cache tiles of `block`s, every loop outside them fused into one
// parallel loop, or nothing when it is not a pure 2-D-or-more stage a whole number of blocks
// long that has loops outside its tiles.
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
  t.tile[0] = bx;
  t.tile[1] = by * largest_divisor_at_most(ey / by, kInTileBlocksTall);
  // The other variables (a convolution's rows and batch) iterate outside the tiles, the
  // third kInTileDepth points at a time while the tiles stay enough tasks.
  for (int v = 2; v < stage.num_pure; ++v) t.tile[v] = 1;
  const auto tiles = [&] {
    int64_t n = 1;
    for (int v = 0; v < stage.num_pure; ++v) n *= ceil_div(loops[v].extent(), t.tile[v]);
    return n;
  };
  if (stage.num_pure > 2) {
    const int64_t tasks_needed = int64_t{kInTileTasksPerCore} * options.cores;
    for (int64_t depth = largest_divisor_at_most(loops[2].extent(), kInTileDepth); depth > 1;
         depth = largest_divisor_at_most(loops[2].extent(), depth - 1)) {
      t.tile[2] = depth;
      if (tiles() >= tasks_needed) break;
      t.tile[2] = 1;
    }
  }
  int outer = 0;
  for (int v = 0; v < stage.num_pure; ++v) outer += t.tile[v] < loops[v].extent() ? 1 : 0;
  if (outer == 0) return std::nullopt;
  t.parallel_loops = f.may_fuse_parallel_loops() ? outer : 1;
  return t;
}

// Whether `stage` of `node` accumulates into a block: a blockable reduction whose
// reduction variables index no dimension of the Func (every dimension is a pure variable),
// as a matrix multiply's or a convolution's sum does. A scan (iir_blur's, whose reduction
// walks down a column of the Func) is not: blocked per tile of a consumer it recomputes
// the whole scan per tile (iir_blur's such seeds would run many times slower than the
// fallback).
bool accumulates(const FuncNode &node, const StageNode &stage) {
  return blockable_reduction(stage) &&
         stage.num_pure == static_cast<int>(node.root_region.size());
}

// A box of `stage`'s loop variables over f's whole region, from the min of each variable v
// over points(v) of its points (all of them where points(v) is 0): where the footprints
// are probed for the shape of a block's reads.
template <typename Points>
Region probe_box(const FuncNode &f, const StageNode &stage, const Points &points) {
  Region box = stage.loop_region(f.root_region);
  for (size_t v = 0; v < box.size(); ++v) {
    const int64_t n = points(static_cast<int>(v));
    if (n > 0) box[v].max = std::min(box[v].max, box[v].min + n - 1);
  }
  return box;
}

// Whether a register block of `stage` shares some operand between its accumulators: at one
// reduction point, some Func it reads covers fewer points over an 8 x 8 block than the
// block has (a matrix multiply's A row and B column, a convolution's filter). Blocking pays
// for nothing else: nl_means' sum over its search window reads a weight and a pixel per
// output point, and block-in-tile seeds of it run slower than the fallback.
bool shares_operands(const PipelineGraph &g, const FuncNode &f, const StageNode &stage) {
  constexpr int64_t kProbe = 8;
  const Region block = probe_box(f, stage, [&](int v) {
    return v < 2 && v < stage.num_pure ? kProbe : 1;
  });
  const int64_t points = block[0].extent() * block[1].extent();
  for (const Footprint &fp : stage.footprints) {
    const int p = g.find(fp.producer());
    if (p < 0) continue;
    int64_t covered = 1;
    for (const Span &s : fp.eval(block, g.funcs[p].root_region)) covered *= s.extent();
    if (covered < points) return true;
  }
  return false;
}

// The reduction Funcs that decided Func f maps pointwise (f is their only consumer and
// reads them at the point it computes) and that accumulate into blocks sharing operands.
std::vector<int> pointwise_reductions(const ScheduleState &state, int f) {
  const PipelineGraph &g = state.graph();
  std::vector<int> out;
  for (int p : g.funcs[f].producers) {
    const FuncNode &node = g.funcs[p];
    const bool reduces =
        std::any_of(node.stages.begin(), node.stages.end(), [&](const StageNode &s) {
          return accumulates(node, s) && shares_operands(g, node, s);
        });
    if (reduces && node.consumers.size() == 1 && state.inline_footprint(p) == 1) {
      out.push_back(p);
    }
  }
  return out;
}

// Whether the update `stage` of `f` reads Func p as a panel: p's innermost dimension along
// the block's vectors (the stage's variable 0) and some other dimension along a reduction
// variable, so each reduction step loads a row of p as vectors (mat_mul's B, a
// convolution's filter). Probed on the footprint: one variable over its whole range, the
// others at one point.
bool reads_panel(const PipelineGraph &g, const FuncNode &f, const StageNode &stage, int p) {
  for (const Footprint &fp : stage.footprints) {
    if (g.find(fp.producer()) != p || fp.dimensions() < 2) continue;
    // The region of p read over the probe box of loop variable v.
    const auto read_over = [&](int v) {
      const Region r = probe_box(f, stage, [&](int u) { return u == v ? 0 : 1; });
      return fp.eval(r, g.funcs[p].root_region);
    };
    bool reduction_outer = false;
    for (int v = stage.num_pure; v < static_cast<int>(stage.loop_vars.size()); ++v) {
      const Region read = read_over(v);
      for (int dim = 1; dim < fp.dimensions(); ++dim) reduction_outer |= read[dim].extent() > 1;
    }
    if (reduction_outer && read_over(0)[0].extent() > 1) return true;
  }
  return false;
}

// The decision computing Func p at loop `at` of a consumer and storing it there, every stage
// in one tile over the region it computes there, with inner tiles of inner(v, tile) points
// per variable v.
template <typename Inner>
FuncDecision whole_at(const ScheduleState &state, int p, const LoopRef &at, const Inner &inner) {
  FuncDecision d;
  d.placement = Placement::kAt;
  d.compute_at = d.store_at = at;
  const Region region = state.region_at(p, at);
  for (const StageNode &stage : state.graph().funcs[p].stages) {
    const Region r = stage.loop_region(region);
    StageTiling t;
    for (int v = 0; v < stage.num_pure; ++v) {
      t.tile.push_back(std::max<int64_t>(1, r[v].extent()));
      t.inner.push_back(inner(v, t.tile.back()));
    }
    d.stages.push_back(t);
  }
  return d;
}

// The decision copying Func p per tile of a consumer (at its parallel loop `at`), vectorized
// along its innermost dimension: the panel the tile's blocks share, one dense block.
FuncDecision panel_copy(const ScheduleState &state, int p, const LoopRef &at,
                        const SearchSpaceOptions &options) {
  const int64_t lanes = native_lanes(state.graph().funcs[p], options);
  return whole_at(state, p, at, [&](int v, int64_t tile) {
    return v == 0 && tile % lanes == 0 ? lanes : int64_t{1};
  });
}

// The decision computing reduction Func p per block, at loop `at` of its consumer: every
// stage over the whole block, vectorized and unrolled (the accumulator in registers).
FuncDecision per_block(const ScheduleState &state, int p, const LoopRef &at) {
  return whole_at(state, p, at, [](int v, int64_t tile) { return v < 2 ? tile : int64_t{1}; });
}

// Where a tiled consumer computes Funcs inside its loops: reductions per block, panels per
// tile.
struct InTilePlacements {
  std::map<int, LoopRef> per_block;
  std::map<int, LoopRef> per_tile;
};

// Decides Func f, when some reduction it maps pointwise can be blocked in its tiles, with
// the `shape`-th best block of register_blocks (the last one when it has fewer): f at root
// in parallel tiles of blocks; records its reductions (at the block loop) and, with
// `panels`, their panels (at the parallel loop). False, with nothing decided, otherwise.
bool decide_tiled_consumer(ScheduleState &state, int f, int shape, bool panels,
                           const SearchSpaceOptions &options, InTilePlacements &placed) {
  const PipelineGraph &g = state.graph();
  const FuncNode &node = g.funcs[f];
  if (node.stages.size() != 1 || node.stages[0].num_pure < 2) return false;
  const Region loops = node.stages[0].loop_region(node.root_region);
  const std::vector<RegisterBlock> blocks =
      register_blocks(native_lanes(node, options), loops[0].extent(), loops[1].extent(),
                      vector_registers(options.vector_bits));
  if (blocks.empty()) return false;
  const std::optional<StageTiling> tiles =
      tiled_blocks(node, blocks[std::min<size_t>(shape, blocks.size() - 1)], options);
  if (!tiles) return false;
  ScheduleState trial = state;
  FuncDecision d;
  d.placement = Placement::kRoot;
  d.stages = {*tiles};
  if (!trial.check_decision(d).empty()) return false;
  trial.decide(std::move(d));
  const std::vector<int> reductions = pointwise_reductions(trial, f);
  // The block loop: the loop around the vectorized and unrolled block (a middle loop over
  // a tile's blocks, or the parallel loop when a tile is one block).
  const std::vector<Loop> &nest = trial.bounds(f).loops[0];
  int block_loop = -1;
  for (int l = 0; l < static_cast<int>(nest.size()); ++l) {
    if (nest[l].kind != LoopKind::kInner) block_loop = l;
  }
  if (reductions.empty() || block_loop < 0 || !nest[0].parallel) return false;
  state = std::move(trial);
  for (int r : reductions) {
    placed.per_block[r] = LoopRef{f, 0, block_loop};
    if (!panels) continue;
    const FuncNode &reducer = g.funcs[r];
    const StageNode &update =
        *std::find_if(reducer.stages.begin(), reducer.stages.end(),
                      [&](const StageNode &s) { return accumulates(reducer, s); });
    for (int p : reducer.producers) {
      if (g.funcs[p].stages.size() == 1 && reads_panel(g, reducer, update, p)) {
        placed.per_tile.emplace(p, LoopRef{f, 0, 0});
      }
    }
  }
  return true;
}

std::optional<ScheduleState> blocked_in_tile(std::shared_ptr<const PipelineGraph> graph,
                                             int shape, bool panels,
                                             const SearchSpaceOptions &options) {
  ScheduleState state(graph);
  InTilePlacements placed;
  bool blocked = false, copied = false;
  for (int f = 0; f < static_cast<int>(graph->funcs.size()); ++f) {
    const FuncNode &node = graph->funcs[f];
    // A placement the space refuses (a use outside the consumer's loop) falls through to
    // the seed's default for the Func.
    if (const auto at = placed.per_block.find(f); at != placed.per_block.end()) {
      FuncDecision d = per_block(state, f, at->second);
      if (state.check_decision(d).empty()) {
        state.decide(std::move(d));
        continue;
      }
    }
    if (const auto at = placed.per_tile.find(f); at != placed.per_tile.end()) {
      FuncDecision d = panel_copy(state, f, at->second, options);
      if (state.check_decision(d).empty()) {
        state.decide(std::move(d));
        copied = true;
        continue;
      }
    }
    if (decide_tiled_consumer(state, f, shape, panels, options, placed)) {
      blocked = true;
      continue;
    }
    std::optional<FuncDecision> inlined = inlined_if_seed_inlines(state, f);
    state.decide(inlined ? std::move(*inlined) : fallback_decision(node, options));
  }
  if (!blocked || (panels && !copied)) return std::nullopt;
  return state;
}

}  // namespace

std::vector<RegisterBlock> register_blocks(int64_t lanes, int64_t ex, int64_t ey,
                                           int vector_registers) {
  std::vector<RegisterBlock> blocks;
  for (int v = 1; v <= kMaxBlockVectors; ++v) {
    if (ex % (v * lanes) != 0) continue;
    // The most rows that divide ey with v x r + 2 registers.
    for (int r = (vector_registers - 2) / v; r >= 1; --r) {
      if (ey % r != 0) continue;
      if (v * r >= kMinAccumulators && v * r >= v + r) blocks.push_back({v, r});
      break;
    }
  }
  // Most multiply-adds per load first, then the wider block (fewer broadcasts).
  const auto per_load = [](const RegisterBlock &b) {
    return static_cast<double>(b.vectors * b.rows) / (b.vectors + b.rows);
  };
  std::stable_sort(blocks.begin(), blocks.end(),
                   [&](const RegisterBlock &a, const RegisterBlock &b) {
                     return per_load(a) != per_load(b) ? per_load(a) > per_load(b)
                                                       : a.vectors > b.vectors;
                   });
  if (blocks.size() > static_cast<size_t>(kInTileBlockShapes)) blocks.resize(kInTileBlockShapes);
  return blocks;
}

std::vector<ScheduleState> blocked_in_tile_schedules(std::shared_ptr<const PipelineGraph> graph,
                                                     const SearchSpaceOptions &options) {
  std::vector<ScheduleState> out;
  std::set<std::string> seen;  // a shape past every Func's last repeats the last
  for (int shape = 0; shape < kInTileBlockShapes; ++shape) {
    for (bool panels : {false, true}) {
      std::optional<ScheduleState> s = blocked_in_tile(graph, shape, panels, options);
      if (s && seen.insert(schedule_to_json(*s)).second) out.push_back(std::move(*s));
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
