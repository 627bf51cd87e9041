// A complete state as the list of Halide scheduling calls that realize it. Applying a
// schedule to Funcs and emitting it as C++ source both walk this one list, so the pasted
// source and the in-memory schedule cannot drift apart. A change in which calls a schedule
// makes changes what a cached measurement of it means: bump kProtunerDirectives
// (measurer/measurement.h) with it.
#pragma once

#include <string>
#include <vector>

#include "searcher/schedule_state.h"

namespace protuner {

struct Directive {
  enum class Kind {
    kComputeInline,  // func
    kComputeRoot,    // func
    kComputeAt,      // func at loop vars[0] of target_func (names are unique per Func)
    kStoreAt,        // func at loop vars[0] of target_func
    kStoreRoot,      // func
    kRename,         // stage: rename(var, new_name)
    kSplit,          // stage: split(var, outer, inner, factor), tail per shift_inwards
    kReorder,        // stage: reorder(vars, innermost first; rvars flagged)
    kFuse,           // stage: fuse(inner, outer, fused)
    kParallel,       // stage: parallel(var)
    kVectorize,      // stage: vectorize(var)
    kUnroll,         // stage: unroll(var)
  };
  Directive(Kind k, int f, int s = 0, std::vector<std::string> v = {})
      : kind(k), func(f), stage(s), vars(std::move(v)) {}

  Kind kind;
  int func = 0;
  int stage = 0;
  std::vector<std::string> vars;  // the variables the call names, in call order
  std::vector<bool> is_rvar;      // kReorder: which of vars are reduction variables
  int64_t factor = 0;             // kSplit
  // kSplit: the tail strategy. ShiftInwards where the factor divides the variable's extent
  // in every realization of a pure definition, so Halide knows each tile is whole (a Func
  // computed per tile gets a constant-size buffer: an accumulator block in registers);
  // GuardWithIf elsewhere (schedule_directives.cpp says why).
  bool shift_inwards = false;
  int target_func = -1;           // kComputeAt / kStoreAt
  bool target_is_rvar = false;
};

// The directives realizing `state`, which must be complete. Func indices are PipelineGraph
// indices.
std::vector<Directive> schedule_directives(const ScheduleState &state);

}  // namespace protuner
