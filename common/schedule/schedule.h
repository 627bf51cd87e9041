// The decisions a schedule is made of: ProTuner's MDP actions. Funcs are decided one at a
// time, consumers first (PipelineGraph order). A decision places a Func (inline, at root, or
// at a loop of an already decided consumer, with its storage at that loop or further out)
// and tiles each of its stages. The loop nest of a stage follows from its tiling and the
// region it computes (loop_nest.h); the state is in schedule_state.h. Nothing here knows
// Halide.
#pragma once

#include <cstdint>
#include <vector>

namespace protuner {

// How one stage's loops are tiled. Per pure variable v (StageNode::loop_vars order,
// innermost first): the loop over v is split into an outer loop over tiles of tile[v]
// points, a middle loop, and an inner loop of inner[v] points (1 <= inner <= tile).
// A tile covering the whole extent means no outer loop; inner == 1 means no inner loop.
// Loop order, outermost first: outer loops, middle loops, reduction loops, inner loops, so
// for an update the inner tile is a register block with the reduction around it. The inner
// loop of variable 0 (the innermost storage dimension) is vectorized, the other inner loops
// are unrolled: the inner tile exists to be vector registers.
// With reduction_outside, an update's reduction loops run outside its middle loops (outer,
// reduction, middle, inner): each reduction point sweeps the whole tile, so a producer
// computed at a reduction loop makes one slice of its values per reduction point over a
// tile (nl_means' expert computes its per-offset patch distances so), and an accumulator
// tile larger than the registers stays in cache across the reduction.
// With unroll_reduction, an update's innermost reduction loop (of a constant extent,
// StageNode::constant_reduction_extent), right outside the inner tile, is unrolled too: the
// block is then the whole reduction over an inner tile, its accumulators in registers from
// the first tap to the last and its loads shared between taps where they overlap (a FIR
// filter as experts write it).
// With reduction_lanes = L (an update with pure variables, no inner tile, whose update is
// associative: StageNode::lane_rfactorable), its innermost reduction variable is split by
// L and rfactored into L partial reductions, a vector of them computed per innermost pure
// loop iteration, then merged: the reduction runs in vector lanes, a vector of accumulators
// in one register (image_stats' expert computes its per-plane sums so).
struct StageTiling {
  std::vector<int64_t> tile;
  std::vector<int64_t> inner;
  int parallel_loops = 0;  // outermost outer loops fused into one parallel loop (0: serial)
  bool reduction_outside = false;
  bool unroll_reduction = false;
  int reduction_lanes = 0;  // 0: the reduction does not run in lanes

  bool operator==(const StageTiling &o) const {
    return tile == o.tile && inner == o.inner && parallel_loops == o.parallel_loops &&
           reduction_outside == o.reduction_outside && unroll_reduction == o.unroll_reduction &&
           reduction_lanes == o.reduction_lanes;
  }
};

// A loop of a decided stage: (Func index, stage index, index into that stage's loop list,
// outermost first). func == -1 means root, outside every loop.
struct LoopRef {
  int func = -1;
  int stage = 0;
  int loop = 0;

  bool is_root() const { return func < 0; }
  bool operator==(const LoopRef &o) const {
    return func == o.func && (func < 0 || (stage == o.stage && loop == o.loop));
  }
};

enum class Placement : uint8_t { kInline, kRoot, kAt };

struct FuncDecision {
  Placement placement = Placement::kRoot;
  LoopRef compute_at;  // kAt: where it is computed
  LoopRef store_at;    // kAt: where it is stored: compute_at or a loop enclosing it, or root
  std::vector<StageTiling> stages;  // one per stage; empty when inlined

  bool operator==(const FuncDecision &o) const {
    return placement == o.placement && compute_at == o.compute_at && store_at == o.store_at &&
           stages == o.stages;
  }
};

// One step of the MDP. A Func's decision is taken in small steps, hierarchically (as the
// GPU autoscheduler samples, 002 section 3.1): its placement and storage, then for each
// stage the (tile, inner) sizes of each pure variable in loop_vars order, then the stage's
// parallel loops. Small steps keep every state's children few enough to enumerate and
// score, and let a tree search learn where a Func goes before it learns its tile sizes.
struct Step {
  enum class Kind : uint8_t { kPlace, kTile, kParallel };
  Kind kind = Kind::kPlace;
  // kPlace
  Placement placement = Placement::kRoot;
  LoopRef compute_at;
  LoopRef store_at;
  // kTile: one pure variable of the current stage
  int64_t tile = 1;
  int64_t inner = 1;
  // kParallel, the stage's last step: its loop order outside the tiles, and whether its
  // innermost reduction loop is unrolled or runs in lanes
  int parallel_loops = 0;
  bool reduction_outside = false;
  bool unroll_reduction = false;
  int reduction_lanes = 0;

  bool operator==(const Step &o) const {
    if (kind != o.kind) return false;
    switch (kind) {
      case Kind::kPlace:
        return placement == o.placement && (placement != Placement::kAt ||
                                            (compute_at == o.compute_at && store_at == o.store_at));
      case Kind::kTile:
        return tile == o.tile && inner == o.inner;
      case Kind::kParallel:
        return parallel_loops == o.parallel_loops && reduction_outside == o.reduction_outside &&
               unroll_reduction == o.unroll_reduction && reduction_lanes == o.reduction_lanes;
    }
    return false;
  }
};

// The steps that take decision `d`, in order.
inline std::vector<Step> steps_of(const FuncDecision &d) {
  std::vector<Step> out;
  Step place;
  place.placement = d.placement;
  place.compute_at = d.compute_at;
  place.store_at = d.store_at;
  out.push_back(place);
  for (const StageTiling &t : d.stages) {
    for (size_t v = 0; v < t.tile.size(); ++v) {
      Step tile;
      tile.kind = Step::Kind::kTile;
      tile.tile = t.tile[v];
      tile.inner = t.inner[v];
      out.push_back(tile);
    }
    Step par;
    par.kind = Step::Kind::kParallel;
    par.parallel_loops = t.parallel_loops;
    par.reduction_outside = t.reduction_outside;
    par.unroll_reduction = t.unroll_reduction;
    par.reduction_lanes = t.reduction_lanes;
    out.push_back(par);
  }
  return out;
}

}  // namespace protuner
