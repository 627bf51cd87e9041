#include "common/schedule/schedule_directives.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <stdexcept>

namespace protuner {
namespace {

using Kind = Directive::Kind;

Directive at_directive(Kind kind, int func, const ScheduleState &state, const LoopRef &where) {
  const Loop &loop = state.bounds(where.func).loops[where.stage][where.loop];
  Directive d{kind, func};
  d.vars = {loop.name};
  d.target_func = where.func;
  d.target_is_rvar = loop.kind == LoopKind::kReduction;
  return d;
}

// The points f's rows are aligned to (align_storage of its innermost dimension), or 0 for
// none. Halide 14 miscompiles vector loads at a stride other than 1 from a buffer of
// constant size whose rows are no multiple of the vector, where unrolling makes the rows'
// offsets constants: it emits aligned loads at unaligned addresses, and the program dies
// (a 2x decimation's row of 33 points read by 16-lane vectors in 4 unrolled rows;
// AppliedSchedules.StridedVectorReadsOfUnrolledRowsStayAligned). Rows padded to a multiple
// of the reader's vector keep every row's loads aligned as Halide assumes.
int64_t aligned_row_points(const ScheduleState &state, int f) {
  const PipelineGraph &g = state.graph();
  const FuncNode &node = g.funcs[f];
  if (state.decision(f).placement != Placement::kAt || node.dimensions < 2) return 0;
  int64_t align = 0;
  for (int c : node.consumers) {
    if (c >= state.num_decided() || state.decision(c).placement == Placement::kInline) continue;
    for (size_t s = 0; s < g.funcs[c].stages.size(); ++s) {
      const std::vector<Loop> &loops = state.bounds(c).loops[s];
      const auto vector = std::find_if(loops.begin(), loops.end(),
                                       [](const Loop &l) { return l.vectorized; });
      const bool unrolled =
          std::any_of(loops.begin(), loops.end(), [](const Loop &l) { return l.unrolled; });
      if (vector == loops.end() || !unrolled || vector->vars.size() != 1) continue;
      for (const Access &a : g.funcs[c].stages[s].ops.accesses) {
        if (a.producer != node.name || a.affine.empty() || !a.affine[0]) continue;
        const double step = a.coefficients[0][static_cast<size_t>(vector->vars[0])];
        if (step != 0 && std::abs(step) != 1) align = std::max(align, vector->extent);
      }
    }
  }
  return align > 1 && state.bounds(f).store_region[0].extent() % align != 0 ? align : 0;
}

void placement_directives(const ScheduleState &state, int f, std::vector<Directive> &out) {
  const FuncDecision &d = state.decision(f);
  switch (d.placement) {
    case Placement::kInline:
      out.push_back({Kind::kComputeInline, f});
      return;
    case Placement::kRoot:
      out.push_back({Kind::kComputeRoot, f});
      return;
    case Placement::kAt:
      out.push_back(at_directive(Kind::kComputeAt, f, state, d.compute_at));
      if (d.store_at.is_root())
        out.push_back({Kind::kStoreRoot, f});
      else if (!(d.store_at == d.compute_at)) {
        out.push_back(at_directive(Kind::kStoreAt, f, state, d.store_at));
      }
      // Allocated once per iteration of a loop: small ones go on the stack
      // (kStackAllocationMaxBytes). At root it is one allocation, as big as it needs.
      if (!d.store_at.is_root() &&
          region_points(state.bounds(f).store_region) * value_bytes(state.graph().funcs[f]) <=
              kStackAllocationMaxBytes) {
        out.push_back({Kind::kStoreOnStack, f});
      }
      if (const int64_t points = aligned_row_points(state, f)) {
        Directive align{Kind::kAlignStorage, f, 0, {state.graph().funcs[f].args[0]}};
        align.factor = points;
        out.push_back(align);
      }
      return;
  }
}

// Splits every pure variable into the loops stage_loops() describes. A split guards its tail
// (GuardWithIf) unless it has none or its inner loop may round up: Halide's default tails
// compute past the region a consumer needs (ShiftInwards when the region is smaller than a
// tile, RoundUp in updates), and where that region reaches an input buffer without a
// boundary condition the reads go out of bounds. But guarded tiles have symbolic extents: a
// Func computed per tile gets a buffer of symbolic size, which LLVM cannot keep in
// registers (conv_layer's accumulator block inside GuardWithIf tiles of its ReLU runs
// about three times as long as inside ShiftInwards tiles, the expert's). So where the
// factor divides the variable's extent and every realization of the Func has the same
// extents (`exact`: a pure
// definition, realizations of one size, ScheduleState::same_size_realizations, no sliding
// window over its loops, computed inside whole tiles: whole_tiles), the split shifts
// inwards: at the sizes tuned for it computes what the guard would, and Halide knows the
// tiles are whole. (At an output smaller than a tile it would compute outside the buffer;
// Halide's bounds checks refuse that with an error.)
//
// An output's pure stage shifts a ragged last tile inwards whatever the factor
// (StageNode::shifts_tails): its region is the caller's buffer, which the tiles never
// leave, and the space keeps sliding windows off such loops (ScheduleState::store_options).
//
// Where a split's inner loop (vectorized or unrolled) may have a tail and computing the Func
// past its region in that dimension reads no input out of bounds (FuncNode::may_round_up)
// and the Func is computed inside a loop (where its tails repeat per realization; at root
// a tail comes once per row of the whole region), the split rounds up instead: the last block
// computes a few points nobody reads, in whole vectors, where a guard runs the tail as
// scalar code. nl_means' rows of patch sums are 70 points, 4 vectors of 16 and 6 scalars
// per row and search offset: rounded up, the same loop nest runs about a fifth faster.
// Only a split of the variable itself rounds up: Halide 14 refuses RoundUp for a split of
// a split's product in an update (a tile that is no multiple of the inner tile is split
// outer first: nl_means' blur_y.update in tiles of 776 with vectors of 16;
// AppliedSchedules.OnlyAVariableItselfRoundsUpInAnUpdate). Nor does a scatter's
// (StageNode::scatters): Halide 14 reads past its producers' regions in the extra points.
//
// Three loops are split inner tile first, then the rest into tiles of tile/inner inner
// tiles (the space's tiles are multiples of the inner tile). The same loops split outer
// first lose the tile's guard in Halide 14 when the region is a compile-time constant (a
// lookup table indexed by a uint8) and the inner loop is vectorized: the last tile stores
// past the allocation (AppliedSchedules.TheLastTileOfAConstantRegionStaysInsideItsBuffer).
void split_directives(const ScheduleState &state, const StageNode &stage, const StageTiling &t,
                      const Region &region, bool exact, int f, int s, std::vector<Directive> &out) {
  for (int v = 0; v < stage.num_pure; ++v) {
    const std::string name = loop_base_name(stage, v);
    if (name != stage.loop_vars[v])
      out.push_back({Kind::kRename, f, s, {stage.loop_vars[v], name}});
    const VarSplit vs = split_of(stage, t, v, region[v].extent());
    const bool round_up = inner_tail_rounds_up(state, f, stage, vs, v);
    // Splits `var`, of `extent` points per realization, by `factor`.
    auto split = [&](const std::string &var, const std::string &o, const std::string &i,
                     int64_t factor, int64_t extent) {
      Directive d{Kind::kSplit, f, s, {var, o, i}};
      d.factor = factor;
      if (stage.shifts_tails && extent % factor != 0) {
        d.tail = Tail::kShiftInwards;  // whole tiles, the last overlapping (VarSplit::shifts_tail)
      } else if (exact && extent % factor == 0) {
        d.tail = Tail::kShiftInwards;
      } else if (round_up && i == vs.inner_name) {
        d.tail = Tail::kRoundUp;
      }
      out.push_back(d);
    };
    if (vs.split_outer && vs.has_middle && vs.has_inner) {
      if (vs.tile % vs.inner == 0) {
        split(name, name + "_t", vs.inner_name, vs.inner, vs.extent);
        // Exact only when the first split was: its outer loop's extent is then whole.
        split(name + "_t", vs.outer_name, vs.middle_name, vs.tile / vs.inner,
              vs.extent % vs.inner == 0 ? vs.extent / vs.inner : 1);
      } else {  // only a hand-written schedule file has such tiles: no other way to split
        split(name, vs.outer_name, name + "_t", vs.tile, vs.extent);
        split(name + "_t", vs.middle_name, vs.inner_name, vs.inner,
              vs.extent % vs.tile == 0 ? vs.tile : 1);
      }
    } else if (vs.split_outer && vs.has_middle) {
      split(name, vs.outer_name, vs.middle_name, vs.tile, vs.extent);
    } else if (vs.split_outer && vs.has_inner) {
      split(name, vs.outer_name, vs.inner_name, vs.tile, vs.extent);
    } else if (vs.has_inner) {
      split(name, vs.middle_name, vs.inner_name, vs.inner, vs.extent);
    }
  }
}

}  // namespace

// Whether f's pure stage splits into whole tiles Halide can be told of (split_directives'
// `exact`). Inside tiles of a consumer that are guarded, the region f computes has the
// guard's symbolic extent, and Halide 14 bounds the input over those loops by interval
// arithmetic, losing how a tile's extent and position move together: iir_blur's column
// scan, computed per guarded tile of the transposed image, with its own columns shifted,
// requires its input at x = -896
// (AppliedSchedules.AFuncComputedPerGuardedTileDoesNotShiftInwards). So f shifts only
// inside a consumer stage that shifts too, and not where a window slides over its loops
// (ScheduleState::slides_in): Halide computes wrong values in that window when they shift
// inwards (the output split in two shifted halves of x, a scan computed per x and stored
// per row, differs at (0, 0, 0); AppliedSchedules.SplitsUnderASlidingWindowDoNotShiftInwards).
//
// Fused parallel loops lose the same correlation: Halide recovers all but the innermost
// fused variable by dividing the fused index by an extent it cannot prove positive, and
// bounds the region a Func computes per iteration by intervals whose min and max come
// from different iterations. A shifted split inside then reaches below the region: the
// same column scan computed per task of the transposed image's fused (column tile,
// channel) loop, shifting its 128-column tiles, requires its input at x = -896. A Func
// whose over-compute reads an input past its bounds
// (FuncNode::overcompute_reads_past_inputs) therefore guards its splits inside fused
// loops (AppliedSchedules.AnInputReaderInsideFusedLoopsDoesNotShiftInwards); others still
// shift, where the loose bound costs only some recompute of clamped reads.
bool whole_tiles(const ScheduleState &state, int f) {
  if (!state.same_size_realizations(f) || state.slides_in(f)) return false;
  const FuncDecision &d = state.decision(f);
  if (d.placement != Placement::kAt) return true;
  if (state.graph().funcs[f].overcompute_reads_past_inputs) {
    for (const LoopRef &ref : state.enclosing_loops(d.compute_at)) {
      const Loop &l = state.bounds(ref.func).loops[ref.stage][ref.loop];
      if (l.fused_parallel()) return false;
    }
  }
  return d.compute_at.stage == 0 && whole_tiles(state, d.compute_at.func);
}

namespace {

void stage_directives(const ScheduleState &state, int f, int s, std::vector<Directive> &out) {
  const FuncNode &node = state.graph().funcs[f];
  const StageNode &stage = node.stages[s];
  const StageTiling &t = state.decision(f).stages[s];
  const Region region = stage.loop_region(state.bounds(f).region);
  const bool exact = s == 0 && whole_tiles(state, f);
  const std::vector<Loop> &final_loops = state.bounds(f).loops[s];
  if (t.reduction_lanes > 0) {
    // First, so the stage the later directives schedule is the merge of the lanes. The
    // partial reductions go in the innermost loop around the reduction loops.
    const auto first_reduction =
        std::find_if(final_loops.begin(), final_loops.end(),
                     [](const Loop &l) { return l.kind == LoopKind::kReduction; });
    const LaneNames names = lane_names(stage);
    Directive lanes{Kind::kRfactorLanes,
                    f,
                    s,
                    {stage.loop_vars[stage.num_pure], names.outer, names.inner, names.lane,
                     std::prev(first_reduction)->name}};
    lanes.factor = t.reduction_lanes;
    out.push_back(lanes);
  }
  split_directives(state, stage, t, region, exact, f, s, out);

  // Reorder every loop, innermost first, before fusing: fuse needs its two loops adjacent.
  StageTiling unfused = t;
  unfused.parallel_loops = 0;
  std::vector<Loop> loops = stage_loops(stage, unfused, region);
  if (t.reduction_lanes > 0) {
    // The merge of the lanes has only the pure loops and the lanes (innermost, as they are).
    loops.erase(std::find_if(loops.begin(), loops.end(),
                             [](const Loop &l) { return l.kind == LoopKind::kReduction; }),
                loops.end());
  }
  // The parallel loop, if any, is the outermost: the first vars.size() loops, fused.
  const Loop *parallel =
      !final_loops.empty() && final_loops[0].parallel ? &final_loops[0] : nullptr;
  if (parallel) {
    // A variable's own loop (a one-point tile) goes innermost among the fused loops. Fused
    // outside another variable's outer loop, Halide 14 recovers it by dividing the fused
    // index by that loop's extent, and where the extent is a nested split's (outer, middle
    // and inner loops) it cannot prove the divisor positive: the bound it infers reaches
    // below the variable's min by the fused extent, and iir_blur's scans read channel -23
    // of its input (AppliedSchedules.AVariablesOwnLoopFusesInsideTheOtherFusedLoops). The
    // fused loop is parallel, so the order of its iterations is free.
    std::stable_partition(loops.begin(), loops.begin() + parallel->vars.size(),
                          [](const Loop &l) { return l.split; });
  }
  Directive reorder{Kind::kReorder, f, s};
  for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
    reorder.vars.push_back(it->name);
    reorder.is_rvar.push_back(it->kind == LoopKind::kReduction);
  }
  if (loops.size() > 1) out.push_back(reorder);

