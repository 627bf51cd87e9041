#include "searcher/seeds/strip_schedule.h"

#include <algorithm>
#include <optional>

#include "common/pipeline/region.h"
#include "searcher/seeds/fallback_schedule.h"

namespace protuner {
namespace {

// Whether `stage` reads some producer transposed (AccessPattern::kTransposed).
bool transposes(const StageNode &stage) {
  return std::any_of(stage.ops.accesses.begin(), stage.ops.accesses.end(),
                     [](const Access &a) { return a.pattern == AccessPattern::kTransposed; });
}

// A stage computed once per realization over `region`: whole, its innermost variable
// vectorized when `vectorize` and it is that long. A transpose works in blocks of one vector
// square, its next variable unrolled a vector's length: each vector it stores gathers from
// as many rows, and the unrolled neighbours gather from the same cache lines (iir_blur's
// root-strip seeds run faster with vector squares than with vector rows).
StageTiling whole_tiling(const FuncNode &f, const StageNode &stage, const Region &region,
                         bool vectorize, const SearchSpaceOptions &options) {
  const Region loops = stage.loop_region(region);
  const int64_t lanes = vectorize ? native_lanes(f, options) : 1;
  const bool square = vectorize && stage.num_pure >= 2 && transposes(stage) &&
                      loops[0].extent() >= lanes && loops[1].extent() >= lanes;
  StageTiling t;
  for (int k = 0; k < stage.num_pure; ++k) {
    t.inner.push_back((k == 0 || (k == 1 && square)) && loops[k].extent() >= lanes ? lanes : 1);
    t.tile.push_back(round_up(std::max<int64_t>(1, loops[k].extent()), t.inner.back()));
  }
  return t;
}

// The owner's stage in parallel strips `height` points high along pure variable `v`: every
// other variable whole (no outer loop), the innermost vectorized. The strip loop is then
// the stage's loop 0.
StageTiling strip_tiling(const FuncNode &f, const StageNode &stage, int v, int64_t height,
                         const SearchSpaceOptions &options) {
  StageTiling t = whole_tiling(f, stage, f.root_region, true, options);
  t.tile[v] = round_up(height, t.inner[v]);
  t.parallel_loops = t.tile[v] < stage.loop_region(f.root_region)[v].extent() ? 1 : 0;
  return t;
}

}  // namespace

std::optional<FuncDecision> per_iteration(const ScheduleState &state, int f, const LoopRef &at,
                                          const SearchSpaceOptions &options,
                                          const std::optional<LoopRef> &store_at) {
  const FuncNode &node = state.graph().funcs[f];
  const LoopRef stored = store_at.value_or(at);
  const double points = static_cast<double>(region_points(state.region_at(f, stored))) *
                        static_cast<double>(state.realizations_at(stored));
  if (points >= kMaxStripRecompute * static_cast<double>(region_points(node.root_region))) {
    return std::nullopt;
  }
  const Region region = state.region_at(f, at);
  for (bool vectorize : {true, false}) {
    FuncDecision d;
    d.placement = Placement::kAt;
    d.compute_at = at;
    d.store_at = stored;
    for (const StageNode &stage : node.stages) {
      d.stages.push_back(whole_tiling(node, stage, region, vectorize, options));
    }
    if (state.check_decision(d).empty()) return d;
  }
  return std::nullopt;
}

namespace {

// f at root in parallel strips `height` points high, along the outermost pure variable of
// its last stage that has kMinStripsPerCore strips per core of that height; each stage's
// strip loop is its loop 0. Nothing when no variable is that long, or when rounded to whole
// vectors the strips along x are the whole row.
std::optional<FuncDecision> in_strips(const FuncNode &f, int64_t height,
                                      const SearchSpaceOptions &options) {
  const StageNode &last = f.stages.back();
  const Region last_loops = last.loop_region(f.root_region);
  const int64_t min_strips = int64_t{kMinStripsPerCore} * std::max(1, options.cores);
  int strip_var = -1;
  for (int v = last.num_pure - 1; v >= 0 && strip_var < 0; --v) {
    if (last_loops[v].extent() >= min_strips * height) strip_var = v;
  }
  if (strip_var < 0) return std::nullopt;
  const int dim = last.pure_dims[strip_var];
  FuncDecision d;
  d.placement = Placement::kRoot;
  for (const StageNode &stage : f.stages) {
    const auto it = std::find(stage.pure_dims.begin(), stage.pure_dims.end(), dim);
    const int v = static_cast<int>(it - stage.pure_dims.begin());
    d.stages.push_back(it == stage.pure_dims.end() ? fallback_stage_tiling(f, stage, options)
                                                   : strip_tiling(f, stage, v, height, options));
  }
  if (d.stages.back().parallel_loops == 0) return std::nullopt;
  return d;
}

// The strip loop of Func f decided in_strips.
LoopRef strip_loop(const PipelineGraph &graph, int f) {
  return LoopRef{f, static_cast<int>(graph.funcs[f].stages.size()) - 1, 0};
}

std::optional<ScheduleState> strip_schedule(std::shared_ptr<const PipelineGraph> graph,
                                            int64_t height, const SearchSpaceOptions &options) {
  const FuncNode &owner = graph->funcs[0];
  // The owner's producers are computed in its last stage's strip loop.
  ScheduleState state(graph);
  std::optional<FuncDecision> out = in_strips(owner, height, options);
  if (!out || !state.check_decision(*out).empty()) return std::nullopt;
  state.decide(std::move(*out));
  const LoopRef strip = strip_loop(*graph, 0);

  for (int f = 1; f < static_cast<int>(graph->funcs.size()); ++f) {
    const FuncNode &node = graph->funcs[f];
    std::optional<FuncDecision> d = inlined_if_seed_inlines(state, f);
    if (!d && !node.is_output) d = per_iteration(state, f, strip, options);
    state.decide(d ? std::move(*d) : fallback_decision(node, options));
  }
  return state;
}

// Whether f reads a scan (StageNode::scans) directly.
bool reads_a_scan(const PipelineGraph &graph, const FuncNode &f) {
  return std::any_of(f.producers.begin(), f.producers.end(), [&](int p) {
    const std::vector<StageNode> &stages = graph.funcs[p].stages;
    return std::any_of(stages.begin(), stages.end(), [](const StageNode &s) { return s.scans; });
  });
}

std::optional<ScheduleState> root_strip_schedule(std::shared_ptr<const PipelineGraph> graph,
                                                 int64_t height,
                                                 const SearchSpaceOptions &options) {
  ScheduleState state(graph);
  std::vector<LoopRef> strips;  // of the Funcs decided at root in strips, in decision order
  bool fused = false;           // some Func is computed per strip of a Func not the output
  for (int f = 0; f < static_cast<int>(graph->funcs.size()); ++f) {
    const FuncNode &node = graph->funcs[f];
    // A Func that reads a scan goes at root in strips, so that the scan is computed per
    // strip of it, in bands of whole columns: iir_blur's expert computes each blur per band
    // of its transpose (inlined, the transpose would gather across rows in the next scan).
    const bool scan_reader = !node.is_output && reads_a_scan(*graph, node);
    std::optional<FuncDecision> d;
    if (!scan_reader) d = inlined_if_seed_inlines(state, f);
    // The latest decided first: Funcs are decided consumers first, so that is the nearest
    // consumer (a vertical pass, for its horizontal pass).
    for (auto it = strips.rbegin(); !d && !node.is_output && !scan_reader && it != strips.rend();
         ++it) {
      d = per_iteration(state, f, *it, options);
      fused = fused || (d && it->func != 0);
    }
    if (!d) {
      d = in_strips(node, height, options);
      if (d && !state.check_decision(*d).empty()) d.reset();
      if (d) strips.push_back(strip_loop(*graph, f));
    }
    state.decide(d ? std::move(*d) : fallback_decision(node, options));
  }
  // Without a producer in the strips of a Func other than the output this is about a strip
  // seed.
  if (!fused) return std::nullopt;
  return state;
}

bool same_schedule(const ScheduleState &a, const ScheduleState &b) {
  for (int f = 0; f < a.num_decided(); ++f) {
    if (!(a.decision(f) == b.decision(f))) return false;
  }
  return true;
}

// One schedule per distinct height of kStripHeights `build` makes one for.
template <typename Build>
std::vector<ScheduleState> per_height(std::shared_ptr<const PipelineGraph> graph,
                                      const SearchSpaceOptions &options, const Build &build) {
  std::vector<ScheduleState> out;
  if (graph->funcs.empty() || !graph->funcs[0].is_output) return out;
  for (int height : kStripHeights) {
    std::optional<ScheduleState> s = build(graph, height, options);
    if (!s) continue;
    const bool seen = std::any_of(out.begin(), out.end(),
                                  [&](const ScheduleState &o) { return same_schedule(o, *s); });
    if (!seen) out.push_back(std::move(*s));
  }
  return out;
}

}  // namespace

bool seed_inlines(const ScheduleState &state, int f) {
  const PipelineGraph &g = state.graph();
  const FuncNode &node = g.funcs[f];
  if (!node.inlinable()) return false;
  const double points = static_cast<double>(region_points(node.root_region));
  const int64_t code = node.stages[0].code_per_point;
  // Over the stages that would evaluate f were it inlined: the most points of f one
  // iteration of a stage's loops evaluates (per_use), and the most times a stage with
  // reduction loops evaluates each point of f over its whole run (reduction_rereads). A
  // reduction's loops run for each point it computes, and may read the same points of f
  // again for each (a convolution's padded input, once per output channel and filter tap),
  // or new ones (a histogram's input, once).
  int64_t per_use = 0;
  double reduction_rereads = 0;
  for (const ScheduleState::InlineUse &use : state.inline_uses(f)) {
    const StageNode &stage = g.funcs[use.func].stages[use.stage];
    per_use = std::max(per_use, use.points_per_iteration);
    if (stage.rvar_region.empty()) continue;
    const Region loops = stage.loop_region(g.funcs[use.func].root_region);
    reduction_rereads =
        std::max(reduction_rereads, static_cast<double>(use.points_per_iteration) *
                                        static_cast<double>(region_points(loops)) / points);
  }
  // A Func that only loads (a wrapper of an input) costs its readers nothing inlined,
  // however often they read it: a load is what they would do anyway.
  if (code <= 1) reduction_rereads = 0;
  if (code <= kCheapCodePerPoint && per_use <= kMaxCheapRecompute &&
      reduction_rereads <= kMaxCheapRecompute) {
    return true;
  }
  if (node.consumers.size() != 1) return false;  // each consumer would compute it again
  const FuncNode &consumer = g.funcs[node.consumers[0]];
  const double reads = static_cast<double>(per_use) *
                       static_cast<double>(region_points(consumer.root_region));
  return reads <= (1 + kInlineEdgeRereads) * points && reduction_rereads <= 1 + kInlineEdgeRereads;
}

std::optional<FuncDecision> inlined_if_seed_inlines(const ScheduleState &state, int f) {
  FuncDecision inlined;
  inlined.placement = Placement::kInline;
  if (seed_inlines(state, f) && state.check_decision(inlined).empty()) return inlined;
  return std::nullopt;
}

std::vector<ScheduleState> strip_schedules(std::shared_ptr<const PipelineGraph> graph,
                                           const SearchSpaceOptions &options) {
  return per_height(graph, options, strip_schedule);
}

std::vector<ScheduleState> root_strip_schedules(std::shared_ptr<const PipelineGraph> graph,
                                                const SearchSpaceOptions &options) {
  return per_height(graph, options, root_strip_schedule);
}

}  // namespace protuner
