// A (partial) schedule: the decisions made so far and their bounds. ProTuner's MDP state.
//
// States are values: a child is a copy with one more decision. Decisions and their bounds
// are immutable and shared between copies behind shared_ptr, so copying a state costs a
// vector of pointers, and states may be read from many threads at once.
#pragma once

#include <memory>
#include <vector>

#include "common/pipeline/pipeline_graph.h"
#include "common/schedule/loop_nest.h"
#include "common/schedule/schedule.h"

namespace protuner {

// Why a stage of `node` computed at `placement` may not fuse two or more outer loops into
// one parallel loop, or nullptr when it may. The one rule behind ScheduleState's checks and
// the tilings the search space offers.
const char *no_fused_parallel_loops_reason(const FuncNode &node, Placement placement);

// Why `parallel_loops` is out of range for `stage` of a Func computed at `placement`, or
// nullptr when it is in range: 0 up to the stage's pure variables, or 1 on a stage whose
// reduction may run in parallel bands (StageNode::rfactorable) in a Func at root.
const char *parallel_loops_refusal(const StageNode &stage, int parallel_loops, Placement placement);

class ScheduleState {
 public:
  explicit ScheduleState(std::shared_ptr<const PipelineGraph> graph);

  const PipelineGraph &graph() const { return *graph_; }
  const std::shared_ptr<const PipelineGraph> &graph_ptr() const { return graph_; }

  // Funcs [0, num_decided()) are decided; the next decision is for Func num_decided().
  int num_decided() const { return static_cast<int>(decided_.size()); }
  bool complete() const { return num_decided() == static_cast<int>(graph_->funcs.size()); }
  const FuncDecision &decision(int func) const { return decided_.at(func)->decision; }
  const FuncBounds &bounds(int func) const { return decided_.at(func)->bounds; }

  // A copy with the next Func decided at once. Throws std::invalid_argument when `d` is
  // not a legal decision for it (see check_decision), or a decision is under way in steps.
  ScheduleState with_decision(FuncDecision d) const;
  // The same, in place (rollouts extend one state without keeping intermediate ones).
  void decide(FuncDecision d);

  // Why `d` is not a legal decision for the next Func, or "" when it is: placement
  // (inlinable, every use inside the compute loop, storage enclosing it), and tiling shape.
  std::string check_decision(const FuncDecision &d) const;

  // --- The MDP: deciding the next Func in steps (see Step) ---

  // What the next step decides: its kind and, for kTile and kParallel, the stage and
  // (kTile) the pure variable.
  struct NextStep {
    Step::Kind kind = Step::Kind::kPlace;
    int stage = 0;
    int var = 0;
  };
  NextStep next_step() const;
  // Whether the next Func's decision is under way (placed, not all stages tiled yet).
  bool mid_decision() const { return pending_ != nullptr; }
  // The decision under way (only while mid_decision()): placement, and the stages tiled so
  // far, the last one possibly in part.
  const FuncDecision &pending() const { return pending_->decision; }
  // The stage being tiled: its pure variables' extents per realization, its points over
  // all realizations, and whether it runs inside a parallel loop.
  const std::vector<int64_t> &pending_stage_extents() const { return pending_->stage_extents; }
  int64_t pending_stage_points() const { return pending_->stage_points; }
  bool pending_inside_parallel() const { return pending_->inside_parallel; }
  // Why `step` is not legal next, or "" when it is (the search space prunes further).
  std::string check_step(const Step &step) const;
  // A copy with `step` taken; the step that completes a decision decides the Func.
  // Throws std::invalid_argument when the step is not legal (see check_step).
  ScheduleState with_step(const Step &step) const;
  void take_step(const Step &step);

  // --- Queries the search space asks before deciding the next Func ---

