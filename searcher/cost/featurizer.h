// Featurization: what a cost model sees of a (complete or partial) schedule. One node per
// stage (every stage of every Func, in PipelineGraph order) with two fixed-length float
// vectors, the schedule-invariant features (what the stage computes) and the
// schedule-dependent ones (how this schedule computes it), plus the stage DAG for graph
// models (004_*). Feature sets follow 002_* appendix A and 004_* section II.C, adapted to
// a CPU and to our loop nests (loop_nest.h).
//
// Memoization (002_* section 3.3): the features of a decided Func depend only on its own
// decision and bounds, on the decisions of its consumers (fixed before it is decided), on
// which of its producers are inlined into it (their histograms and accesses fold into
// it), and on which of the others keep their values in a cache until it reads them (all
// one production of theirs touches fits: that traffic stays off the memory bus; the bytes
// are cached with the producer's features, and producers are featurized first). States
// share decisions behind shared_ptr and only ever append them, so the identity of a Func's
// decision entry pins down the decisions of every consumer too. A FeatureCache therefore
// keys a Func's features on (identity of its decision entry, the Funcs inlined into it,
// its resident producers and their cache levels); deciding one more Func recomputes that
// Func's features and those of the Funcs it folds into or stays resident for; everything
// else is reused.
//
// Thread safety: a Featurizer is immutable after construction and may be shared; a
// FeatureCache is not thread-safe (use one per search thread).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/schedule/schedule_state.h"
#include "searcher/cost/machine_model.h"