  if (reduction_in_bands(stage, t)) {
    // final_loops: the band loop, then the reduction loops, the outermost one's in a band.
    const std::string &rvar = stage.loop_vars.back();
    Directive bands{
        Kind::kRfactorBands, f, s, {rvar, rvar + "_o", final_loops[1].name, final_loops[0].name}};
    bands.factor = reduction_band_points(region.back().extent());
    out.push_back(bands);
    return;
  }

  if (parallel) {
    // The fused loop keeps the name the bounds give it, which compute_at directives use.
    std::string fused = loops[0].name;
    for (size_t k = 1; k < parallel->vars.size(); ++k) {
      const std::string next =
          k + 1 == parallel->vars.size() ? parallel->name : fused + "_" + loops[k].name;
      out.push_back({Kind::kFuse, f, s, {loops[k].name, fused, next}});
      fused = next;
    }
    out.push_back({Kind::kParallel, f, s, {fused}});
  }
  for (const Loop &l : final_loops) {
    if (l.vectorized && t.reduction_lanes > 0 && l.kind == LoopKind::kInner) continue;  // done
    if (l.vectorized) out.push_back({Kind::kVectorize, f, s, {l.name}});
    if (l.unrolled) {
      out.push_back({Kind::kUnroll, f, s, {l.name}});
      out.back().target_is_rvar = l.kind == LoopKind::kReduction;
    }
  }
}

}  // namespace

bool inner_tail_rounds_up(const ScheduleState &state, int f, const StageNode &stage,
                          const VarSplit &vs, int v) {
  // A tile that is no multiple of the inner tile is split outer first (split_directives):
  // the inner split then divides a split's product.
  const bool splits_a_product =
      vs.split_outer && vs.has_middle && vs.has_inner && vs.tile % vs.inner != 0;
  return state.decision(f).placement == Placement::kAt && vs.has_inner && !splits_a_product &&
         !stage.scatters && vs.inner <= kRoundUpMaxPoints &&
         state.graph().funcs[f].may_round_up(stage.pure_dims[v]);
}

std::vector<Directive> schedule_directives(const ScheduleState &state) {
  if (!state.complete()) throw std::invalid_argument("schedule_directives: incomplete state");
  std::vector<Directive> out;
  for (int f = 0; f < state.num_decided(); ++f) {
    placement_directives(state, f, out);
    if (state.decision(f).placement == Placement::kInline) continue;
    for (size_t s = 0; s < state.graph().funcs[f].stages.size(); ++s) {
      stage_directives(state, f, static_cast<int>(s), out);
    }
  }
  return out;
}

}  // namespace protuner
