// Our representation of a Halide pipeline: its Funcs and their stages (the pure definition
// and each update), who calls whom and with what footprint, and the region of every Func
// at the pipeline's estimated sizes. The search decides Funcs one at a time from the
// outputs back to the inputs (ProTuner's MDP), so Funcs are listed in that order.
//
// Built once per pipeline; immutable afterwards and safe to share between threads.
#pragma once

#include <string>
#include <vector>

#include "common/pipeline/footprint.h"
#include "common/pipeline/op_histogram.h"
#include "common/pipeline/region.h"

namespace Halide {
class Func;
class Pipeline;
}  // namespace Halide

namespace protuner {

struct StageNode {
  int index = 0;  // 0: pure definition, k: k-th update
  // The stage's loop variables, innermost first: its pure variables, then its reduction
  // variables. Footprints are functions of the region these cover.
  std::vector<std::string> loop_vars;
  int num_pure = 0;                   // loop_vars[0, num_pure) are pure
  std::vector<int> pure_dims;         // the Func dimension each pure variable iterates
  Region rvar_region;                 // the reduction domain at the estimates, one Span per rvar
  // Whether the innermost reduction variable's extent is a constant of the algorithm (an
  // RDom over a tap count the generator fixes), not one Halide learns at run time from a
  // buffer or a param: only such a loop can be unrolled (StageTiling::unroll_reduction),
  // since Halide refuses "Can only unroll for loops over a constant extent".
  bool constant_reduction_extent = false;
  std::vector<Footprint> footprints;  // one per producer Func this stage calls
  std::vector<Footprint> input_reads;  // one per input buffer it reads directly
  // Update stages only: the region of its own Func this stage writes (may exceed what
  // consumers read, e.g. a histogram indexed by data).
  std::vector<Footprint> writes;
  // Whether it reads an input buffer, or any Func at a clamped or data-dependent index
  // (min, max, select or a call inside an argument: boundary conditions, lookups). Such a
  // Func is never stored outside its compute loop: Halide 14's sliding window then
  // computes wrong values or reads the fixed-size input out of bounds (found by the
  // random-schedule property tests on the blur chain, bilateral grid and harris).
  bool unsafe_to_slide = false;
  // The producer Funcs this stage calls at affine indices of more than one shape
  // (differing in more than constant offsets): a matrix multiply of a Func by itself
  // reads f(r, y) and f(x, r). Such a producer is never stored outside its compute loop
  // in this stage's loop nest: Halide 14's sliding window over the union of the two
  // footprints computes a random pipeline's matmul wrong at every output point (the
  // dataset builder's output checks catch it).
  std::vector<std::string> reads_in_several_shapes;
  // What the definition computes per point and how it indexes its producers
  // (schedule-invariant; the featurizer folds inlined producers into it).
  OpHistogram ops;
  // From `ops`, kept because the search asks per step: the operations (linear index
  // arithmetic included: it is code LLVM compiles) and loads one point of the definition
  // adds to its innermost block (at least 1), and how many of its
  // accesses gather (rules 6 and 7 of SearchSpaceOptions).
  int64_t code_per_point = 1;
  int64_t gathers = 0;

  // Whether its reduction may run in parallel bands (StageTiling::parallel_loops = 1 on a
  // stage with no pure variables; loop_nest.h): an update with no pure variable (a
  // histogram, a sum over the whole input), which has no other parallelism, whose update
  // Halide proves associative, so rfactor can split it into partial reductions merged
  // afterwards, and whose outermost reduction variable has two points or more.
  bool rfactorable = false;
  // Whether its reduction may run in vector lanes (StageTiling::reduction_lanes): an update
  // with pure variables whose update Halide proves associative, so rfactor can turn the
  // points of its innermost reduction variable a vector apart into partial reductions, one
  // per lane, merged per point of the Func (image_stats' expert reduces each plane so), and
  // whose values are integers: a float sum added up in another order differs in its last
  // bits, and every schedule of the space computes the unscheduled output bit for bit.
  bool lane_rfactorable = false;

  // Whether it is a scan: an update with pure variables that reads its own Func a
  // literal step back along a reduction variable (a recursive filter: blurred(x, r) from
  // blurred(x, r - 1)), so its points along that dimension are computed in order, each
  // column whole.
  bool scans = false;