namespace protuner {

// The one table of features: X(name, meaning, units). Per point means per point of the
// stage's loop iteration space (a point of its Func for a pure stage, a point of the
// reduction for an update).
// clang-format off
#define PROTUNER_INVARIANT_FEATURES(X)                                                       \
  X(op_add, "additions per point, all types", "ops/point")                                  \
  X(op_sub, "subtractions per point", "ops/point")                                           \
  X(op_mul, "multiplications per point", "ops/point")                                        \
  X(op_div, "divisions per point", "ops/point")                                              \
  X(op_mod, "modulos per point", "ops/point")                                                \
  X(op_min, "min per point", "ops/point")                                                    \
  X(op_max, "max per point", "ops/point")                                                    \
  X(op_compare, "comparisons per point", "ops/point")                                        \
  X(op_select, "selects per point", "ops/point")                                             \
  X(op_logical, "logical, bitwise and shift operations per point", "ops/point")              \
  X(op_cast, "casts per point", "ops/point")                                                 \
  X(op_load_func, "reads of Funcs (own Func included) per point", "loads/point")             \
  X(op_load_input, "reads of input buffers per point", "loads/point")                        \
  X(op_constant, "constants per point", "count/point")                                       \
  X(op_math, "math intrinsics (sqrt, exp, pow, floor, abs, ...) per point", "ops/point")     \
  X(op_other_call, "other calls (lerp, saturating, widening, ...) per point", "ops/point")   \
  X(type_bool, "operations on bool per point", "ops/point")                                  \
  X(type_int8, "operations on int8 per point", "ops/point")                                  \
  X(type_int16, "operations on int16 per point", "ops/point")                                \
  X(type_int32, "operations on int32 per point", "ops/point")                                \
  X(type_int64, "operations on int64 per point", "ops/point")                                \
  X(type_uint8, "operations on uint8 per point", "ops/point")                                \
  X(type_uint16, "operations on uint16 per point", "ops/point")                              \
  X(type_uint32, "operations on uint32 per point", "ops/point")                              \
  X(type_uint64, "operations on uint64 per point", "ops/point")                              \
  X(type_float16, "operations on float16 per point", "ops/point")                            \
  X(type_float32, "operations on float32 per point", "ops/point")                            \
  X(type_float64, "operations on float64 per point", "ops/point")                            \
  X(access_gather, "call sites with a data-dependent or non-affine index", "count/point")    \
  X(access_transposed, "call sites indexing dimensions in another order", "count/point")     \
  X(access_strided, "call sites with a stride other than 0 or 1", "count/point")             \
  X(access_broadcast, "call sites not indexed by some pure variable", "count/point")         \
  X(access_pointwise, "call sites indexed in order with stride 1", "count/point")            \
  X(arithmetic_per_point, "operations other than loads, constants and linear index math",     \
    "ops/point")                                                                             \
  X(bytes_loaded_per_point, "bytes of every load per point (before any reuse)", "bytes/point") \
  X(num_producers, "distinct Funcs and inputs read, own Func excluded", "count")              \
  X(is_update, "1 for an update stage", "flag")                                              \
  X(is_output, "1 for a stage of an output Func", "flag")                                    \
  X(inlinable, "1 when the Func may be inlined", "flag")                                     \
  X(num_pure_vars, "pure loop variables", "count")                                           \
  X(num_rvars, "reduction variables", "count")                                               \
  X(reduction_points, "points of the reduction domain (1 without one)", "points")            \
  X(value_bytes, "bytes of one point of the Func (all tuple elements)", "bytes")             \
  X(root_points, "points of the stage when its Func is computed at root", "points")

#define PROTUNER_SCHEDULED_FEATURES(X)                                                       \
  X(decided, "1 when the Func is decided in this state", "flag")                             \
  X(inlined, "1 when the Func is inlined (every other feature is then 0)", "flag")           \
  X(at_root, "1 when computed at root", "flag")                                              \
  X(compute_depth, "loops enclosing the computation (0 at root)", "loops")                   \
  X(store_depth, "loops enclosing the storage (0 at root)", "loops")                         \
  X(productions, "times the Func is computed (realizations of its compute loop)", "count")   \
  X(realizations, "times the Func's storage is allocated", "count")                          \
  X(points_per_production, "stage points computed per production", "points")                \
  X(points_per_realization, "stage points computed per allocation", "points")                \
  X(points_total, "stage points over the run, recompute included, slid windows not", "points") \
  X(recompute_ratio, "points_total / root_points (1: no recompute)", "ratio")                \
  X(num_loops, "loops of the stage's own nest", "loops")                                     \
  X(innermost_serial_extent, "extent of the innermost loop that is not vectorized or unrolled", "iterations") \
  X(innermost_serial_walks_x, "1 when that loop walks the innermost variable (unit stride)", "flag") \
  X(body_executions, "executions of the innermost vector/unrolled block over the run", "count") \
  X(parallel_tasks, "iterations of the stage's own parallel loop (1: serial)", "tasks")      \
  X(outer_parallelism, "tasks the stage runs in: own, else of an enclosing parallel loop", "tasks") \
  X(core_utilization, "work of the tasks / (cores x the slowest core's time): how well tasks "     \
    "fill the cores (a guarded partial last tile is a smaller task)", "ratio")                 \
  X(parallel_launches, "parallel loops started over the run (productions with own parallel loop)", "count") \
  X(inside_parallel, "1 when computed inside a parallel loop", "flag")                       \
  X(vector_width, "lanes of the vectorized loop (1: none)", "lanes")                         \
  X(native_vector_width, "lanes of one native vector of the stage's widest type", "lanes")   \
  X(lane_utilization, "used lanes / lanes of the native vectors they occupy", "ratio")       \
  X(unrolled_extent, "product of unrolled loop extents", "iterations")                       \
  X(inner_parallelism, "vector_width x unrolled_extent: independent points per block", "points") \
  X(ops_per_point, "arithmetic per point, inlined Funcs folded in", "ops/point")             \
  X(vector_ops_total, "native vector instructions of arithmetic (rounded-up tails too)", "ops") \
  X(scalar_ops_total, "scalar arithmetic over the run (unvectorized, guarded tails)", "ops")   \
  X(loads_per_point, "memory reads per point after inlining", "loads/point")                 \
  X(gather_loads_per_point, "reads per point a vector gathers lane by lane (a non-affine "    \
    "index reads the vectorized variable 0, an index but the innermost moves with it, a "    \
    "shared clamp; the vectors straddling a boundary condition's edges, a share)",           \
    "loads/point")                                                                            \
  X(inlined_calls, "calls of inlined Funcs folded in per point (recursively)", "calls/point") \
  X(inlined_ops_per_point, "arithmetic per point that inlining added", "ops/point")         \
  X(bytes_read_per_production, "unique bytes of producers read by one production", "bytes")  \
  X(lines_read_per_production, "cache lines of producers read by one production", "lines")   \
  X(bytes_read_per_realization, "unique bytes read per allocation of the Func", "bytes")     \
  X(lines_read_per_realization, "cache lines read per allocation of the Func", "lines")      \
  X(bytes_read_per_vector, "unique bytes read per native vector of the innermost block", "bytes") \
  X(lines_read_per_vector, "cache lines read per native vector of the innermost block", "lines") \
  X(bytes_read_per_task, "unique bytes read per parallel task (per production if serial)", "bytes") \
  X(lines_read_per_task, "cache lines read per parallel task (per production if serial)", "lines") \
  X(bytes_read_total, "bytes_read_per_production x productions", "bytes")                     \
  X(bytes_written_per_production, "bytes of the Func written by one production of the stage", "bytes") \
  X(working_set_block, "bytes read and written by one innermost block", "bytes")             \
  X(working_set_level1, "bytes touched by one iteration of the loop around the block", "bytes") \
  X(working_set_level2, "the same, one loop further out", "bytes")                           \
  X(working_set_level3, "the same, two loops further out", "bytes")                          \
  X(working_set_production, "bytes touched by one whole production", "bytes")                \
  X(traffic_beyond_l1, "bytes over the run that must come from beyond L1 (reuse model)", "bytes") \
  X(traffic_beyond_l2, "bytes over the run that must come from beyond L2", "bytes")          \
  X(traffic_beyond_l3, "bytes over the run that must come from memory", "bytes")             \
  X(memory_streams, "contiguous runs of at most a page in traffic_beyond_l3: where "           \
    "the prefetchers start over", "runs")                                                     \
  X(alloc_bytes, "bytes of one allocation (stage 0, not outputs: the caller's)", "bytes")    \
  X(alloc_bytes_total, "alloc_bytes x realizations (stage 0 only)", "bytes")                 \
  X(store_at_root, "1 when stored at root", "flag")                                           \
  X(block_loads, "load instructions of one innermost block: a read shared by its unrolled "  \
    "points loaded once, an update's own values kept in registers across a reduction loop "  \
    "around it loaded once per pass (gathers not counted)", "loads")                         \
  X(block_stores, "store instructions of one innermost block, the same way", "stores")        \
  X(block_accumulators, "vector registers of the values one innermost block computes", "registers") \
  X(accumulators_in_registers, "1 when an update's own values stay in registers across the " \
    "serial loop around its block: they fit, and LLVM tells their addresses apart (one row, "  \
    "or rows whose stride Halide knows as a constant)", "flag")                              \
  X(block_waits_for_previous, "1 when each iteration of that serial loop needs the values "  \
    "the one before computed (an update reading its own values along a reduction loop)", "flag")
// clang-format on

enum class InvariantFeature : int {
#define PROTUNER_X(name, meaning, units) name,
  PROTUNER_INVARIANT_FEATURES(PROTUNER_X)
#undef PROTUNER_X
      kCount
};
enum class ScheduledFeature : int {
#define PROTUNER_X(name, meaning, units) name,
  PROTUNER_SCHEDULED_FEATURES(PROTUNER_X)
#undef PROTUNER_X
      kCount
};
constexpr int kNumInvariantFeatures = static_cast<int>(InvariantFeature::kCount);
constexpr int kNumScheduledFeatures = static_cast<int>(ScheduledFeature::kCount);

struct FeatureInfo {
  const char *name, *meaning, *units;
};
const FeatureInfo &feature_info(InvariantFeature f);
const FeatureInfo &feature_info(ScheduledFeature f);

using ScheduledFeatures = std::array<float, kNumScheduledFeatures>;

struct StageFeatures {
  int func = 0;   // PipelineGraph index
  int stage = 0;  // stage of that Func
  std::array<float, kNumInvariantFeatures> invariant{};
  ScheduledFeatures scheduled{};

