// The loops a decided stage runs, and the bounds of a state: for every decided Func, the
// region one realization computes, how often it is computed, and where it is stored. This
// is what featurization, cost models and pruning read; tests check it against the regions
// and realization counts Halide itself produces for the same schedule.
#pragma once

#include <string>
#include <vector>

#include "common/pipeline/region.h"
#include "common/schedule/schedule.h"

namespace protuner {

struct StageNode;

// How one pure variable of a stage is split: the tiling clamped to the variable's extent,
// which of its outer, middle and inner loops exist, and their names. stage_loops() and the
// directives that realize the loops in Halide both read it, so the two cannot disagree.
struct VarSplit {
  int64_t extent, tile, inner;
  bool has_outer, has_middle, has_inner;
  // A tile of one point needs no split: the variable's own loop is the outer loop.
  // (Halide 14 also infers wrong bounds for a split by 1: it reads past its inputs.)
  bool split_outer;
  // The stage shifts its last tiles inwards (StageNode::shifts_tails).
  bool shifts_inwards;
  std::string outer_name, middle_name, inner_name;

  // Whether the tiles do not divide the extent, so that the last one is ragged.
  bool ragged() const {
    return (has_outer && extent % tile != 0) || (has_inner && extent % inner != 0) ||
           (has_outer && has_inner && tile % inner != 0);
  }
  // Whether some split of the variable leaves a partial last tile. Its loops then run past
  // the extent there: the splits guard the Func's own points, but Halide 14 computes a
  // producer computed inside such a tile for the whole tile.
  bool has_tail() const { return ragged() && !shifts_inwards; }
  // Whether a ragged last tile is shifted inwards instead: whole, overlapping the one before.
  bool shifts_tail() const { return ragged() && shifts_inwards; }
};
VarSplit split_of(const StageNode &stage, const StageTiling &t, int var, int64_t extent);

// Whether StageTiling::reduction_outside changes the loop nest of `stage` tiled by `t` over
// `extents` (one per pure variable): the stage has a reduction and some pure variable a
// middle loop (a tile of more than one inner block) to move it outside of.
bool reduction_order_matters(const StageNode &stage, const StageTiling &t,
                             const std::vector<int64_t> &extents);

enum class LoopKind : uint8_t { kOuter, kMiddle, kReduction, kInner };

struct Loop {
  std::string name;  // the Halide loop variable after splitting and fusing
  LoopKind kind;
  std::vector<int> vars;  // stage loop variables it iterates (several when fused)
  int64_t extent = 1;
  bool parallel = false;
  bool vectorized = false;
  bool unrolled = false;
  bool has_tail = false;  // a variable it iterates has a partial last tile (VarSplit::has_tail)
  // A variable it iterates has a ragged last tile shifted inwards (VarSplit::shifts_tail).
  bool shifted_tail = false;
  // A variable it iterates is split (tiles of more than one point): a realization over a
  // smaller region than the typical one (at a clamped edge, in a consumer's last tile)
  // can leave a partial last tile even where has_tail is false.
  bool split = false;