  // Whether it is a scatter: an update that writes where a value it loads says (a
  // histogram's bin, histogram(x, y, zi) with zi computed from the image). Its splits never
  // round up: Halide 14 runs the rounded-up iterations but does not widen what they read,
  // so they read points of their producers never computed and write to the bins that
  // garbage names, outside the buffer (bilateral_grid's histogram update rounded up to
  // whole vectors crashes; AppliedSchedules.AScatterNeverRoundsUp).
  bool scatters = false;

  // Whether its splits shift a partial last tile inwards, so that every tile is whole: the
  // pure stage of an output, as Halide's own default tail does for outputs. The last tile
  // then overlaps the one before and recomputes a few points, and a Func computed per tile
  // covers the same extents in every tile, inside the output's region: a producer that
  // reads an input without a boundary condition may be computed there, where a guarded
  // tile would have it computed past the input (ScheduleState::compute_at_refusal). A
  // uint8 output of 1532 columns (edge_nms of the corpus) can then vectorize its columns
  // with its producers computed per tile. A window never slides over such a loop
  // (ScheduleState::store_options).
  bool shifts_tails = false;

  // The stage's loop region when its Func covers `func_region`, rvars over their domain.
  Region loop_region(const Region &func_region) const;
  // Whether StageTiling::reduction_outside can mean anything: the stage has reduction loops,
  // and pure loops to move them outside of.
  bool reorderable_reduction() const {
    return num_pure > 0 && static_cast<int>(loop_vars.size()) > num_pure;
  }
};

struct FuncNode {
  std::string name;
  bool is_output = false;
  int dimensions = 0;
  std::vector<std::string> args;         // pure argument names, innermost first
  std::vector<std::string> value_types;  // one per tuple element, e.g. "float32"
  std::vector<StageNode> stages;
  std::vector<int> producers;  // indices into PipelineGraph::funcs
  std::vector<int> consumers;
  // The region computed when every Func is computed at root for the estimated outputs.
  Region root_region;
  // Per dimension: whether its extent there grows with the outputs' extents. Halide knows
  // such an extent only as an expression of the output buffers the caller passes in; the
  // others come from reduction domains, constant offsets and clamps (resnet50's channels,
  // fixed by the weights' shapes), and Halide knows them as constants.
  std::vector<bool> extent_follows_outputs;
  // Which Funcs (indexed like PipelineGraph::funcs) need more than their root region when
  // this one is computed over more than its own: the producers it reads at indices that
  // follow its own (no boundary condition clamps them), and theirs.
  std::vector<bool> widens;
  // Whether computing it over more than its root region reads an input buffer outside the
  // region the estimates need: it, or a Func it widens, reads an input at indices that
  // follow its own. Halide 14 computes a Func computed inside the partial last tile of a
  // guarded split for the whole tile, so such a Func is kept out of loop nests with partial
  // tiles of Funcs that widen it (ScheduleState::compute_at_refusal). An output another
  // Func reads counts as an input here: Halide computes it over its buffer only, so a
  // reader past that buffer fails its bounds check as a reader past an input's does
  // (a Gaussian pyramid's next level reads each level).
  bool overcompute_reads_past_inputs = false;

  // Per dimension: whether computing up to kRoundUpMaxPoints points past the max of its
  // region in that dimension reads an input buffer outside the region the estimates need.
  // Unlike overcompute_reads_past_inputs, which widens every dimension on both sides, this
  // follows one dimension's widening through the producers: nl_means' patch distances
  // read the image through a boundary condition in x and y, and at a constant channel, so
  // rounding their x tiles up stays inside the image; a convolution rounded up in x reads
  // no more of its weights. Outputs that other Funcs read count as inputs, as above.
  std::vector<bool> round_up_reads_past_inputs;
  // Whether a split of dimension `dim` may round its inner tail up
  // (schedule_directives.cpp): outputs never do, their buffers are the caller's.
  bool may_round_up(int dim) const {
    return !is_output && dim >= 0 && dim < static_cast<int>(round_up_reads_past_inputs.size()) &&
           !round_up_reads_past_inputs[static_cast<size_t>(dim)];
  }

  // Whether its region comes, on some path from an output, through a read whose indices
  // do not follow the reader's own (a clamp, a lookup, a constant index): Halide 14 then
  // bounds it with min/max expressions whose extents it cannot prove positive.
  bool region_from_clamps = false;

