// A complete state as the list of Halide scheduling calls that realize it. Applying a
// schedule to Funcs and emitting it as C++ source both walk this one list, so the pasted
// source and the in-memory schedule cannot drift apart. A change in which calls a schedule
// makes changes what a cached measurement of it means: bump kProtunerDirectives
// (measurer/measurement.h) with it.
#pragma once

#include <string>
#include <vector>

#include "common/schedule/loop_nest.h"
#include "common/schedule/schedule_state.h"

namespace protuner {

// A Func stored inside a loop whose allocation is at most this big goes on the stack
// (store_in(MemoryType::Stack)). Otherwise Halide 14 puts an allocation on the stack only
// when its size is a compile-time constant of at most 128 bytes, and our tiles' guarded
// tails make sizes symbolic: nl_means' per-offset rows of patch sums would be a malloc and
// a free per row and offset. The analytic model counts such allocations as free.
constexpr int64_t kStackAllocationMaxBytes = 16 * 1024;

// How a split handles a last tile its factor does not fill (schedule_directives.cpp says
// which a split gets and why).
enum class Tail : uint8_t { kGuard, kShiftInwards, kRoundUp };

struct Directive {
  enum class Kind {
    kComputeInline,  // func
    kComputeRoot,    // func
    kComputeAt,      // func at loop vars[0] of target_func (names are unique per Func)
    kStoreAt,        // func at loop vars[0] of target_func
    kStoreRoot,      // func
    kRename,         // stage: rename(var, new_name)
    kSplit,          // stage: split(var, outer, inner, factor, tail)
    kReorder,        // stage: reorder(vars, innermost first; rvars flagged)
    kFuse,           // stage: fuse(inner, outer, fused)
    kParallel,       // stage: parallel(var)
    kVectorize,      // stage: vectorize(var)
    kUnroll,         // stage: unroll(var), an rvar when target_is_rvar
    kStoreOnStack,   // func: store_in(MemoryType::Stack)
    kAlignStorage,   // func: align_storage(var, factor)
    // stage: split(rvar vars[0], vars[1], vars[2], factor, GuardWithIf), rfactor(vars[1],
    // Var vars[3]) into a partial reduction per band; the partials computed at root, their
    // update parallel over vars[3] (a reduction in bands, loop_nest.h)
    kRfactorBands,
    // stage: split(rvar vars[0], vars[1], vars[2], factor, GuardWithIf), rfactor(vars[2],
    // Var vars[3]) into partial reductions per lane, computed at f's loop vars[4] with
    // vars[3] vectorized in both of their stages (a reduction in lanes, loop_nest.h)
    kRfactorLanes,
  };
  Directive(Kind k, int f, int s = 0, std::vector<std::string> v = {})
      : kind(k), func(f), stage(s), vars(std::move(v)) {}

  Kind kind;
  int func = 0;
  int stage = 0;
  std::vector<std::string> vars;  // the variables the call names, in call order
  std::vector<bool> is_rvar;      // kReorder: which of vars are reduction variables
  int64_t factor = 0;             // kSplit, kAlignStorage
  Tail tail = Tail::kGuard;       // kSplit
  int target_func = -1;           // kComputeAt / kStoreAt
  bool target_is_rvar = false;    // kComputeAt / kStoreAt / kUnroll: vars[0] is an rvar
};

// Whether the split that makes the inner loop (vectorized or unrolled) of pure variable v
// of `stage`, a stage of Func f split as `vs`, rounds its tail up rather than guards it
// (schedule_directives.cpp says when and why). The featurizer counts such tails as whole
// vectors.
bool inner_tail_rounds_up(const ScheduleState &state, int f, const StageNode &stage,
                          const VarSplit &vs, int v);

// Whether f's pure stage splits into whole tiles Halide can be told of (ShiftInwards, not
// guarded): f is computed at root or inside whole tiles of a consumer that splits so too
// (schedule_directives.cpp says when and why).
bool whole_tiles(const ScheduleState &state, int f);

// The directives realizing `state`, which must be complete. Func indices are PipelineGraph
// indices.
std::vector<Directive> schedule_directives(const ScheduleState &state);

}  // namespace protuner