  float operator[](InvariantFeature f) const { return invariant[static_cast<int>(f)]; }
  float operator[](ScheduledFeature f) const { return scheduled[static_cast<int>(f)]; }
};

// How many times one core's speed a stage runs at on `cores` cores: the cost models'
// reading of core_utilization.
inline double parallel_speedup(const StageFeatures &s, int cores) {
  return std::max(1.0, static_cast<double>(s[ScheduledFeature::core_utilization]) * cores);
}

struct PipelineFeatures {
  std::vector<StageFeatures> stages;  // every stage of every Func, in graph order
  // (producer node, consumer node) indices into stages: a stage reading a Func depends on
  // its last stage; each update depends on the stage before it.
  std::vector<std::pair<int, int>> edges;
};

// What featurizing one decided Func gives: its stages' features, and the bytes one
// production of it touches (its allocation, and what it reads of other Funcs and inputs
// meanwhile), which decide whether its consumers find its values in a cache.
struct FuncFeatures {
  std::vector<ScheduledFeatures> stages;
  double production_bytes = 0;
};

// Memoized schedule-dependent features (see the file comment). Holds copies of the states
// it learned from, so the decision entries its keys point at stay alive and their
// addresses stay unique. Cleared whole when it grows past `max_entries`, or past
// max_entries / kEntriesPerState kept states (each holds a pointer per decided Func).
class FeatureCache {
 public:
  static constexpr size_t kEntriesPerState = 8;
  explicit FeatureCache(size_t max_entries = 1 << 18) : max_entries_(max_entries) {}
  void clear();
  size_t size() const { return entries_.size(); }
  int64_t hits() const { return hits_; }
  int64_t misses() const { return misses_; }

