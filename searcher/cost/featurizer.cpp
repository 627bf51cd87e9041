#include "searcher/cost/featurizer.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "common/schedule/schedule_directives.h"
#include "searcher/space/search_space.h"

namespace protuner {
namespace {

// Share of a cache a loop's working set may fill and still be reused across that loop's
// iterations: the rest goes to other data, associativity conflicts and the prefetcher.
constexpr double kUsableCacheFraction = 0.5;

const FeatureInfo kInvariantInfo[] = {
#define PROTUNER_X(name, meaning, units) {#name, meaning, units},
    PROTUNER_INVARIANT_FEATURES(PROTUNER_X)
#undef PROTUNER_X
};
const FeatureInfo kScheduledInfo[] = {
#define PROTUNER_X(name, meaning, units) {#name, meaning, units},
    PROTUNER_SCHEDULED_FEATURES(PROTUNER_X)
#undef PROTUNER_X
};

// Reads of one producer with one index shape after inlining: the call sites differ only
// by constant offsets, so their footprints overlap (a stencil's taps). Inlining composes
// whole groups, never single reads: a chain of inlined stencils multiplies the taps, not
// the groups, and featurizing a random schedule must stay cheap (`build/bin/featurizer_benchmark`).
struct ReadGroup {
  int producer = -1;  // graph index, -1 for an input buffer
  Access shape;       // index coefficients over the stage's loop variables; offsets unused
  int bytes = 0;      // of the group's first read
  double reads = 0;   // call sites in the group
  std::vector<double> min_offset, max_offset;
  // Per dimension: the extent a gathered index may reach (0: unknown): the producer's
  // region, or fewer where the index's own arithmetic bounds it (Access::reach).
  std::vector<double> whole;
  // Bit d: index d's hand-written clamp (Access::clamps) is shared with other loads, so
  // vectors along it gather.
  uint64_t shared_clamps = 0;
};

// The smaller of two extents of which 0 means unknown (ReadGroup::whole, Access::reach).
double min_known(double a, double b) { return a <= 0 ? b : b <= 0 ? a : std::min(a, b); }

// A stream of memory accesses is prefetched at most this far on: the hardware prefetchers
// follow a stream within one 4 KiB page, and start over at every page and every jump.
constexpr double kStreamBytes = 4096;

// Bytes and cache lines of a set of reads over a box of the stage's loop variables, and
// the streams they make: contiguous runs of at most kStreamBytes.
struct Traffic {
  double bytes = 0, lines = 0, streams = 0;
  double row_bytes = 0;  // of one row of the innermost dimension
};

// Streams of `rows` rows of `row_bytes` contiguous bytes each.
double streams_of(double rows, double row_bytes) {
  return rows * std::ceil(row_bytes / kStreamBytes);
}

double box_points(const Region &box) {
  double n = 1;
  for (const Span &s : box) n *= static_cast<double>(s.extent());
  return n;
}

// The traffic of one group's reads over `box`, of `loop_points` points.
Traffic group_traffic(const ReadGroup &g, const Region &box, double loop_points, int line_bytes) {
  const Access &a = g.shape;
  double points = 1, e0 = 1;
  bool gathered0 = false;
  for (size_t d = 0; d < a.coefficients.size(); ++d) {
    double extent;
    if (a.affine[d]) {
      extent = 1 + (g.max_offset[d] - g.min_offset[d]);
      for (size_t v = 0; v < box.size(); ++v) {
        extent += std::abs(a.coefficients[d][v]) * static_cast<double>(box[v].extent() - 1);
      }
    } else {
      // At most one index per point of the box's variables the index reads.
      double reach = 1;
      for (size_t v = 0; v < box.size() && v < 64; ++v) {
        if (a.index_vars[d] >> v & 1) reach *= static_cast<double>(box[v].extent());
      }
      extent = min_known(g.whole[d], reach);
      if (d == 0) gathered0 = true;
    }
    extent = std::max(extent, 1.0);
    points *= extent;
    if (d == 0) e0 = extent;
  }
  // Each call site reads one element per point of the box, however its gathered indices
  // spread: a bound where each gathered index reads many of the box's variables.
  points = std::min(points, std::max(loop_points * g.reads, e0));
  Traffic t;
  t.bytes = points * g.bytes;
  // Rows of the innermost dimension, each a whole number of lines; gathered elements
  // each take a line of their own, and follow no stream.
  t.lines = gathered0 ? points : (points / e0) * std::ceil(e0 * g.bytes / line_bytes);
  t.streams = gathered0 ? 0 : streams_of(points / e0, e0 * g.bytes);
  t.row_bytes = e0 * g.bytes;
  return t;
}

// Calls add(group index, Traffic of that group) for every group's reads over `box`.
template <typename Fn>
void traffic_by_group(const std::vector<ReadGroup> &groups, const Region &box, int line_bytes,
                      const Fn &add) {
  const double loop_points = box_points(box);
  for (size_t i = 0; i < groups.size(); ++i) {
    add(i, group_traffic(groups[i], box, loop_points, line_bytes));
  }
}

}  // namespace

const FeatureInfo &feature_info(InvariantFeature f) { return kInvariantInfo[static_cast<int>(f)]; }
const FeatureInfo &feature_info(ScheduledFeature f) { return kScheduledInfo[static_cast<int>(f)]; }

size_t FeatureCache::KeyHash::operator()(const Key &k) const {
  size_t h = std::hash<const void *>()(k.decided);
  for (int i : k.inlined) h = h * 1000003u ^ static_cast<size_t>(i);
  for (int i : k.resident) h = h * 1000003u ^ static_cast<size_t>(i);
  return h * 31u + static_cast<size_t>(k.constant_stride_dims);
}

void FeatureCache::clear() {
  entries_.clear();
  keep_alive_.clear();
}

Featurizer::Featurizer(std::shared_ptr<const PipelineGraph> graph, MachineModel machine)
    : graph_(std::move(graph)), machine_(machine) {
  if (!graph_) throw std::invalid_argument("Featurizer needs a pipeline graph");
  const PipelineGraph &g = *graph_;
  for (size_t f = 0; f < g.funcs.size(); ++f) {
    first_node_.push_back(static_cast<int>(invariant_.stages.size()));
    const FuncNode &node = g.funcs[f];
    for (size_t s = 0; s < node.stages.size(); ++s) {
      const StageNode &st = node.stages[s];
      StageFeatures sf;
      sf.func = static_cast<int>(f);
      sf.stage = static_cast<int>(s);
      auto set = [&](InvariantFeature k, double v) {
        sf.invariant[static_cast<int>(k)] = static_cast<float>(v);
      };
      for (int k = 0; k < kNumOpKinds; ++k) {
        set(static_cast<InvariantFeature>(static_cast<int>(InvariantFeature::op_add) + k),
            st.ops.count(static_cast<OpKind>(k)));
      }
      for (int t = 0; t < kNumOpTypes; ++t) {
        set(static_cast<InvariantFeature>(static_cast<int>(InvariantFeature::type_bool) + t),
            st.ops.count(static_cast<OpType>(t)));
      }
      double bytes = 0;
      std::vector<std::string> producers;
      for (const Access &a : st.ops.accesses) {
        const int p = static_cast<int>(InvariantFeature::access_gather) + static_cast<int>(a.pattern);
        sf.invariant[p] += 1;
        bytes += op_type_bytes(a.type);
        if (!a.is_self) producers.push_back(a.producer);
      }
      std::sort(producers.begin(), producers.end());
      producers.erase(std::unique(producers.begin(), producers.end()), producers.end());
      set(InvariantFeature::arithmetic_per_point, st.ops.arithmetic());
      set(InvariantFeature::bytes_loaded_per_point, bytes);
      set(InvariantFeature::num_producers, static_cast<double>(producers.size()));
      set(InvariantFeature::is_update, s > 0);
      set(InvariantFeature::is_output, node.is_output);
      set(InvariantFeature::inlinable, node.inlinable());
      set(InvariantFeature::num_pure_vars, st.num_pure);
      set(InvariantFeature::num_rvars, static_cast<double>(st.rvar_region.size()));
      set(InvariantFeature::reduction_points, box_points(st.rvar_region));
      set(InvariantFeature::value_bytes, value_bytes(node));
      set(InvariantFeature::root_points, box_points(st.loop_region(node.root_region)));
      invariant_.stages.push_back(sf);
    }
  }
  for (size_t f = 0; f < g.funcs.size(); ++f) {
    const FuncNode &node = g.funcs[f];
    for (size_t s = 0; s < node.stages.size(); ++s) {
      const int me = first_node_[f] + static_cast<int>(s);
      if (s > 0) invariant_.edges.emplace_back(me - 1, me);
      std::vector<int> seen;
      for (const Access &a : node.stages[s].ops.accesses) {
        const int p = a.is_input || a.is_self ? -1 : g.find(a.producer);
        if (p < 0 || std::find(seen.begin(), seen.end(), p) != seen.end()) continue;
        seen.push_back(p);
        invariant_.edges.emplace_back(
            first_node_[p] + static_cast<int>(g.funcs[p].stages.size()) - 1, me);
      }
    }
  }
}

namespace {

bool is_inlined(const ScheduleState &state, int f) {
  return f < state.num_decided() && state.decision(f).placement == Placement::kInline;
}

// The caches: L1, L2, L3.
constexpr int kCacheLevels = 3;

// Reads of a stage after folding in every inlined producer, with the arithmetic and the
// number of inlined calls that folding adds (per point of the stage).
struct Folded {
  std::vector<ReadGroup> groups;  // in order of first read
  double arithmetic = 0;
  double inlined_calls = 0;
  double reads = 0;  // call sites left after inlining
  // Bit v: more than one load reads loop variable v. An argument an inlined call clamps
  // is a let those loads share.
  uint64_t vars_read_by_several = 0;
};

// Whether a read gathers, lane by lane, in vectors of the stage's vectorized variable (its
// loop variable `vector_var`: 0, or the innermost reduction variable of a reduction in
// lanes): some index that is not affine, or clamped by a clamp other loads
// share, reads that variable, or an index of a dimension other than the innermost moves
// with it (a transposed read: each lane another row). Otherwise each vector loads
// contiguous or equal addresses (or, at a small stride along the innermost dimension,
// loads densely and shuffles): bgu's transform, gathered by a pixel's cell, is loaded
// densely by a vector along its 12 coefficients. interpolate's clamped level read through
// its inlined producer, with four loads at the clamped x, runs much slower than realized,
// with one load. Halide 14 compiles a transposed vector read to a scalar load and an
// insert per lane; iir_blur's candidates that scan a transposed read inline run slower
// than predicted against those that transpose first, and counting it as a gather (at 2
// cycles a lane, analytic_model.h) ranks iir_blur's pairs clearly better
// (`Featurizer.AReadAcrossRowsAlongTheVectorGathers`; `protuner evaluate --model analytic
// --data searcher/cost/learned/data/suite_candidates.jsonl` prints the ranking per app).
bool gathers_along_vectors(const ReadGroup &g, int vector_var = 0) {
  const Access &a = g.shape;
  const size_t v = static_cast<size_t>(vector_var);
  for (size_t d = 0; d < a.affine.size(); ++d) {
    if (!a.affine[d] && v < 64 && (a.index_vars[d] >> v & 1)) return true;
    // An affine index moving with the vectorized variable (a gathered index's row is
    // zeros): across rows every lane reads another row; along the innermost dimension
    // only a shared clamp makes the lanes gather.
    const bool moves = a.coefficients[d].size() > v && a.coefficients[d][v] != 0;
    if (moves && (d > 0 || (g.shared_clamps & 1))) return true;
  }
  return false;
}

// The share of a stage's points at which a read through a boundary condition's clamp of
// the innermost index (Access::edge_clamped), dense elsewhere, gathers in vectors of
// `vw` lanes along the stage's variable 0. Halide splits the vectorized loop where the
// clamp starts and stops binding, but the vector that straddles each edge keeps the clamp
// and loads lane by lane: one vector at each end of every row of the Func's whole region
// (`row`, its root extent along variable 0; realizations inside it find the split's edge
// loops empty). The clamp binds only where the row, with the group's offsets, reaches
// past its producer's region (ReadGroup::whole). An input buffer read directly has no
// known region: a boundary condition is written for reads that pass its edges, so they
// count as passing them.
// With 32 lanes on depthwise_conv's 114-wide padded plane, half its vectors gather, and
// the copy runs 1.6x as long as with 16 lanes (`build/bin/search_probe depthwise_conv
// --library <corpus> --assembly DIR --schedule F` shows the lane-by-lane loads).
double edge_gather_share(const ReadGroup &g, double vw, int64_t row) {
  const Access &a = g.shape;
  if (a.edge_clamped.empty() || !a.edge_clamped[0] || !a.affine[0] || row <= 0) return 0;
  const double step = a.coefficients[0].empty() ? 0 : std::abs(a.coefficients[0][0]);
  if (step == 0) return 0;
  const double reach = step * static_cast<double>(row - 1) + 1 + (g.max_offset[0] - g.min_offset[0]);
  if (g.whole[0] > 0 && reach <= g.whole[0]) return 0;
  return std::min(1.0, 2 * vw / static_cast<double>(row));
}

// Whether a group stands for loads at more than one place along some dimension but `d`.
bool spans_beyond(const ReadGroup &g, size_t d) {
  for (size_t e = 0; e < g.min_offset.size(); ++e) {
    if (e != d && g.min_offset[e] != g.max_offset[e]) return true;
  }
  return false;
}

// Sets ReadGroup::shared_clamps: a clamp is shared when its group loads at several places
// that differ in another index (a vertical stencil over a clamped x), or when another
// group's index passes the same clamp of the same affine index.
void mark_shared_clamps(std::vector<ReadGroup> &groups) {
  for (ReadGroup &g : groups) {
    const Access &a = g.shape;
    for (size_t d = 0; d < a.clamps.size() && d < 64; ++d) {
      if (a.clamps[d] == 0 || (g.shared_clamps >> d & 1)) continue;
      bool shared = spans_beyond(g, d);
      for (const ReadGroup &h : groups) {
        if (shared) break;
        if (&h == &g) continue;
        for (size_t e = 0; e < h.shape.clamps.size() && !shared; ++e) {
          shared = h.shape.clamps[e] == a.clamps[d] &&
                   h.shape.coefficients[e] == a.coefficients[d] &&
                   h.min_offset[e] <= g.max_offset[d] && g.min_offset[d] <= h.max_offset[e];
        }
      }
      if (shared) g.shared_clamps |= uint64_t{1} << d;
    }
  }
}

// Adds `group` to `groups`: merged into the group of the same producer and shape, whose
// first read keeps deciding the byte count, else appended.
void add_group(std::vector<ReadGroup> &groups, ReadGroup &&group) {
  for (ReadGroup &g : groups) {
    if (g.producer != group.producer || g.shape.coefficients != group.shape.coefficients ||
        g.shape.affine != group.shape.affine || g.shape.index_vars != group.shape.index_vars ||
        g.shape.clamps != group.shape.clamps || g.shape.producer != group.shape.producer) {
      continue;
    }
    g.reads += group.reads;
    g.shared_clamps |= group.shared_clamps;
    for (size_t d = 0; d < g.shape.edge_clamped.size() && d < group.shape.edge_clamped.size(); ++d) {
      if (group.shape.edge_clamped[d]) g.shape.edge_clamped[d] = true;
    }
    for (size_t d = 0; d < g.min_offset.size(); ++d) {
      g.min_offset[d] = std::min(g.min_offset[d], group.min_offset[d]);
      g.max_offset[d] = std::max(g.max_offset[d], group.max_offset[d]);
    }
    return;
  }
  groups.push_back(std::move(group));
}

// How many values index d of `inner` (affine in p's variables) takes where `call` gathers
// every variable it moves with, each over its Access::reach: 0 when some such variable is
// called with an affine index or an unbounded gather (its extent is then the box's).
double composed_reach(const ReadGroup &inner, size_t d, const Access &call,
                      const StageNode &p_stage) {
  if (!inner.shape.affine[d]) return 0;
  double extent = 1 + (inner.max_offset[d] - inner.min_offset[d]);
  for (size_t j = 0; j < inner.shape.coefficients[d].size(); ++j) {
    const double c = inner.shape.coefficients[d][j];
    if (c == 0) continue;
    const size_t dim = static_cast<size_t>(p_stage.pure_dims[j]);
    if (call.affine[dim] || dim >= call.reach.size() || call.reach[dim] <= 0) return 0;
    extent += std::abs(c) * (call.reach[dim] - 1);
  }
  return extent;
}

// `inner` (reads inside inlined Func p, over p's loop variables) seen through `call` (the
// consumer's call of p, over the consumer's loop variables): index coefficients compose,
// and every offset of the group moves by what the call's offsets contribute. A clamp in
// the call joins the clamps of the indices it feeds, and is shared when p loads more than
// once along the variable it clamps (`p_several`: Folded::vars_read_by_several).
ReadGroup compose(const ReadGroup &inner, const Access &call, const StageNode &p_stage,
                  uint64_t p_several, int num_pure) {
  ReadGroup out;
  out.producer = inner.producer;
  out.bytes = inner.bytes;
  out.reads = inner.reads;
  out.whole = inner.whole;
  out.shape.producer = inner.shape.producer;
  out.shape.is_input = inner.shape.is_input;
  out.shape.is_self = inner.shape.is_self;
  out.shape.type = inner.shape.type;
  const size_t dims = inner.shape.coefficients.size();
  const size_t nv = call.coefficients.empty() ? 0 : call.coefficients[0].size();
  out.shape.coefficients.assign(dims, std::vector<double>(nv, 0.0));
  out.shape.affine.assign(dims, false);
  out.min_offset.assign(dims, 0.0);
  out.max_offset.assign(dims, 0.0);
  out.shape.index_vars.assign(dims, 0);
  out.shape.clamps = inner.shape.clamps;
  out.shape.edge_clamped = inner.shape.edge_clamped;
  out.shape.edge_clamped.resize(dims, false);
  out.shared_clamps = inner.shared_clamps;
  for (size_t d = 0; d < dims; ++d) {
    // The consumer's variables that the indices of p's variables in this index read.
    for (size_t j = 0; j < p_stage.pure_dims.size() && j < 64; ++j) {
      if (inner.shape.index_vars[d] >> j & 1) {
        const int dim = p_stage.pure_dims[j];
        out.shape.index_vars[d] |= call.index_vars[dim];
        if (static_cast<size_t>(dim) < call.edge_clamped.size() && call.edge_clamped[dim]) {
          out.shape.edge_clamped[d] = true;
        }
        if (static_cast<size_t>(dim) >= call.clamps.size() || call.clamps[dim] == 0) continue;
        out.shape.clamps[d] = join_clamps(out.shape.clamps[d], call.clamps[dim]);
        if ((p_several >> j & 1) && d < 64) out.shared_clamps |= uint64_t{1} << d;
      }
    }
    std::vector<double> &row = out.shape.coefficients[d];
    double shift = 0;
    bool affine = inner.shape.affine[d];
    for (size_t j = 0; j < inner.shape.coefficients[d].size() && affine; ++j) {
      const double c = inner.shape.coefficients[d][j];
      if (c == 0) continue;
      const int dim = p_stage.pure_dims[j];
      if (!call.affine[dim]) {
        affine = false;
        break;
      }
      for (size_t v = 0; v < nv; ++v) row[v] += c * call.coefficients[dim][v];
      shift += c * call.offsets[dim];
    }
    if (!affine) {
      std::fill(row.begin(), row.end(), 0.0);
      out.whole[d] = min_known(out.whole[d], composed_reach(inner, d, call, p_stage));
      continue;
    }
    out.shape.affine[d] = true;
    out.min_offset[d] = inner.min_offset[d] + shift;
    out.max_offset[d] = inner.max_offset[d] + shift;
  }
  out.shape.pattern = classify_access(out.shape.coefficients, out.shape.affine, num_pure);
  return out;
}

// The group of one of a stage's own reads.
ReadGroup direct_group(const PipelineGraph &g, const Access &a, int producer) {
  ReadGroup out;
  out.producer = producer;
  out.shape = a;
  out.bytes = op_type_bytes(a.type);
  out.reads = 1;
  out.min_offset = a.offsets;
  out.max_offset = a.offsets;
  const Region &root = producer >= 0 ? g.funcs[producer].root_region : Region{};
  for (size_t d = 0; d < a.coefficients.size(); ++d) {
    const double whole = d < root.size() ? static_cast<double>(root[d].extent()) : 0.0;
    out.whole.push_back(min_known(whole, d < a.reach.size() ? a.reach[d] : 0.0));
  }
  return out;
}

// Whether the index of a group's reads moves with stage loop variable v.
bool reads_variable(const ReadGroup &group, int v) {
  const Access &a = group.shape;
  for (size_t d = 0; d < a.coefficients.size(); ++d) {
    if (v < static_cast<int>(a.coefficients[d].size()) && a.coefficients[d][v] != 0) return true;
    if (!a.affine[d] && v < 64 && (a.index_vars[d] >> v & 1)) return true;
  }
  return false;
}

// Bit v: more than one of `groups`' loads (same-place reads count once) reads variable v.
uint64_t vars_read_by_several(const std::vector<ReadGroup> &groups, size_t num_vars) {
  uint64_t once = 0, several = 0;
  for (const ReadGroup &r : groups) {
    for (int v = 0; v < 64 && v < static_cast<int>(num_vars); ++v) {
      if (!reads_variable(r, v)) continue;
      const uint64_t bit = uint64_t{1} << v;
      if ((once & bit) || spans_beyond(r, SIZE_MAX)) several |= bit;
      once |= bit;
    }
  }
  return several;
}

// Folds stage s of f. `memo` holds the folds of inlined Funcs (always their stage 0)
// already computed for this state, since a stencil calls the same Func at every tap.
const Folded &fold(const ScheduleState &state, int f, int s, int num_pure,
                   std::vector<std::unique_ptr<Folded>> &memo, Folded &out) {
  const PipelineGraph &g = state.graph();
  const StageNode &stage = g.funcs[f].stages[s];
  out.arithmetic = stage.ops.arithmetic();
  for (const Access &a : stage.ops.accesses) {
    const int p = a.is_input ? -1 : a.is_self ? f : g.find(a.producer);
    if (p < 0 || p == f || !is_inlined(state, p)) {
      add_group(out.groups, direct_group(g, a, p));
      continue;
    }
    if (!memo[p]) {
      memo[p] = std::make_unique<Folded>();
      fold(state, p, 0, g.funcs[p].stages[0].num_pure, memo, *memo[p]);
      memo[p]->vars_read_by_several =
          vars_read_by_several(memo[p]->groups, g.funcs[p].stages[0].loop_vars.size());
    }
    const Folded &inner = *memo[p];
    out.arithmetic += inner.arithmetic;
    out.inlined_calls += 1 + inner.inlined_calls;
    for (const ReadGroup &r : inner.groups) {
      add_group(out.groups,
                compose(r, a, g.funcs[p].stages[0], inner.vars_read_by_several, num_pure));
    }
  }
  mark_shared_clamps(out.groups);
  for (const ReadGroup &r : out.groups) out.reads += r.reads;
  return out;
}

// Memory instructions of one execution of a stage's innermost block (the unrolled and
// vectorized loops inside its innermost serial loop), as LLVM emits them after its own
// clean-up: a read whose index does not move with an unrolled loop is loaded once for all
// that loop's iterations, one along a vectorized variable is a vector load per native
// vector, any other read a scalar broadcast; gathers are counted on their own
// (gather_loads_per_point). An update's own values whose index does not move with the
// serial loop (a reduction loop around the block) stay in registers across it when they fit,
// and are then loaded and stored once per pass of that loop instead of per iteration (LLVM
// promotes them to registers). That is what register-blocked schedules buy: mat_mul with
// an 8 x 2-vector block inside the reduction runs several times faster than with the same
// block inside a loop over rows inside the reduction, where the plain per-point counts see
// no difference.
// Each iteration of the serial loop waits for the one before when the stage reads its own
// values and that loop walks a reduction variable: in place (a sum into the block's
// accumulators) or along the scan (iir_blur's columns read the row the last iteration
// wrote). The block's vectors are then as many independent chains, and a block takes at
// least one round trip of the chain: an arithmetic latency in registers, a store, a
// forwarded load and the arithmetic otherwise. Of two iir_blur candidates the plain counts
// predict alike, the one scanning one vector per block runs much slower than the one
// scanning two (their schedules differ elsewhere too).
//
// A chain this many iterations long or shorter overlaps the next block's in the core's
// out-of-order window (about 200 instructions on the machine class): nl_means' patch sums
// over 7 taps one vector wide run at the throughput the plain counts predict, and counting
// their chains ranks its pairs worse.
constexpr int64_t kOutOfOrderHiddenIterations = 16;

struct BlockMemory {
  double loads = 0, stores = 0;
  double accumulators = 0;  // vector registers of the block's own values
  bool in_registers = false;
  bool carried = false;  // the serial loop carries a dependence through its own values
};

// LLVM keeps a block's accumulators in registers across the serial loop only where it can
// tell their addresses apart: offsets along the innermost storage dimension are constants,
// but those along dimension d are multiples of its stride, the product of the extents of
// the dimensions below d: a constant only where Halide knows each of those extents as one
// (`constant_stride_dims`, constant_stride_dimensions). conv_layer's update at root, a
// block of 16 x 4 x 4 (co, x, n) points, loads and stores every accumulator per reduction
// step and runs several times slower than blocks of one or two vectors along co, which
// keep theirs in registers, as a block of 32 x 4 in a tile-sized buffer does.
BlockMemory block_memory(const std::vector<Loop> &loops, int serial, const StageNode &stage,
                         const std::vector<ReadGroup> &groups, int f, double vectors_per_vw,
                         int registers, int constant_stride_dims, int vector_var) {
  // Registers or loads one read takes over the block (the loops after `serial`): per
  // native vector along a vectorized variable, times each unrolled loop its index moves with.
  auto count = [&](const ReadGroup *g, bool stored_values) {
    double n = 1;
    for (size_t i = serial + 1; i < loops.size(); ++i) {
      const Loop &l = loops[i];
      bool moves = false;
      for (int v : l.vars) {
        moves = moves || (stored_values ? v < stage.num_pure : reads_variable(*g, v));
      }
      if (!moves) continue;
      n *= l.vectorized ? vectors_per_vw : l.unrolled ? static_cast<double>(l.extent) : 1.0;
    }
    return n;
  };
  BlockMemory out;
  const ReadGroup *own = nullptr;
  // Loads whose index does not move with the serial loop, a register each: LLVM hoists
  // them out of it when they fit (palette_quantize's argmin keeps its pixel's three
  // channels in registers across the palette loop: a per-point count predicted its own
  // schedule's loop at twice the loads its assembly has).
  double invariant_loads = 0;
  for (const ReadGroup &g : groups) {
    if (gathers_along_vectors(g, vector_var)) continue;
    if (stage.index > 0 && g.producer == f && g.shape.is_self) {
      own = &g;
      continue;
    }
    bool moves = serial < 0;
    if (!moves) {
      for (int v : loops[serial].vars) moves = moves || reads_variable(g, v);
    }
    (moves ? out.loads : invariant_loads) += g.reads * count(&g, false);
  }
  out.stores = count(nullptr, true);
  out.accumulators = out.stores;
  const double own_loads = own ? own->reads * count(own, false) : 0;
  bool invariant = own != nullptr && serial >= 0;
  if (invariant) {
    for (int v : loops[serial].vars) invariant = invariant && !reads_variable(*own, v);
  }
  if (own != nullptr && serial >= 0 && loops[serial].extent > kOutOfOrderHiddenIterations) {
    for (int v : loops[serial].vars) out.carried = out.carried || v >= stage.num_pure;
  }
  // The accumulators, the broadcast value and one loaded vector (BLAS-style blocks).
  bool apart = true;  // every accumulator's offset from the first is a known constant
  for (size_t i = serial + 1; i < loops.size(); ++i) {
    if (loops[i].extent <= 1) continue;
    for (int v : loops[i].vars) {
      if (v < stage.num_pure) apart = apart && stage.pure_dims[v] < constant_stride_dims;
    }
  }
  out.in_registers = invariant && out.accumulators + 2 <= registers && apart;
  const double per_pass = out.in_registers ? 1.0 / static_cast<double>(loops[serial].extent) : 1.0;
  out.loads += own_loads * per_pass;
  out.stores *= per_pass;
  const double held = out.in_registers ? out.accumulators : 0;
  const bool hoisted = serial >= 0 && held + invariant_loads + 2 <= registers;
  out.loads += invariant_loads * (hoisted ? 1.0 / static_cast<double>(loops[serial].extent) : 1.0);
  return out;
}

// How many of f's storage dimensions, innermost first, have a stride Halide knows as a
// constant: the innermost always (stride 1); dimension d when the extents of all below it
// are constants. Where f is stored inside a loop whose enclosing tiles are all whole
// (schedule_directives.cpp's whole_tiles, no partial last tile), an extent is a constant
// when a tile bounds it to less than f's whole region, or when the whole region's extent
// does not follow the outputs' (FuncNode::extent_follows_outputs); a dimension the storage
// spans whole otherwise has an extent of the output buffers the caller passes in
// (conv_layer's conv stored per task of a parallel loop over rows: one allocation of every
// channel, each row's stride unknown). At root, in an output, or inside guarded tiles
// every extent is symbolic.
int constant_stride_dimensions(const ScheduleState &state, int f) {
  const FuncDecision &d = state.decision(f);
  const FuncNode &node = state.graph().funcs[f];
  if (d.placement != Placement::kAt || d.store_at.is_root() || node.is_output) return 1;
  if (d.store_at.stage != 0 || !whole_tiles(state, d.store_at.func)) return 1;
  for (const LoopRef &ref : state.enclosing_loops(d.store_at)) {
    if (state.bounds(ref.func).loops[ref.stage][ref.loop].has_tail) return 1;
  }
  const Region &stored = state.bounds(f).store_region;
  int dims = 1;
  while (dims < static_cast<int>(stored.size()) &&
         (stored[dims - 1].extent() < node.root_region[dims - 1].extent() ||
          !node.extent_follows_outputs[dims - 1])) {
    ++dims;
  }
  return dims;
}

// Bytes of the stage's own Func written over a box of its loop variables.
double written_bytes(const StageNode &stage, const Region &box, int bytes) {
  double n = bytes;
  for (int v = 0; v < stage.num_pure; ++v) n *= static_cast<double>(box[v].extent());
  return n;
}

// Per read group, then the stage's own writes: the streams (Traffic::streams) one byte of
// their traffic makes. A row of the data's innermost dimension is one stream for as long as
// the serial loops walk along it, so a stream ends where the innermost serial loop that
// does not move that dimension's index takes its next step; the loops of the innermost
// block run together and continue their streams in the next block. `serial` is the
// innermost loop outside that block (-1: none). Where a stream's box spans the rows whole
// (as wide as the production reads or writes them), the rows follow each other in memory
// and the stream goes on into the next: a page is a stream.
std::vector<double> streams_per_byte(const std::vector<ReadGroup> &groups,
                                     const std::vector<Loop> &loops, int serial,
                                     const StageTiling &tiling, const StageNode &stage,
                                     const Region &whole, int bytes, int line_bytes) {
  // The box one stream is walked over: one iteration of the innermost serial loop that does
  // not move the row (`moves`), or the whole production when every one does.
  auto run_box = [&](const auto &moves) {
    int l = std::min(serial, static_cast<int>(loops.size()) - 1);
    while (l >= 0 && moves(loops[l])) --l;
    return l < 0 ? whole : iteration_region(loops, l, tiling, stage, whole);
  };
  std::vector<double> out(groups.size() + 1, 0.0);
  for (size_t i = 0; i < groups.size(); ++i) {
    const Access &a = groups[i].shape;
    if (a.coefficients.empty() || !a.affine[0]) continue;  // a gather follows no stream
    const Region box = run_box([&](const Loop &l) {
      for (int v : l.vars) {
        if (v < static_cast<int>(a.coefficients[0].size()) && a.coefficients[0][v] != 0)
          return true;
      }
      return false;
    });
    const Traffic t = group_traffic(groups[i], box, box_points(box), line_bytes);
    const Traffic all = group_traffic(groups[i], whole, box_points(whole), line_bytes);
    if (t.bytes > 0) out[i] = t.row_bytes >= all.row_bytes ? 1 / kStreamBytes : t.streams / t.bytes;
  }
  if (stage.num_pure > 0) {
    const Region box = run_box([](const Loop &l) {
      return std::find(l.vars.begin(), l.vars.end(), 0) != l.vars.end();
    });
    const double row_bytes = static_cast<double>(box[0].extent()) * bytes;
    out.back() = box[0].extent() >= whole[0].extent() ? 1 / kStreamBytes
                                                      : streams_of(1, row_bytes) / row_bytes;
  }
  return out;
}

// Bytes of one allocation of Func p.
double allocation_bytes(const ScheduleState &state, int p) {
  return box_points(state.bounds(p).store_region) * value_bytes(state.graph().funcs[p]);
}

// Bytes a stage of Func f with reads `groups` reads over `box` from other Funcs and inputs:
// what passes through the caches while it runs. (A producer stored inside f's production
// reuses its allocation tile after tile, so this overcounts its reads; capping them by that
// allocation would make f's features depend on a later decision than f's own, which the
// FeatureCache key does not hold.)
double bytes_passing_through(int f, const std::vector<ReadGroup> &groups, const Region &box,
                             int line_bytes) {
  double bytes = 0;
  traffic_by_group(groups, box, line_bytes, [&](size_t i, const Traffic &t) {
    if (groups[i].producer != f) bytes += t.bytes;  // its own values are its allocation
  });
  return bytes;
}

// Whether Func p has storage of its own: decided and not inlined.
bool stored(const ScheduleState &state, int p) {
  return p >= 0 && p < state.num_decided() && !is_inlined(state, p);
}

// The first cache level (1: L1, 2: L2, 3: L3) whose usable share holds `bytes` of stored
// Func p's; 0 when none does. L1 and L2 are per core, but L3 is shared: an allocation
// inside a parallel loop exists once per core at a time, and all of them must fit.
// (nl_means' patch distances, 15 MB per strip of a parallel loop, would fit a 32 MB L3
// once but not twice: predicted as if resident, they run several times slower.)
int cache_level_holding(const ScheduleState &state, const MachineModel &m, int p, double bytes) {
  const FuncDecision &d = state.decision(p);
  const double copies = d.placement == Placement::kAt && state.inside_parallel_loop(d.store_at)
                            ? static_cast<double>(m.cores)
                            : 1.0;
  const int64_t caches[kCacheLevels] = {m.l1_bytes, m.l2_bytes, m.l3_bytes};
  for (int k = 0; k < kCacheLevels; ++k) {
    const double held = k == kCacheLevels - 1 ? bytes * copies : bytes;
    if (held <= static_cast<double>(caches[k]) * kUsableCacheFraction) return k + 1;
  }
  return 0;
}

// The cache a Func's stages find their own values in (an update those of the stage
// before; its writes their lines): the one that holds one allocation.
int own_level(const ScheduleState &state, const MachineModel &m, int f) {
  return stored(state, f) ? cache_level_holding(state, m, f, allocation_bytes(state, f)) : 0;
}

int loops_enclosing(const ScheduleState &state, const FuncDecision &d, bool storage) {
  if (d.placement != Placement::kAt) return 0;
  const LoopRef &at = storage ? d.store_at : d.compute_at;
  return at.is_root() ? 0 : static_cast<int>(state.enclosing_loops(at).size());
}

// A Func stored outside the loop it is computed in: Halide slides its window along that
// loop, so each iteration computes only what the earlier ones did not, and a pass over the
// loop computes the union of their regions, the Func's region at the loop enclosing it.
// (nl_means' patch distances, two rows per iteration of an 8-row window, compute 27% of
// the points the realizations cover.)
struct SlidingWindow {
  double share = 1;  // of the points its realizations cover, the share it computes
  int dim = -1;      // the loop variable of its stage that slides, when only one does
};

// The window of Func f; a share of 1 where nothing slides: stored where computed, computed
// in a parallel loop, or a Func with update stages.
SlidingWindow sliding_window(const ScheduleState &state, int f) {
  const FuncDecision &d = state.decision(f);
  const FuncNode &node = state.graph().funcs[f];
  SlidingWindow out;
  if (d.placement != Placement::kAt || d.store_at == d.compute_at || node.stages.size() != 1)
    return out;
  const Loop &loop = state.bounds(d.compute_at.func).loops[d.compute_at.stage][d.compute_at.loop];
  if (loop.parallel) return out;
  const std::vector<LoopRef> enclosing = state.enclosing_loops(d.compute_at);
  const LoopRef pass = enclosing.size() > 1 ? enclosing[1] : LoopRef{};
  const FuncBounds &b = state.bounds(f);
  const StageNode &stage = node.stages[0];
  const Region swept = stage.loop_region(state.region_at(f, pass));
  const double slid = static_cast<double>(state.realizations_at(pass)) * box_points(swept);
  const double covered = static_cast<double>(b.realizations) *
                         static_cast<double>(b.stage_points[0]);
  out.share = covered > 0 ? std::min(1.0, slid / covered) : 1.0;
  const Region window = stage.loop_region(b.region);
  for (size_t v = 0; v < window.size() && v < swept.size(); ++v) {
    if (swept[v].extent() <= window[v].extent()) continue;
    if (out.dim >= 0) {  // more than one slides
      out.dim = -1;
      break;
    }
    out.dim = static_cast<int>(v);
  }
  return out;
}

// Points a stage computes per point of its region where its splits round up
// (schedule_directives.cpp): a dimension of e points per production in inner blocks of i
// computes ceil(e / i) * i, and so does each step of a sliding window. nl_means' patch
// distances, one new row per step in unrolled blocks of three rows, compute three rows a
// step, and uncounted they run several times their prediction. The vectorized dimension (0)
// is counted in its vectors instead.
double rounded_up_share(const ScheduleState &state, int f, const StageNode &stage,
                        const StageTiling &tiling, const Region &whole, const SlidingWindow &window,
                        bool vectorized) {
  double share = 1;
  if (state.decision(f).placement != Placement::kAt) return share;  // only there (directives)
  for (int v = vectorized ? 1 : 0; v < stage.num_pure; ++v) {
    if (tiling.inner[v] <= 1) continue;  // no inner loop (and split_of builds loop names)
    const VarSplit sp = split_of(stage, tiling, v, whole[v].extent());
    if (!inner_tail_rounds_up(state, f, stage, sp, v)) continue;
    double e = static_cast<double>(whole[v].extent());
    if (v == window.dim) e = std::max(1.0, e * window.share);
    const double inner = static_cast<double>(sp.inner);
    share *= std::ceil(e / inner) * inner / e;
  }
  return share;
}

// The share of the cores a stage's own parallel loop keeps busy: its work, in tasks of
// whole tiles, over cores x the slowest core's time. A variable's guarded partial last
// tile is a smaller task, and alone in the last round it ends that round early (a tile
// shifted inwards is whole).
// conv_layer's update in parallel tiles of 4 of its 5 images runs as tasks of 4 images and
// of 1: 1.25 times one core's speed, not 2.
double own_core_utilization(const Loop &parallel, const StageNode &stage, const StageTiling &tiling,
                            const Region &whole, int cores) {
  const double tasks = static_cast<double>(parallel.extent);
  double work = tasks, last = 1;
  for (int v : parallel.vars) {
    if (v >= stage.num_pure) continue;  // parallel reduction bands: equal
    const VarSplit sp = split_of(stage, tiling, v, whole[v].extent());
    if (sp.tile <= 1 || sp.extent % sp.tile == 0 || sp.shifts_inwards) continue;
    const double tile = static_cast<double>(sp.tile), extent = static_cast<double>(sp.extent);
    const double tiles = std::ceil(extent / tile);
    work *= extent / (tiles * tile);
    last *= (extent - (tiles - 1) * tile) / tile;
  }
  const double rounds = std::ceil(tasks / cores);
  const bool alone = static_cast<int64_t>(tasks) % cores == 1;
  return work / (cores * (alone ? rounds - 1 + last : rounds));
}

}  // namespace

std::vector<int> Featurizer::inlined_into(const ScheduleState &state, int f) const {
  std::vector<int> out;
  std::vector<int> todo{f};
  while (!todo.empty()) {
    const int g = todo.back();
    todo.pop_back();
    for (int p : graph_->funcs[g].producers) {
      if (!is_inlined(state, p) || std::find(out.begin(), out.end(), p) != out.end()) continue;
      out.push_back(p);
      todo.push_back(p);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int> Featurizer::resident_producers(const ScheduleState &state, int f,
                                                const std::vector<int> &inlined,
                                                const std::vector<int> &found_in) const {
  std::vector<int> out;
  auto add_producers_of = [&](int g) {
    for (int p : graph_->funcs[g].producers) {
      if (is_inlined(state, p)) continue;
      const int level = found_in[p];
      if (level > 0) out.push_back(p * 4 + level);
    }
  };
  add_producers_of(f);
  for (int g : inlined) add_producers_of(g);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

FuncFeatures Featurizer::func_features(const ScheduleState &state, int f,
                                       const std::vector<int> &found_in) const {
  const PipelineGraph &g = *graph_;
  const FuncNode &node = g.funcs[f];
  const FuncDecision &d = state.decision(f);
  const FuncBounds &b = state.bounds(f);
  const MachineModel &m = machine_;
  const int bytes = value_bytes(node);
  int widest = 8;
  for (const std::string &t : node.value_types) widest = std::max(widest, value_type_bits(t));
  const double native = std::max(1, m.vector_bits / widest);

  // Tasks of an enclosing parallel loop, for Funcs computed inside one.
  double enclosing_tasks = 1;
  if (d.placement == Placement::kAt) {
    for (const LoopRef &l : state.enclosing_loops(d.compute_at)) {
      const Loop &loop = state.bounds(l.func).loops[l.stage][l.loop];
      if (loop.parallel) enclosing_tasks = static_cast<double>(loop.extent);
    }
  }

  // Where its stages find its own values: the cache that holds one allocation.
  const double alloc = allocation_bytes(state, f);
  const int constant_stride_dims = constant_stride_dimensions(state, f);
  const int own_values = own_level(state, m, f);
  FuncFeatures out;
  out.stages.resize(node.stages.size());
  out.production_bytes = alloc;
  std::vector<std::unique_ptr<Folded>> memo(g.funcs.size());
  for (size_t s = 0; s < node.stages.size(); ++s) {
    const StageNode &stage = node.stages[s];
    const StageTiling &tiling = d.stages[s];
    const std::vector<Loop> &loops = b.loops[s];
    ScheduledFeatures &x = out.stages[s];
    x.fill(0.0f);
    auto set = [&](ScheduledFeature k, double v) { x[static_cast<int>(k)] = static_cast<float>(v); };

    const Region whole = stage.loop_region(b.region);
    const double P = static_cast<double>(b.stage_points[s]);
    const double R = static_cast<double>(b.realizations);
    const double A = static_cast<double>(std::max<int64_t>(b.allocations, 1));
    const SlidingWindow window = s == 0 ? sliding_window(state, f) : SlidingWindow{};
    const double slide = window.share;
    const Region root_loops = stage.loop_region(node.root_region);
    const double root_points = box_points(root_loops);

    // The innermost loop that is not vectorized or unrolled: its iteration is one block (the
    // inner tile, and an unrolled reduction loop around it).
    const auto in_block = [](const Loop &l) { return l.kind == LoopKind::kInner || l.unrolled; };
    int L = static_cast<int>(loops.size()) - 1;
    while (L > 0 && in_block(loops[L])) --L;
    double vw = 1, unroll = 1;
    for (const Loop &l : loops) {
      if (l.vectorized) vw *= static_cast<double>(l.extent);
      if (l.unrolled) unroll *= static_cast<double>(l.extent);
    }
    const bool own_parallel = !loops.empty() && loops[0].parallel;
    const double own_tasks = own_parallel ? static_cast<double>(loops[0].extent) : 1;
    const double tasks = own_parallel ? own_tasks : b.inside_parallel ? enclosing_tasks : 1;
    const double utilization = own_parallel
                                   ? own_core_utilization(loops[0], stage, tiling, whole, m.cores)
                                   : tasks / (std::ceil(tasks / m.cores) * m.cores);
    const double total =
        P * R * slide * rounded_up_share(state, f, stage, tiling, whole, window, vw > 1);

    Folded folded;
    fold(state, f, static_cast<int>(s), stage.num_pure, memo, folded);
    const std::vector<ReadGroup> &groups = folded.groups;
    const double ops = folded.arithmetic;
    // A reduction in lanes vectorizes its innermost reduction variable, not variable 0.
    const int vector_var = tiling.reduction_lanes > 0 ? stage.num_pure : 0;
    // Reads that gather in every vector, and those that gather at a boundary condition's
    // edges only (along variable 0).
    const bool edges_gather = vector_var == 0 && vw > 1 && !root_loops.empty();
    double gathers = 0;
    for (const ReadGroup &r : groups) {
      if (gathers_along_vectors(r, vector_var)) {
        gathers += r.reads;
      } else if (edges_gather) {
        gathers += r.reads * edge_gather_share(r, vw, root_loops[0].extent());
      }
    }
    out.production_bytes += bytes_passing_through(f, groups, whole, m.cache_line_bytes);

    // Vector and scalar work: a guarded tail of the vectorized variable's tile runs scalar;
    // where the split rounds up or shifts inwards instead (schedule_directives.cpp), the
    // tail is one more vector, partly over points nobody reads or computed twice.
    double vec_points = 0;
    if (vw > 1 && tiling.reduction_lanes > 0) {
      vec_points = total;  // the lanes divide the reduction (lane_reduction_refusal)
    } else if (vw > 1) {
      const VarSplit sp = split_of(stage, tiling, 0, whole[0].extent());
      const double tile = static_cast<double>(sp.tile);
      const bool whole_vectors = inner_tail_rounds_up(state, f, stage, sp, 0) || sp.shifts_inwards;
      vec_points =
          total * (whole_vectors ? std::ceil(tile / vw) : std::floor(tile / vw)) * vw / tile;
    }
    const double vectors_per_vw = std::ceil(vw / native);

    // Footprints and working sets per loop level (-1: the whole production), and per
    // cache the part of them that must come from beyond it: not the values of producers
    // (found_in) or its own values (own_level) that stay resident in that cache.
    const int own = node.is_output ? 0 : own_values;
    std::vector<int> group_level(groups.size());
    for (size_t i = 0; i < groups.size(); ++i) {
      const int p = groups[i].producer;
      group_level[i] = p == f ? own_values : p >= 0 ? found_in[p] : 0;
    }
    const double caches[kCacheLevels] = {static_cast<double>(m.l1_bytes),
                                         static_cast<double>(m.l2_bytes),
                                         static_cast<double>(m.l3_bytes)};
    auto resident_in = [](int level, int cache) { return level > 0 && level <= cache + 1; };
    // Per read group, then the stage's own writes: the memory streams one byte makes.
    const std::vector<double> stream_share =
        streams_per_byte(groups, loops, L, tiling, stage, whole, bytes, m.cache_line_bytes);
    // The bytes of one iteration of the stage's loops over `box`: all of them, and those
    // not resident in each cache, and the streams of those not resident in L3 (from and to
    // memory); returns the reads' traffic.
    constexpr int kL3 = kCacheLevels - 1;
    auto iteration_bytes = [&](const Region &box, double &all, double (&moved)[kCacheLevels],
                               double &memory_streams) {
      Traffic reads;
      const double written = written_bytes(stage, box, bytes);
      all = written;
      for (int c = 0; c < kCacheLevels; ++c) moved[c] = resident_in(own, c) ? 0 : written;
      memory_streams = resident_in(own, kL3) ? 0 : written * stream_share.back();
      traffic_by_group(groups, box, m.cache_line_bytes, [&](size_t i, const Traffic &t) {
        reads.bytes += t.bytes;
        reads.lines += t.lines;
        all += t.bytes;
        for (int c = 0; c < kCacheLevels; ++c) moved[c] += resident_in(group_level[i], c) ? 0 : t.bytes;
        if (!resident_in(group_level[i], kL3)) memory_streams += t.bytes * stream_share[i];
      });
      return reads;
    };
    const int levels = L + 2;
    std::vector<double> ws(levels), iterations(levels);
    std::vector<std::array<double, kCacheLevels>> moved(levels);
    std::vector<double> streams(levels);
    std::vector<Traffic> reads(levels);
    double n = 1;
    for (int l = -1; l <= L; ++l) {
      if (l >= 0) n *= static_cast<double>(loops[l].extent);
      const Region box = l < 0 ? whole : iteration_region(loops, l, tiling, stage, whole);
      double m_l[kCacheLevels];
      reads[l + 1] = iteration_bytes(box, ws[l + 1], m_l, streams[l + 1]);
      std::copy(m_l, m_l + kCacheLevels, moved[l + 1].begin());
      iterations[l + 1] = n;
    }
    // Traffic beyond a cache: the outermost loop whose iteration fits is where reuse
    // starts; each of its iterations loads what is not resident of its working set once.
    // A production that fits entirely reads what neighbouring productions or its
    // producers just touched, so over the run it moves no more than its compulsory
    // traffic: what is not resident of the stage's data over the whole root region.
    double compulsory_all = 0, compulsory[kCacheLevels], compulsory_streams = 0;
    iteration_bytes(stage.loop_region(node.root_region), compulsory_all, compulsory,
                    compulsory_streams);
    // A sliding window moves only the share it computes. `per_iteration(i)` is level i's
    // (moved[i][c] for bytes, streams[i] for memory streams); `compulsory_c` the same of
    // the whole root region.
    auto beyond_as = [&](int c, double compulsory_c, const auto &per_iteration) {
      const double usable = caches[c] * kUsableCacheFraction;
      if (ws[0] <= usable)
        return std::min(R * slide * per_iteration(0), std::max(compulsory_c, per_iteration(0)));
      for (int i = 1; i < levels; ++i) {
        if (ws[i] <= usable) return iterations[i] * per_iteration(i) * R * slide;
      }
      return iterations[levels - 1] * per_iteration(levels - 1) * R * slide;
    };
    auto beyond = [&](int c) {
      return beyond_as(c, compulsory[c], [&](int i) { return moved[i][c]; });
    };
    const double memory_streams =
        beyond_as(kL3, compulsory_streams, [&](int i) { return streams[i]; });
    const double block_vectors = vw > 1 ? unroll * vectors_per_vw : unroll;
    const int serial = L >= 0 && !in_block(loops[L]) ? L : -1;
    const BlockMemory memory =
        block_memory(loops, serial, stage, groups, f, vectors_per_vw,
                     vector_registers(m.vector_bits), constant_stride_dims, vector_var);
    const Traffic &per_task = reads[own_parallel ? 1 : 0];

    set(ScheduledFeature::decided, 1);
    set(ScheduledFeature::at_root, d.placement == Placement::kRoot);
    set(ScheduledFeature::compute_depth, loops_enclosing(state, d, false));
    set(ScheduledFeature::store_depth, loops_enclosing(state, d, true));
    set(ScheduledFeature::productions, R);
    set(ScheduledFeature::realizations, A);
    set(ScheduledFeature::points_per_production, P);
    set(ScheduledFeature::points_per_realization, total / A);
    set(ScheduledFeature::points_total, total);
    set(ScheduledFeature::recompute_ratio, root_points > 0 ? total / root_points : 1);
    set(ScheduledFeature::num_loops, static_cast<double>(loops.size()));
    set(ScheduledFeature::innermost_serial_extent, loops.empty() ? 1 : static_cast<double>(loops[L].extent));
    set(ScheduledFeature::innermost_serial_walks_x,
        !loops.empty() && loops[L].vars.size() == 1 && loops[L].vars[0] == 0);
    set(ScheduledFeature::body_executions, total / (vw * unroll));
    set(ScheduledFeature::parallel_tasks, own_tasks);
    set(ScheduledFeature::outer_parallelism, tasks);
    set(ScheduledFeature::core_utilization, utilization);
    set(ScheduledFeature::parallel_launches, own_parallel ? R : 0);
    set(ScheduledFeature::inside_parallel, b.inside_parallel);
    set(ScheduledFeature::vector_width, vw);
    set(ScheduledFeature::native_vector_width, native);
    set(ScheduledFeature::lane_utilization, vw / (vectors_per_vw * native));
    set(ScheduledFeature::unrolled_extent, unroll);
    set(ScheduledFeature::inner_parallelism, vw * unroll);
    set(ScheduledFeature::ops_per_point, ops);
    set(ScheduledFeature::vector_ops_total, vw > 1 ? ops * vec_points / vw * vectors_per_vw : 0);
    set(ScheduledFeature::scalar_ops_total, ops * std::max(0.0, total - vec_points));
    set(ScheduledFeature::loads_per_point, folded.reads);
    set(ScheduledFeature::gather_loads_per_point, gathers);
    set(ScheduledFeature::inlined_calls, folded.inlined_calls);
    set(ScheduledFeature::inlined_ops_per_point, ops - stage.ops.arithmetic());
    set(ScheduledFeature::bytes_read_per_production, reads[0].bytes);
    set(ScheduledFeature::lines_read_per_production, reads[0].lines);
    set(ScheduledFeature::bytes_read_per_realization, reads[0].bytes * R / A);
    set(ScheduledFeature::lines_read_per_realization, reads[0].lines * R / A);
    set(ScheduledFeature::bytes_read_per_vector, reads[levels - 1].bytes / block_vectors);
    set(ScheduledFeature::lines_read_per_vector, reads[levels - 1].lines / block_vectors);
    set(ScheduledFeature::bytes_read_per_task, per_task.bytes);
    set(ScheduledFeature::lines_read_per_task, per_task.lines);
    set(ScheduledFeature::bytes_read_total, reads[0].bytes * R * slide);
    set(ScheduledFeature::bytes_written_per_production, written_bytes(stage, whole, bytes));
    set(ScheduledFeature::working_set_block, ws[levels - 1]);
    set(ScheduledFeature::working_set_level1, ws[std::max(levels - 2, 0)]);
    set(ScheduledFeature::working_set_level2, ws[std::max(levels - 3, 0)]);
    set(ScheduledFeature::working_set_level3, ws[std::max(levels - 4, 0)]);
    set(ScheduledFeature::working_set_production, ws[0]);
    set(ScheduledFeature::traffic_beyond_l1, beyond(0));
    set(ScheduledFeature::traffic_beyond_l2, beyond(1));
    set(ScheduledFeature::traffic_beyond_l3, beyond(2));
    set(ScheduledFeature::memory_streams, memory_streams);
    if (s == 0 && !node.is_output) {  // the caller provides the outputs' buffers
      set(ScheduledFeature::alloc_bytes, alloc);
      set(ScheduledFeature::alloc_bytes_total, alloc * A);
    }
    set(ScheduledFeature::store_at_root,
        d.placement == Placement::kRoot || (d.placement == Placement::kAt && d.store_at.is_root()));
    set(ScheduledFeature::block_loads, memory.loads);
    set(ScheduledFeature::block_stores, memory.stores);
    set(ScheduledFeature::block_accumulators, memory.accumulators);
    set(ScheduledFeature::accumulators_in_registers, memory.in_registers);
    set(ScheduledFeature::block_waits_for_previous, memory.carried);
  }
  return out;
}

PipelineFeatures Featurizer::assemble(const ScheduleState &state, FeatureCache *cache) const {
  if (&state.graph() != graph_.get()) {
    throw std::invalid_argument("Featurizer: the state is of another pipeline graph");
  }
  PipelineFeatures out = invariant_;
  bool learned = false;
  // Producers first: a Func's features depend on the cache each of its producers' values
  // are found in, and that on all one production of the producer touches
  // (FuncFeatures::production_bytes), so that its values stay there until they are read.
  // Input buffers and undecided Funcs are read from memory (0).
  std::vector<int> found_in(graph_->funcs.size(), 0);
  for (int f = state.num_decided() - 1; f >= 0; --f) {
    const int first = first_node_[f];
    if (state.decision(f).placement == Placement::kInline) {
      out.stages[first].scheduled[static_cast<int>(ScheduledFeature::decided)] = 1;
      out.stages[first].scheduled[static_cast<int>(ScheduledFeature::inlined)] = 1;
      continue;
    }
    const FuncFeatures *features = nullptr;
    FuncFeatures fresh;
    if (cache != nullptr) {
      FeatureCache::Key key{&state.bounds(f), inlined_into(state, f), {},
                            constant_stride_dimensions(state, f)};
      key.resident = resident_producers(state, f, key.inlined, found_in);
      auto it = cache->entries_.find(key);
      if (it != cache->entries_.end()) {
        ++cache->hits_;
        features = &it->second;
      } else {
        ++cache->misses_;
        if (cache->entries_.size() >= cache->max_entries_ ||
            cache->keep_alive_.size() >= cache->max_entries_ / FeatureCache::kEntriesPerState) {
          cache->clear();
        }
        features = &cache->entries_.emplace(std::move(key), func_features(state, f, found_in))
                        .first->second;
        learned = true;
      }
    } else {
      fresh = func_features(state, f, found_in);
      features = &fresh;
    }
    found_in[f] = cache_level_holding(state, machine_, f, features->production_bytes);
    for (size_t s = 0; s < features->stages.size(); ++s)
      out.stages[first + s].scheduled = features->stages[s];
  }
  if (learned) cache->keep_alive_.push_back(state);
  return out;
}

PipelineFeatures Featurizer::featurize(const ScheduleState &state) const {
  return assemble(state, nullptr);
}

PipelineFeatures Featurizer::featurize(const ScheduleState &state, FeatureCache &cache) const {
  return assemble(state, &cache);
}

}  // namespace protuner
