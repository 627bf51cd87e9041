// A (partial) schedule: the decisions made so far and their bounds. ProTuner's MDP state.
//
// States are values: a child is a copy with one more decision. Decisions and their bounds
// are immutable and shared between copies behind shared_ptr, so copying a state costs a
// vector of pointers, and states may be read from many threads at once.
#pragma once

#include <memory>
#include <vector>

#include "searcher/loop_nest.h"
#include "searcher/pipeline_graph.h"
#include "searcher/schedule.h"

namespace protuner {

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

  // A copy with the next Func decided. Throws std::invalid_argument when `d` is not a
  // legal decision for it (see check_decision).
  ScheduleState with_decision(FuncDecision d) const;
  // The same, in place (rollouts extend one state without keeping intermediate ones).
  void decide(FuncDecision d);

  // Why `d` is not a legal decision for the next Func, or "" when it is: placement
  // (inlinable, every use inside the compute loop, storage enclosing it), and tiling shape.
  std::string check_decision(const FuncDecision &d) const;

  // --- Queries the search space asks before deciding the next Func ---

  // Whether Func g's computation happens inside loop `at` (any depth).
  bool inside(int g, const LoopRef &at) const;
  // Whether every use of Func f lies inside loop `at` (so f may be computed there).
  bool can_compute_at(int f, const LoopRef &at) const;
  // The region of f one realization computes when computed at `at` (root: its root region).
  Region region_at(int f, const LoopRef &at) const;
  // Iterations of `at` over the whole run (root: 1).
  int64_t realizations_at(const LoopRef &at) const;
  // `at` and the loops enclosing it, innermost first (ends before root).
  std::vector<LoopRef> enclosing_loops(const LoopRef &at) const;
  // Where a Func computed at `at` may be stored. Today only `at` itself: storage further
  // out triggers Halide 14 sliding-window bugs with guarded tails (see the .cpp). When it
  // returns, it must stop at the first parallel loop outwards (storage shared by parallel
  // tasks is a race Halide refuses).
  std::vector<LoopRef> store_options(const LoopRef &at) const;
  // Points of f needed per single point of each non-inlined stage using it, at most: what
  // inlining f would recompute.
  int64_t inline_footprint(int f) const;

 private:
  struct Decided {
    FuncDecision decision;
    FuncBounds bounds;
  };
  FuncBounds compute_bounds(int f, const FuncDecision &d) const;
  void add_uses(int f, int stage_func, int stage, const Region &loops, Region &out) const;

  std::shared_ptr<const PipelineGraph> graph_;
  std::vector<std::shared_ptr<const Decided>> decided_;
};

}  // namespace protuner
