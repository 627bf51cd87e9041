// The schedule space: which steps (schedule.h) are legal and worth trying next, and how to
// draw one uniformly at random without building its sibling states (ProTuner's profile
// puts most of its search time into generating children a random rollout discards;
// `build/bin/rollout_benchmark` compares the two). Separate
// from the state, which only holds data: this holds the rules.
//
// Thread safety: const methods may be called from many threads at once.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "common/schedule/schedule_state.h"

namespace Halide {
struct Target;
}

namespace protuner {

// Vector registers of an ISA whose widest vectors have `vector_bits`: 32 with AVX-512, 16
// below it (AVX2, SSE; NEON's 32 are not modelled). Register blocks are sized by it
// (blocked_schedule.h), and the featurizer asks whether a block's sums fit in it.
inline int vector_registers(int vector_bits) { return vector_bits >= 512 ? 32 : 16; }

// The lanes a reduction in lanes (StageTiling::reduction_lanes) is offered with, as
// multiples of a native vector of the Func's widest type: one vector of accumulators up to
// eight, as a reduction of narrow values into wide sums keeps (image_stats' expert: 64
// lanes of 32- and 64-bit sums of bytes).
inline constexpr int kLaneReductionMultiples[] = {1, 2, 4, 8};

// Tunables of the space, with defaults for the machine class we tune on (2 cores,
// AVX-512). for_target() fills the machine-dependent ones from a Halide target.
struct SearchSpaceOptions {
  int cores = 2;                // parallel tasks needed to keep every core busy
  int vector_bits = 512;        // SIMD register width; lanes = vector_bits / type bits
  int max_vector_multiple = 2;  // inner vector tiles of 1x .. this x native lanes (1..7)
  std::vector<int64_t> unroll_extents{2, 3, 4, 6, 8};  // inner (unrolled) tile sizes, at most 7
  int max_tile_options = 8;  // outer tile sizes offered per variable and inner size
  // Pruning rules (stated, tested):
  // 1. Inlining is offered only if one point of every consumer needs at most this many
  //    points of the Func (more is excessive recompute, e.g. a 7x7 stencil of a stencil).
  int64_t max_inline_footprint = 32;
  // 2. A stage computed at root with at least this many points must run at least `cores`
  //    parallel tasks (too little parallelism for the machine otherwise), when its pure
  //    variables can give that many (fused, or in one loop for a Func that may not fuse,
  //    FuncNode::may_fuse_parallel_loops): an update without pure variables (a
  //    histogram's scatter over the image) runs serially.
  int64_t min_parallel_points = 16384;
  // 3. No parallel loop inside a parallel loop (the outer one already fills the cores).
  // 5. Inlining is offered only if an innermost block (vector x unrolled tile) of every
  //    consumer would make at most this many calls of the Func: unrolled, each is code,
  //    and clamped (boundary-condition) loads are gathers. A 32x8 block of a 3x3 blur over
  //    an inlined boundary condition (2304 calls) takes LLVM more than a minute to compile;
  //    with a limit of 1024, candidates of the same app still overrun a short budget's
  //    compile limit.
  int64_t max_inlined_block_calls = 512;
  // 6. An innermost block of a stage makes at most this many of the stage's own gathered
  //    loads (data-dependent or clamped indices, which Halide scalarizes): the block's
  //    inner tiles are limited accordingly (a one-point inner tile is always offered).
  //    bilateral_grid's slice (16 gathers per pixel) takes LLVM minutes to compile in a
  //    32x8 block, several times less in a 32x1 block.
  int64_t max_block_gathers = 512;
  // 7. The blocks of all stages together hold at most this many lane-operations (block
  //    points x (operations + loads) per point of the stage's definition, summed over the
  //    stages decided so far): the straight-line code LLVM must compile. Once spent, later
  //    stages get one-point inner tiles, and inlining that would overflow it is not
  //    offered. Compile time grows faster than this count: schedules of about 20k compile
  //    in seconds, of 40k to 70k in minutes (interpolate, camera_pipe, lens_blur; neither
  //    vectorization nor unrolling alone is the cause). `protuner measure --schedule`
  //    reports a schedule's compile time.
  int64_t max_block_lane_ops = 16000;
  // How many loops outside its compute loop, within the same loop nest, a Func may be
  // stored (store_at; 0: only at the compute loop; storage in an enclosing Func's loops or
  // at root is never offered). ScheduleState accepts any enclosing loop up to the first parallel
  // one, but Halide 14's sliding window miscompiles storage further out with guarded tails
  // (wrong values on blur chain, bilateral grid and harris, heap corruption on matmul,
  // reads before the inputs on convolution; the random-schedule property tests,
  // random_schedules_test.cpp, catch it). Storage one loop out, sliding over the compute
  // loop alone (the line buffer of a row computed per row), computes right on the blur
  // chain, bilateral grid and convolution, and the property tests run with it.
  int max_storage_hoist = 1;
  // 4. Vectors never wider than the loop, never inside inner loops: by construction.

  // Cores from the host, vector width from the target's widest SIMD feature.
  static SearchSpaceOptions for_target(const Halide::Target &target);
};

class SearchSpace {
 public:
  // Throws std::invalid_argument for options out of range (see SearchSpaceOptions).
  explicit SearchSpace(SearchSpaceOptions options = {});

  const SearchSpaceOptions &options() const { return options_; }

  // Every legal, unpruned next step of `state` (empty when complete). The children of a
  // state are the states these steps lead to (state.with_step); steps are small, so there
  // are tens of them, not the millions a whole-Func decision can have.
  std::vector<Step> children(const ScheduleState &state) const;

  // One of children(state), each equally likely, without building any child state;
  // nullopt when there is none.
  std::optional<Step> random_child(const ScheduleState &state, std::mt19937_64 &rng) const;

  // A whole decision for the next Func, drawn step by step (hierarchical sampling: each
  // step uniform among its siblings); nullopt on a dead end. `state` must not be
  // mid-decision.
  std::optional<FuncDecision> random_decision(const ScheduleState &state,
                                              std::mt19937_64 &rng) const;

  // Why `d` is pruned from the space for the next Func of `state`, or "" when it is in
  // the space. Decisions can be legal yet pruned (see the rules above).
  std::string pruned_because(const ScheduleState &state, const FuncDecision &d) const;

  // Extends `state` with random children until it is complete (a rollout). Returns false
  // if some state on the way has no child.
  bool random_rollout(ScheduleState &state, std::mt19937_64 &rng) const;

 private:
  std::vector<Step> place_steps(const ScheduleState &state) const;
  std::vector<Step> tile_steps(const ScheduleState &state, int stage, int var) const;
  std::vector<Step> parallel_steps(const ScheduleState &state, int stage) const;

  SearchSpaceOptions options_;
  uint64_t id_ = 0;  // distinct per constructed space: keys the per-thread tiling cache
};

}  // namespace protuner