  // Whether every read of it maps equal boxes of the reader's loops to regions of equal
  // extents wherever the box lies: translations and scalings do, a division by 3 read over
  // boxes of 5 does not ([0, 4] / 3 is two points, [5, 9] / 3 three), nor does a clamp
  // near the edge. It holds only where it holds for every reader too: a reader whose
  // region varies passes the variation on through reads that keep sizes (unsharp's input
  // copy, read as itself by the copy repeat_edge clamps). Computed per box of a reader's
  // tiles, it then covers the same extents in every realization unless a tile is partial
  // or clamped (ScheduleState::same_size_realizations).
  bool reads_keep_size = true;

  // Whether its stages may fuse outer loops into one parallel loop. Halide 14 bounds a
  // variable fused over loop extents it cannot prove positive (regions from clamps)
  // loosely: the outermost one by about the whole fused extent on both sides. The stage
  // still computes the right points, but what it requires of its producers grows
  // accordingly, and where that reaches an input buffer (overcompute_reads_past_inputs)
  // the input's bounds check fails: random pipelines' copies of their clamped inputs
  // (`input_im`, fused over x tiles, y tiles and channels) require channels far outside
  // their 3. A matrix multiply's fused tiles, over the output's own extents, are bounded
  // tightly.
  // Such Funcs get their parallel tasks from their outermost tiled loop alone.
  bool may_fuse_parallel_loops() const {
    return !(overcompute_reads_past_inputs && region_from_clamps);
  }

  // A Func can be inlined when it is not an output and has no update definitions.
  bool inlinable() const { return !is_output && stages.size() == 1; }

  // The region a realization covers when its consumers need `required`: that, and what
  // its update stages write over their loops there. A scan's or an integral image's
  // reduction domain spans its whole input, so however few rows a consumer's tile needs,
  // Halide computes every row the domain writes, and the pure stage and the producers
  // under it with them. Data-dependent writes (a histogram's bins) add nothing.
  Region with_own_writes(Region required) const;
};

// How far past a Func's region FuncNode::round_up_reads_past_inputs looks, and so the
// largest inner tile that may round up: more than the space offers (SearchSpaceOptions:
// vectors of at most 7 x the native lanes, 448 uint8 lanes on AVX-512; unrolled tiles of
// a few points).
constexpr int64_t kRoundUpMaxPoints = 512;

// Bits of one element of a value type as FuncNode::value_types names it ("float32",
// "uint8"); at least 8, and 8 for "bool" (stored as a byte).
int value_type_bits(const std::string &type);
// Bytes one point of `f` takes, all its tuple elements together (at least 1).
int value_bytes(const FuncNode &f);

struct PipelineGraph {
  // Consumers before producers: outputs first.
  std::vector<FuncNode> funcs;

  int find(const std::string &name) const;  // index of a Func, or -1
};

// Analyzes `pipeline` (its schedule is ignored) at the estimates of its inputs and outputs.
// Throws ConfigError naming the input or output whose estimate is missing.
PipelineGraph analyze_pipeline(Halide::Pipeline &pipeline);

// The Funcs of `pipeline` in PipelineGraph order (index i is graph.funcs[i]). The order
// depends only on the algorithm, so another instance of the same generator, in this
// process or another, lists the same Funcs at the same indices.
std::vector<Halide::Func> funcs_in_graph_order(Halide::Pipeline &pipeline);

// A Func's name without what Halide makes up per process: the uniquifying suffix
// ("output$2" -> "output") and the counters of anonymous Funcs ("lambda_7" -> "lambda",
// "f12" -> "f"). What stays the same across instances of one algorithm.
std::string stable_func_name(const std::string &name);

// What identifies one Func of an algorithm across instances and processes: its stable
// name, dimensions, stages and value types, at its position in graph order.
struct FuncSignature {
  std::string name;  // stable_func_name
  int dimensions = 0;
  int stages = 0;
  std::vector<std::string> value_types;
  bool operator==(const FuncSignature &o) const {
    return name == o.name && dimensions == o.dimensions && stages == o.stages &&
           value_types == o.value_types;
  }
};
std::vector<FuncSignature> pipeline_signature(const PipelineGraph &graph);
// `funcs` as funcs_in_graph_order returns them.
std::vector<FuncSignature> pipeline_signature(const std::vector<Halide::Func> &funcs);

// Throws ConfigError when a schedule made for `expected` cannot apply to a pipeline with
// signature `actual` (a different algorithm), naming the first Func that differs.
void check_same_pipeline(const std::vector<FuncSignature> &expected,
                         const std::vector<FuncSignature> &actual);

}  // namespace protuner