  // Why the next Func may not be computed at `at`, or nullptr when it may: an inner loop;
  // a use outside `at`; or the Func's over-compute reads past an input
  // (FuncNode::overcompute_reads_past_inputs) and `at` is inside a Func computed at a loop
  // whose region comes through clamps, or `at`'s stage, or a loop enclosing it, has a
  // partial last tile (split loops count as partial in Funcs whose realizations may
  // differ in size: same_size_realizations).
  const char *compute_at_refusal(const LoopRef &at) const;
  // Whether every realization of decided Func g covers a region of the same extents, so
  // its full tiles stay full: it is computed once, or its readers keep sizes
  // (FuncNode::reads_keep_size), no clamp cuts its region, no loop around its realization
  // has a partial last tile, and the same holds for the Func it is computed in.
  bool same_size_realizations(int g) const;
  // Whether some decided Func is stored at a loop of decided Func g and computed inside
  // further loops of g's (slides_over_own_loops): Halide slides its window over them, and
  // g's splits then guard their tails instead of shifting inwards
  // (schedule_directives.cpp). A window sliding only over the loops of a Func computed at
  // the storage loop (nl_means' distances down the rows of its sum, stored per output
  // tile) leaves g's splits as they are.
  bool slides_in(int g) const;
  // Whether `at` is, or is inside, a parallel loop (root: false).
  bool inside_parallel_loop(const LoopRef &at) const;
  // The region of f one realization computes when computed at `at` (root: its root region):
  // what its uses inside `at` need, and what its own updates write (FuncNode::with_own_writes).
  Region region_at(int f, const LoopRef &at) const;
  // Iterations of `at` over the whole run (root: 1), every tile counted whole: the typical
  // interior iteration's count. Halide runs fewer where it trims guarded tails, and more or
  // fewer where a resampling footprint's extent depends on parity.
  int64_t realizations_at(const LoopRef &at) const;
  // `at` and the loops enclosing it, innermost first (ends before root).
  std::vector<LoopRef> enclosing_loops(const LoopRef &at) const;
  // Where the next Func, computed at `at`, may be stored: `at`, then the loops enclosing
  // it up to and including the first parallel one, then root if no parallel loop encloses
  // `at`. Only `at` for a Func unsafe to slide (StageNode::unsafe_to_slide) or read at
  // indices of several shapes (StageNode::reads_in_several_shapes); never outside a loop of
  // a stage that reads any Func at indices of several shapes, nor outside a loop whose
  // ragged last tile shifts inwards (Loop::shifted_tail). Nor outside `at` at a loop
  // of a Func with fused parallel loops when a Func that reads inputs past their bounds
  // (FuncNode::overcompute_reads_past_inputs) is computed inside them or is the next Func:
  // the sliding window would guard their splits (compute_at_refusal).
  std::vector<LoopRef> store_options(const LoopRef &at) const;
  // Points of f needed per single point of each non-inlined stage using it, at most: what
  // inlining f would recompute.
  int64_t inline_footprint(int f) const;
  // One non-inlined stage that would evaluate f were f inlined (through Funcs already
  // inlined), and the points of f one iteration of its loops, reduction loops included,
  // would evaluate (ScheduleState::inline_footprint is the most of these).
  struct InlineUse {
    int func = 0;
    int stage = 0;
    int64_t points_per_iteration = 0;
  };
  std::vector<InlineUse> inline_uses(int f) const;
  // Calls of f one innermost block (a stage's vector-and-unrolled inner tile) of a stage
  // using it would make if f were inlined, at most: inline_footprint per point times the
  // block's points. Unrolled, every call is code the compiler must generate.
  int64_t inlined_block_calls(int f) const;
  // Lane-operations in the innermost blocks of every decided Func (SearchSpaceOptions rule
  // 7): per stage computed somewhere, its block's points times StageNode::code_per_point; per
  // inlined Func, the points of it every block using it reads times its own code per point.
  int64_t block_lane_ops() const { return decided_.empty() ? 0 : decided_.back()->block_lane_ops; }
  // What deciding f (the next Func) inline would add to block_lane_ops().
  int64_t inlined_block_lane_ops(int f) const;

 private:
  struct Decided {
    FuncDecision decision;
    FuncBounds bounds;
    int64_t block_lane_ops = 0;  // block_lane_ops() with this Func decided
  };
  struct Pending {
    FuncDecision decision;
    bool last_stage_done = false;  // the last stage's parallel step is taken
    Region region;
    int64_t realizations = 1;
    bool inside_parallel = false;
    std::vector<int64_t> stage_extents;  // of stage `stage_started`
    int64_t stage_points = 0;
    void start_stage(const StageNode &stage);
  };
  // Whether Func g's computation happens inside loop `at` (any depth).
  bool inside(int g, const LoopRef &at) const;
  // Whether every use of Func f lies inside loop `at` (so f may be computed there).
  bool can_compute_at(int f, const LoopRef &at) const;
  // Whether a Func computed at `compute_at` and stored at `store_at` slides over loops of
  // store_at's own stage inside it.
  bool slides_over_own_loops(const LoopRef &compute_at, const LoopRef &store_at) const;
  std::string check_placement(const FuncDecision &d) const;
  void commit(FuncDecision d);
  // Whether pred(ref, loop) holds for `at` or a loop enclosing it, innermost first.
  template <typename Pred>
  bool any_enclosing_loop(const LoopRef &at, const Pred &pred) const;
  // Whether loop `l` of decided Func g fuses parallel loops over splits Halide guards
  // (a window slides in g).
  bool fused_over_guarded_splits(int g, const Loop &l) const;
  FuncBounds compute_bounds(int f, const FuncDecision &d) const;
  // Points of f one point (in the middle of its region) of stage s of Func g reads,
  // through Funcs inlined in between.
  int64_t points_per_use(int f, int g, int s) const;
  void add_uses(int f, int stage_func, int stage, const Region &loops, Region &out) const;

  std::shared_ptr<const PipelineGraph> graph_;
  std::vector<std::shared_ptr<const Decided>> decided_;
  std::shared_ptr<Pending> pending_;  // shared between copies, copied on write
};

}  // namespace protuner
