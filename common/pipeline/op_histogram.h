// What one stage's definition computes per point, independent of any schedule: a histogram
// of its operations by kind and type, and how it indexes each producer it reads (the
// access pattern and the affine index coefficients). Cost models read it as the
// schedule-invariant half of a stage's features (issue 4 item 1; 004_* section II.C.1);
// the featurizer also folds the histograms of inlined Funcs into their consumers, which is
// why every access keeps its index coefficients: inlining composes them.
//
// Built once per stage by analyze_pipeline; immutable afterwards.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace Halide::Internal {
class Definition;
}

namespace protuner {

// Operation kinds. Loads are counted per call site (a Func or input read once per point
// per call in the definition); a math intrinsic is an extern math call (sqrt, exp, pow,
// floor, ...) or abs/absd; every other call (lerp, saturating and widening arithmetic,
// reinterpret, ...) is kOtherCall. Bitwise operations and shifts count as kLogical.
enum class OpKind : uint8_t {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
  kMin,
  kMax,
  kCompare,  // ==, !=, <, <=, >, >=; typed by their operands
  kSelect,
  kLogical,  // &&, ||, !, bitwise and shifts
  kCast,
  kLoadFunc,   // a call to another Func of the pipeline (or the stage's own Func)
  kLoadInput,  // a call to an input buffer (ImageParam, Buffer)
  kConstant,
  kMath,
  kOtherCall,
  kCount
};
constexpr int kNumOpKinds = static_cast<int>(OpKind::kCount);
const char *op_kind_name(OpKind k);

// Value types: class and width. Handles and other exotic types count as kUInt64.
enum class OpType : uint8_t {
  kBool,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kFloat16,
  kFloat32,
  kFloat64,
  kCount
};
constexpr int kNumOpTypes = static_cast<int>(OpType::kCount);
const char *op_type_name(OpType t);
// Bytes of one value of the type (bool: 1).
int op_type_bytes(OpType t);
bool op_type_is_float(OpType t);

// How a stage reads a producer at one call site, from the symbolic call arguments as
// functions of the stage's loop variables. When several apply, the first in this order
// wins: a gather defeats every other pattern, a transpose costs more than a stride.
enum class AccessPattern : uint8_t {
  kGather,      // some index is not affine in the loop variables (data-dependent, x*x)
  kTransposed,  // the loop variables index the producer's dimensions in another order
  kStrided,     // some index moves by a stride other than 0 or +-1 (x*2, x/2)
  kBroadcast,   // some pure loop variable does not index the producer (reused across it)
  kPointwise,   // every pure loop variable indexes one dimension in order, stride +-1
  kCount
};
constexpr int kNumAccessPatterns = static_cast<int>(AccessPattern::kCount);
const char *access_pattern_name(AccessPattern p);

// One call site reading a producer.
struct Access {
  std::string producer;  // Func or input buffer name
  bool is_input = false;  // an input buffer rather than a Func
  bool is_self = false;   // an update reading its own Func
  OpType type = OpType::kFloat32;
  // coefficients[d][v]: how much index d of the call moves per unit step of the stage's
  // loop variable v (StageNode::loop_vars order); a quotient by a constant gives a
  // fraction (x / 2 -> 0.5). When affine[d] is false, index d is not affine (a gather)
  // and its row is all zeros.
  std::vector<std::vector<double>> coefficients;
  std::vector<bool> affine;
  // The constant part of each affine index when it is a literal (x + 1 -> 1), else 0:
  // what tells the three reads of a 3-tap stencil apart.
  std::vector<double> offsets;
  // index_vars[d], bit v: index d reads loop variable v, in its own arithmetic or in the
  // indices of the values it loads (a lookup indexed by input(x, y) reads x and y). What
  // a gathered index can vary with: bgu's transform(k, xi(x), yi(y), zi(x, y)) is the same
  // cell for every k, so a vector along k loads it densely.
  std::vector<uint64_t> index_vars;
  // clamps[d]: a hash of the bounds of the min/max without a `likely` tag that affine
  // index d passes through (a hand-written clamp), 0 if none. Halide splits a vectorized
  // loop at such a clamp's edges only while the clamp sits in one load's index; once two
  // loads share it (common-subexpression elimination lifts it into a let) every vector
  // of them gathers. Equal hashes and equal affine parts are the same clamp.
  std::vector<uint64_t> clamps;
  // edge_clamped[d]: affine index d passes a clamp with a `likely` tag (a boundary
  // condition's). Halide splits a vectorized loop at such a clamp's edges, and each vector
  // that straddles an edge keeps the clamp and gathers lane by lane.
  std::vector<bool> edge_clamped;
  // reach[d]: for a gathered index d, how many values it can take when its own arithmetic
  // bounds it by constants (clamp(cast<int>(index(x, y)), 0, 15): 16; a uint8 lookup: 256),
  // else 0. A gather through such an index reads no more of its producer than that, however
  // many points read it: palette_quantize's recolored image reads a 48-float palette.
  std::vector<double> reach;
  AccessPattern pattern = AccessPattern::kPointwise;
};

// The hash of clamp `outer` applied around an index already clamped as `inner` (0: none),
// never 0 itself (Access::clamps).
inline uint64_t join_clamps(uint64_t inner, uint64_t outer) {
  const uint64_t h = inner * 1000003u ^ outer;
  return h == 0 ? 1 : h;
}

struct OpHistogram {
  // counts[kind][type]: operations per point of the stage.
  std::array<std::array<double, kNumOpTypes>, kNumOpKinds> counts{};
  std::vector<Access> accesses;  // every call site of a Func or input, in visit order
  // Integer operations per point that are linear in the loop variables (index arithmetic
  // such as x + r.y): code the compiler emits, but strength-reduced out of the per-point
  // work, so not in `counts`.
  double linear_index_ops = 0;

  double count(OpKind k) const;  // over all types
  double count(OpType t) const;  // over all kinds
  double total() const;          // every operation, loads and constants included
  // Arithmetic a core executes per point: everything but loads and constants.
  double arithmetic() const;
  // Adds `o` scaled by `weight` (what inlining `o` at `weight` call sites adds).
  void add(const OpHistogram &o, double weight);
};

// The histogram of a stage definition of Func `func_name`, whose loop variables are
// `loop_vars` (StageNode order: the `num_pure` pure variables innermost first, then the
// reduction variables). For an update stage the left-hand side indices count too: they
// are computed per point.
OpHistogram histogram_of_stage(const Halide::Internal::Definition &def, bool is_update,
                               const std::vector<std::string> &loop_vars, int num_pure,
                               const std::string &func_name);

// The pattern of an access with these coefficients over a stage whose first `num_pure`
// loop variables are pure. Exposed for composing accesses through inlined Funcs.
AccessPattern classify_access(const std::vector<std::vector<double>> &coefficients,
                              const std::vector<bool> &affine, int num_pure);

}  // namespace protuner