  // Whether it fuses several variables into one parallel loop: Halide 14 recovers each
  // from the fused index by dividing by extents it cannot prove positive, so it bounds
  // what is computed inside loosely.
  bool fused_parallel() const { return parallel && vars.size() > 1; }
};

// A stage whose reduction runs in parallel bands (StageNode::rfactorable, tiled with
// parallel_loops = 1) splits its outermost reduction variable into bands of
// ceil(extent / kParallelReductionBands) points, so at most this many bands: Halide's
// rfactor makes each band a partial reduction of its own, the bands run in parallel, and
// the stage then merges the partials. Enough bands to balance 16 cores; the merge adds a
// read per band per point of the Func, which the cost models do not count (a histogram's
// 256 bins: 8192 adds against millions of points reduced).
inline constexpr int64_t kParallelReductionBands = 32;

// Whether tiling `t` runs `stage`'s reduction in parallel bands.
bool reduction_in_bands(const StageNode &stage, const StageTiling &t);
// The points of the outermost reduction variable, of `extent` in all, one band covers.
int64_t reduction_band_points(int64_t extent);

// The most points an unrolled reduction loop may have (StageTiling::unroll_reduction): a
// FIR filter's 16 taps, a 5x5 stencil's rows. The whole reduction over an inner tile is
// then one block of straight-line code, which the space's code-size rule (rule 7,
// SearchSpaceOptions::max_block_lane_ops) also bounds.
inline constexpr int64_t kMaxUnrolledReduction = 16;

// Why `stage` cannot unroll its innermost reduction loop with `parallel_loops` and
// `reduction_outside` as a tiling gives them, or nullptr: it has no reduction loop, its
// extent is not a constant of the algorithm or exceeds kMaxUnrolledReduction, or its
// reduction runs outside the middle loops (an unrolled loop would copy them) or in
// parallel bands.
const char *unroll_reduction_refusal(const StageNode &stage, int parallel_loops,
                                     bool reduction_outside);
// Why `stage` cannot run its reduction in `t.reduction_lanes` vector lanes, or nullptr: its
// update is not associative or has no pure variable (StageNode::lane_rfactorable), the
// lanes are fewer than 2, its innermost reduction variable is not a multiple of the lanes
// or spans fewer than two vectors of them, it has an inner tile (the lanes are its block),
// or its reduction is unrolled or runs outside the middle loops.
const char *lane_reduction_refusal(const StageNode &stage, const StageTiling &t);

// The names of the loops and Func a reduction in lanes makes of `stage`'s innermost
// reduction variable: its split into vectors (`outer`, an RVar) and lanes (`inner`, the
// RVar rfactored into the pure variable `lane` of the partial reductions).
struct LaneNames {
  std::string outer, inner, lane;
};
LaneNames lane_names(const StageNode &stage);

// The points of the stage's innermost block (its vectorized and unrolled loops) under `t`:
// the inner tiles' product, times the reduction loop's extent when `t` unrolls it, or the
// lanes of a reduction in lanes. What the space's code-size rules count.
int64_t stage_block_points(const StageNode &stage, const StageTiling &t);

// The name a pure variable's loops are built from. Update stages rename their pure
// variables ("y" -> "y_s1") so every loop of a Func has its own name: Halide 14 resolves
// compute_at(f, var) by name across all of f's stages (an explicit stage index is refused
// by its legality check), so a name shared by two stages would be ambiguous.
std::string loop_base_name(const StageNode &stage, int var);

// The loops of `stage` with tiling `t` over `loop_region` (StageNode::loop_region of the
// Func's region), outermost first. Loops of extent 1 that no split creates are kept, so
// every stage variable has at least one loop. A reduction in bands has the band loop
// outermost (parallel, of kind kOuter, iterating the outermost reduction variable), then
// the reduction loops, the outermost one over one band. A reduction in lanes has its
// innermost reduction loop over vectors of lanes (LaneNames::outer) and, innermost, a
// vectorized loop over the lanes (LaneNames::lane): the loops its partial reductions run.
std::vector<Loop> stage_loops(const StageNode &stage, const StageTiling &t,
                              const Region &loop_region);

// The region of the stage's loop variables covered by one iteration of loops[0..l]: a
// typical iteration, away from the edges (footprints at the edges can be clamped smaller).
Region iteration_region(const std::vector<Loop> &loops, int l, const StageTiling &t,
                        const StageNode &stage, const Region &loop_region);

// Bounds of one decided Func.
struct FuncBounds {
  bool inlined = false;
  Region region;             // computed per realization
  int64_t realizations = 1;  // times it is computed
  Region store_region;       // allocated per allocation
  int64_t allocations = 1;
  bool inside_parallel = false;          // computed inside a parallel loop
  std::vector<std::vector<Loop>> loops;  // per stage
  std::vector<int64_t> stage_points;     // loop iterations per realization, per stage

  // Every point of every stage over all realizations: the work, recompute included.
  int64_t points_computed() const;
};

}  // namespace protuner