 private:
  friend class Featurizer;
  struct Key {
    const FuncBounds *decided;   // identity of the Func's decision entry
    std::vector<int> inlined;    // Funcs folded into it, sorted
    // The producers it reads whose values stay in a cache, as producer * 4 + cache
    // level, sorted: its memory traffic depends on them.
    std::vector<int> resident;
    // Its storage dimensions whose strides Halide knows (featurizer.cpp's
    // constant_stride_dimensions): whether the tiles it is stored in are whole depends on
    // windows that Funcs decided after it slide there.
    int constant_stride_dims = 1;
    bool operator==(const Key &o) const {
      return decided == o.decided && inlined == o.inlined && resident == o.resident &&
             constant_stride_dims == o.constant_stride_dims;
    }
  };
  struct KeyHash {
    size_t operator()(const Key &k) const;
  };
  size_t max_entries_;
  std::unordered_map<Key, FuncFeatures, KeyHash> entries_;
  std::vector<ScheduleState> keep_alive_;
  int64_t hits_ = 0, misses_ = 0;
};

class Featurizer {
 public:
  Featurizer(std::shared_ptr<const PipelineGraph> graph, MachineModel machine = {});

  const PipelineGraph &graph() const { return *graph_; }
  const MachineModel &machine() const { return machine_; }

  // Features of `state` (its graph must be this Featurizer's: std::invalid_argument
  // otherwise). Undecided Funcs get their invariant features and zero scheduled ones; a
  // decided Func whose producers are undecided reads them from memory.
  PipelineFeatures featurize(const ScheduleState &state) const;
  // The same, reusing and filling `cache`. Gives exactly the features featurize() gives.
  PipelineFeatures featurize(const ScheduleState &state, FeatureCache &cache) const;

  // The stage nodes with invariant features only, and the edges: what every state shares.
  const PipelineFeatures &invariant() const { return invariant_; }

 private:
  // `found_in` holds, per Func, the cache level its consumers find its values in (1: L1,
  // 2: L2, 3: L3; 0: memory), for every producer of f.
  FuncFeatures func_features(const ScheduleState &state, int f,
                             const std::vector<int> &found_in) const;
  // The Funcs folded into f by inlining, sorted: with f's decision entry, its cache key.
  std::vector<int> inlined_into(const ScheduleState &state, int f) const;
  // FeatureCache::Key::resident of f, whose inlined producers are `inlined`.
  std::vector<int> resident_producers(const ScheduleState &state, int f,
                                      const std::vector<int> &inlined,
                                      const std::vector<int> &found_in) const;
  PipelineFeatures assemble(const ScheduleState &state, FeatureCache *cache) const;

  std::shared_ptr<const PipelineGraph> graph_;
  MachineModel machine_;
  PipelineFeatures invariant_;
  std::vector<int> first_node_;  // node index of each Func's stage 0
};

}  // namespace protuner
