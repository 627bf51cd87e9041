#include "common/schedule/schedule_state.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace protuner {

ScheduleState::ScheduleState(std::shared_ptr<const PipelineGraph> graph)
    : graph_(std::move(graph)) {
  if (!graph_) throw std::invalid_argument("ScheduleState needs a pipeline graph");
}

ScheduleState ScheduleState::with_decision(FuncDecision d) const {
  ScheduleState child = *this;
  child.decide(std::move(d));
  return child;
}

void ScheduleState::decide(FuncDecision d) {
  if (mid_decision()) {
    throw std::invalid_argument("a decision for '" +
                                stable_func_name(graph_->funcs[num_decided()].name) +
                                "' is under way in steps");
  }
  commit(std::move(d));
}

void ScheduleState::commit(FuncDecision d) {
  const std::string why = check_decision(d);
  if (!why.empty()) {
    // Named as schedule files name Funcs: Halide's name has a counter ('conv$1') when the
    // process built the pipeline before.
    throw std::invalid_argument("illegal decision for '" +
                                stable_func_name(graph_->funcs[num_decided()].name) + "': " + why);
  }
  const int f = num_decided();
  const FuncNode &node = graph_->funcs[f];
  auto entry = std::make_shared<Decided>();
  entry->block_lane_ops = block_lane_ops();
  if (d.placement == Placement::kInline) {
    entry->block_lane_ops += inlined_block_lane_ops(f);
  } else {
    for (size_t s = 0; s < d.stages.size(); ++s) {
      entry->block_lane_ops +=
          stage_block_points(node.stages[s], d.stages[s]) * node.stages[s].code_per_point;
    }
  }
  entry->bounds = compute_bounds(f, d);
  entry->decision = std::move(d);
  decided_.push_back(std::move(entry));
}

const char *parallel_loops_refusal(const StageNode &stage, int parallel_loops,
                                   Placement placement) {
  if (parallel_loops >= 0 && parallel_loops <= stage.num_pure) return nullptr;
  if (parallel_loops != 1 || !stage.rfactorable) return "parallel_loops out of range";
  // The partial reductions are Funcs at root, which Halide would compute for the whole
  // region every time this Func is computed.
  return placement == Placement::kRoot ? nullptr
                                       : "a reduction in parallel bands only in Funcs at root";
}

const char *no_fused_parallel_loops_reason(const FuncNode &node, Placement placement) {
  // FuncNode::may_fuse_parallel_loops says why.
  if (!node.may_fuse_parallel_loops()) {
    return "no fused parallel loops: Halide would bound them loosely and read its inputs out of "
           "bounds";
  }
  // Halide 14 infers wrong bounds for a Func computed inside another loop nest whose own
  // fused loops cover guarded splits: it reads far outside its inputs. Fuse at root only.
  if (placement != Placement::kRoot) return "fused parallel loops only in Funcs computed at root";
  return nullptr;
}

namespace {

// Calls fn(g, s) for every non-inlined stage (Func g, stage s) that evaluates Func f,
// looking through inlined consumers to where they are evaluated.
template <typename Fn>
void for_each_use(const ScheduleState &state, int f, const Fn &fn) {
  const PipelineGraph &g = state.graph();
  for (int c : g.funcs[f].consumers) {
    if (state.decision(c).placement == Placement::kInline) {
      for_each_use(state, c, fn);
      continue;
    }
    const auto &stages = g.funcs[c].stages;
    for (size_t s = 0; s < stages.size(); ++s) {
      for (const Footprint &fp : stages[s].footprints) {
        if (fp.producer() == g.funcs[f].name) fn(c, static_cast<int>(s));
      }
    }
  }
}

// Whether a stage reads f at indices of more than one shape (StageNode::
// reads_in_several_shapes), directly or through the Funcs inlined into it.
bool read_in_several_shapes(const ScheduleState &state, int f) {
  const PipelineGraph &g = state.graph();
  for (int c : g.funcs[f].consumers) {
    for (const StageNode &stage : g.funcs[c].stages) {
      const auto &several = stage.reads_in_several_shapes;
      if (std::find(several.begin(), several.end(), g.funcs[f].name) != several.end()) return true;
    }
    if (state.decision(c).placement == Placement::kInline && read_in_several_shapes(state, c)) {
      return true;
    }
  }
  return false;
}

// Whether stage s of Func g reads some producer at indices of more than one shape, itself
// or through the Funcs inlined into it.
bool stage_reads_in_several_shapes(const ScheduleState &state, int g, int s) {
  const PipelineGraph &graph = state.graph();
  if (!graph.funcs[g].stages[s].reads_in_several_shapes.empty()) return true;
  for (int p : graph.funcs[g].producers) {
    if (p < state.num_decided() && state.decision(p).placement == Placement::kInline &&
        stage_reads_in_several_shapes(state, p, 0)) {
      return true;
    }
  }
  return false;
}

bool same_stage(const LoopRef &a, int func, int stage) {
  return a.func == func && a.stage == stage;
}

}  // namespace

std::string ScheduleState::check_decision(const FuncDecision &d) const {
  if (complete()) return "every Func is already decided";
  const int f = num_decided();
  const FuncNode &node = graph_->funcs[f];
  if (d.placement == Placement::kInline) {
    if (!node.inlinable()) return "it cannot be inlined (an output, or it has update stages)";
    if (!d.stages.empty()) return "an inlined Func has no stage tilings";
    return "";
  }
  if (node.is_output && d.placement != Placement::kRoot) return "outputs are computed at root";
  if (d.stages.size() != node.stages.size()) {
    return "it has " + std::to_string(node.stages.size()) + " stages, the decision tiles " +
           std::to_string(d.stages.size());
  }
  for (size_t s = 0; s < d.stages.size(); ++s) {
    const StageTiling &t = d.stages[s];
    const size_t n = static_cast<size_t>(node.stages[s].num_pure);
    if (t.tile.size() != n || t.inner.size() != n) {
      return "stage " + std::to_string(s) + " has " + std::to_string(n) + " pure variables";
    }
    for (size_t v = 0; v < n; ++v) {
      if (t.inner[v] < 1 || t.tile[v] < t.inner[v]) {
        return "stage " + std::to_string(s) + " needs 1 <= inner <= tile for every variable";
      }
    }
    if (const char *why = parallel_loops_refusal(node.stages[s], t.parallel_loops, d.placement)) {
      return "stage " + std::to_string(s) + ": " + why;
    }
    if (t.reduction_outside && !node.stages[s].reorderable_reduction()) {
      return "stage " + std::to_string(s) + " has no reduction loops to move outside its tile";
    }
    if (t.unroll_reduction) {
      if (const char *why = unroll_reduction_refusal(node.stages[s], t.parallel_loops,
                                                     t.reduction_outside)) {
        return "stage " + std::to_string(s) + " cannot unroll its reduction: " + why;
      }
    }
    if (t.reduction_lanes != 0) {
      if (const char *why = lane_reduction_refusal(node.stages[s], t)) {
        return "stage " + std::to_string(s) + " cannot reduce in lanes: " + why;
      }
    }
  }
  for (size_t s = 0; s < d.stages.size(); ++s) {
    if (d.stages[s].parallel_loops < 2) continue;
    if (const char *why = no_fused_parallel_loops_reason(node, d.placement)) {
      return "stage " + std::to_string(s) + ": " + why;
    }
  }
  return check_placement(d);
}

std::string ScheduleState::check_placement(const FuncDecision &d) const {
  const int f = num_decided();
  const FuncNode &node = graph_->funcs[f];
  if (d.placement == Placement::kInline) {
    return node.inlinable() ? "" : "it cannot be inlined (an output, or it has update stages)";
  }
  if (node.is_output && d.placement != Placement::kRoot) return "outputs are computed at root";
  if (d.placement == Placement::kRoot) return "";
  const LoopRef &at = d.compute_at;
  if (at.is_root() || at.func >= f) return "compute_at must name a loop of a decided consumer";
  if (decision(at.func).placement == Placement::kInline) return "compute_at an inlined Func";
  const auto &loops = bounds(at.func).loops;
  if (at.stage < 0 || at.stage >= static_cast<int>(loops.size()) || at.loop < 0 ||
      at.loop >= static_cast<int>(loops[at.stage].size())) {
    return "compute_at names a loop that does not exist";
  }
  if (const char *why = compute_at_refusal(at)) return why;
  const auto stores = store_options(at);
  if (std::find(stores.begin(), stores.end(), d.store_at) == stores.end()) {
    return "store_at must be the compute_at loop or enclose it, and not be outside a parallel "
           "loop that encloses compute_at, nor outside a loop of a stage that reads a Func at "
           "indices of several shapes or a loop whose last tile shifts inwards, nor slide in "
           "fused parallel loops with a Func inside that reads an input past its bounds "
           "(ScheduleState::store_options)";
  }
  return "";
}

bool ScheduleState::inside(int g, const LoopRef &at) const {
  if (at.is_root()) return true;
  const FuncDecision &d = decision(g);
  if (d.placement != Placement::kAt) return false;
  const LoopRef &cl = d.compute_at;
  if (same_stage(cl, at.func, at.stage)) return cl.loop >= at.loop;
  return inside(cl.func, at);
}

template <typename Pred>
bool ScheduleState::any_enclosing_loop(const LoopRef &at, const Pred &pred) const {
  // Walked in place, not through enclosing_loops(): placement queries run at every step of
  // a random rollout, and building the vector would be most of their cost.
  for (LoopRef l = at; !l.is_root();) {
    const std::vector<Loop> &loops = bounds(l.func).loops[l.stage];
    for (int k = l.loop; k >= 0; --k) {
      if (pred(LoopRef{l.func, l.stage, k}, loops[k])) return true;
    }
    const FuncDecision &d = decision(l.func);
    l = d.placement == Placement::kAt ? d.compute_at : LoopRef{};
  }
  return false;
}

const char *ScheduleState::compute_at_refusal(const LoopRef &at) const {
  const int f = num_decided();
  const std::vector<Loop> &stage = bounds(at.func).loops[at.stage];
  if (stage[at.loop].kind == LoopKind::kInner || stage[at.loop].unrolled)
    return "compute_at a vectorized or unrolled loop";
  if (stage[at.loop].kind == LoopKind::kReduction &&
      decision(at.func).stages[at.stage].reduction_lanes > 0) {
    return "compute_at a reduction loop of a reduction in lanes (its partial reductions run "
           "it, in a Func of their own)";
  }
  if (reduction_in_bands(graph_->funcs[at.func].stages[at.stage],
                         decision(at.func).stages[at.stage])) {
    return "compute_at a loop of a reduction in parallel bands (the partial reductions run "
           "it, in Funcs of their own)";
  }
  if (!can_compute_at(f, at)) return "some use of it is outside the compute_at loop";
  if (graph_->funcs[f].overcompute_reads_past_inputs &&
      any_enclosing_loop(at, [&](const LoopRef &ref, const Loop &) {
        return graph_->funcs[ref.func].region_from_clamps &&
               decision(ref.func).placement == Placement::kAt;
      })) {
    // Halide 14 bounds the loops of a Func whose region comes through clamps of another
    // loop nest's variables with min/max extents it cannot prove positive, and a Func
    // computed inside them inherits the loose bounds: the input's own Func computed per
    // channel of a clamped copy, itself computed per tile of the output, is required at
    // x = 187 of 96; with the copy at root it is right
    // (AppliedSchedules.AnInputIsNotCopiedInsideAClampedCopyComputedPerTile).
    return "compute_at inside a Func whose region comes through clamps of another loop "
           "nest, where Halide would require its input past its bounds";
  }
  if (graph_->funcs[f].overcompute_reads_past_inputs) {
    // Halide computes it for whole tiles of every loop of the stage around and inside
    // `at`, partial last tiles included (the guards only skip the consumer's own points),
    // and of the loops enclosing that stage's Func. That matters where the Func whose
    // tile it is reads it at indices that follow its own.
    const char *why =
        "compute_at a loop nest with a partial last tile, where Halide would compute it for "
        "the whole tile and read an input past its bounds";
    const auto widens_f = [&](int g) { return static_cast<bool>(graph_->funcs[g].widens[f]); };
    // A Func computed more than once may cover a smaller region in some realizations (the
    // random-schedule test's input copy, computed per tile of two channels of three, has
    // one channel in its last tile), where any split can leave a partial tile.
    const auto partial = [&](int g, const Loop &l) {
      return l.has_tail || (l.split && !same_size_realizations(g));
    };
    if (widens_f(at.func) &&
        std::any_of(stage.begin(), stage.end(), [&](const Loop &l) { return partial(at.func, l); }))
      return why;
    if (any_enclosing_loop(at, [&](const LoopRef &ref, const Loop &l) {
          return partial(ref.func, l) && widens_f(ref.func);
        })) {
      return why;
    }
    // Nor inside fused parallel loops over guarded splits (a window slides in their Func,
    // see store_options): Halide recovers each variable from the fused index by dividing
    // by loop extents it cannot prove positive, and bounds it loosely. A weights copy
    // computed per reduction step of a convolution per tile of its ReLU, whose channel and
    // column tiles are fused and guarded, requires channel 29 of 16
    // (RandomSchedules.ConvolutionWithReductionComputesTheSameBits, with AVX2's vectors).
    if (any_enclosing_loop(at, [&](const LoopRef &ref, const Loop &l) {
          return fused_over_guarded_splits(ref.func, l) && widens_f(ref.func);
        })) {
      return "compute_at inside fused parallel loops over guarded splits, where Halide would "
             "bound them loosely and read an input past its bounds";
    }
  }
  return nullptr;
}

bool ScheduleState::fused_over_guarded_splits(int g, const Loop &l) const {
  return l.fused_parallel() && slides_in(g);
}

bool ScheduleState::slides_over_own_loops(const LoopRef &compute_at,
                                          const LoopRef &store_at) const {
  if (store_at.is_root() || store_at == compute_at) return false;
  return any_enclosing_loop(compute_at, [&](const LoopRef &ref, const Loop &) {
    return ref.func == store_at.func && ref.stage == store_at.stage && ref.loop > store_at.loop;
  });
}

bool ScheduleState::slides_in(int g) const {
  for (int h = g + 1; h < num_decided(); ++h) {
    const FuncDecision &d = decision(h);
    if (d.placement == Placement::kAt && d.store_at.func == g &&
        slides_over_own_loops(d.compute_at, d.store_at))
      return true;
  }
  return false;
}

bool ScheduleState::same_size_realizations(int g) const {
  const FuncBounds &b = bounds(g);
  if (b.realizations <= 1) return true;
  const FuncNode &node = graph_->funcs[g];
  if (node.region_from_clamps || !node.reads_keep_size) return false;
  const FuncDecision &d = decision(g);
  if (d.placement != Placement::kAt) return true;
  const LoopRef &at = d.compute_at;
  const std::vector<Loop> &loops = bounds(at.func).loops[at.stage];
  for (int k = 0; k <= at.loop; ++k) {
    if (loops[k].has_tail) return false;
  }
  return same_size_realizations(at.func);
}

bool ScheduleState::inside_parallel_loop(const LoopRef &at) const {
  return any_enclosing_loop(at, [](const LoopRef &, const Loop &l) { return l.parallel; });
}

bool ScheduleState::can_compute_at(int f, const LoopRef &at) const {
  bool ok = true;
  for_each_use(*this, f, [&](int g, int s) { ok = ok && (same_stage(at, g, s) || inside(g, at)); });
  return ok;
}

void ScheduleState::add_uses(int f, int stage_func, int stage, const Region &loops,
                             Region &out) const {
  for (const Footprint &fp : graph_->funcs[stage_func].stages[stage].footprints) {
    const int p = graph_->find(fp.producer());
    if (p == f) {
      const Region need = fp.eval(loops, graph_->funcs[f].root_region);
      for (size_t d = 0; d < out.size(); ++d) out[d].include(need[d]);
    } else if (p < num_decided() && decision(p).placement == Placement::kInline) {
      const Region need = fp.eval(loops, graph_->funcs[p].root_region);
      add_uses(f, p, 0, graph_->funcs[p].stages[0].loop_region(need), out);
    }
  }
}

Region ScheduleState::region_at(int f, const LoopRef &at) const {
  const FuncNode &node = graph_->funcs[f];
  if (at.is_root()) return node.root_region;
  Region out(node.dimensions);
  for_each_use(*this, f, [&](int g, int s) {
    const FuncBounds &gb = bounds(g);
    const StageNode &stage = graph_->funcs[g].stages[s];
    Region loops = stage.loop_region(gb.region);
    if (same_stage(at, g, s)) {
      loops = iteration_region(gb.loops[s], at.loop, decision(g).stages[s], stage, loops);
    } else if (!inside(g, at)) {
      return;
    } else if (!(decision(g).compute_at == at)) {
      // g is computed further inside `at`: one iteration of `at` runs several of its
      // realizations, which together cover what g's own uses need there.
      loops = stage.loop_region(region_at(g, at));
    }
    add_uses(f, g, s, loops, out);
  });
  for (int d = 0; d < node.dimensions; ++d) {
    if (out[d].empty()) out[d] = node.root_region[d];
  }
  return node.with_own_writes(std::move(out));
}

int64_t ScheduleState::realizations_at(const LoopRef &at) const {
  if (at.is_root()) return 1;
  const FuncBounds &b = bounds(at.func);
  int64_t n = b.realizations;
  for (int k = 0; k <= at.loop; ++k) n *= b.loops[at.stage][k].extent;
  return n;
}

std::vector<LoopRef> ScheduleState::enclosing_loops(const LoopRef &at) const {
  std::vector<LoopRef> out;
  any_enclosing_loop(at, [&](const LoopRef &ref, const Loop &) {
    out.push_back(ref);
    return false;
  });
  return out;
}

std::vector<LoopRef> ScheduleState::store_options(const LoopRef &at) const {
  // Outwards from the compute loop, up to and including the first parallel loop: storage
  // outside a parallel loop would be shared by its tasks, a race Halide refuses. Storage at
  // root is offered when no parallel loop encloses the computation.
  const FuncNode &node = graph_->funcs[num_decided()];
  if (std::any_of(node.stages.begin(), node.stages.end(),
                  [](const StageNode &s) { return s.unsafe_to_slide; }) ||
      read_in_several_shapes(*this, num_decided())) {
    return {at};
  }
  // Nor outside a loop of a stage that reads some Func at indices of several shapes: its
  // footprint per iteration is a union Halide 14 slides wrong. A pure Func computed per row
  // of c += g(k, y) * g(x, k) (g a stencil of it, computed per point) and stored outside
  // that row computes wrong values; stored per row, right (a random pipeline's matmul of a
  // convolution with itself;
  // AppliedSchedules.NothingSlidesAlongTheLoopsOfAProductOfAFuncWithItself).
  //
  // Nor outside a loop whose ragged last tile shifts inwards (StageNode::shifts_tails):
  // Halide 14 computes wrong values in a window sliding over loops split with ShiftInwards
  // (AppliedSchedules.SplitsUnderASlidingWindowDoNotShiftInwards). Where the tiles divide
  // the extent, such splits guard instead when a window slides (schedule_directives.cpp);
  // a ragged output split has to shift to keep the producers inside it in bounds.
  std::vector<LoopRef> out;
  const bool sealed = any_enclosing_loop(at, [&](const LoopRef &ref, const Loop &l) {
    out.push_back(ref);
    return l.parallel || l.shifted_tail ||
           stage_reads_in_several_shapes(*this, ref.func, ref.stage);
  });
  if (!sealed) out.push_back(LoopRef{});
  // A window sliding in a Func with fused parallel loops guards their splits, and Funcs
  // inside them that read inputs past their bounds would then read out of them
  // (compute_at_refusal): not where such a Func is, or is being, computed inside.
  const auto guards_a_reader = [&](const LoopRef &ref) {
    if (ref.is_root() || ref == at) return false;
    const Loop &fused = bounds(ref.func).loops[ref.stage][0];
    if (!fused.fused_parallel() || !slides_over_own_loops(at, ref)) return false;
    if (node.overcompute_reads_past_inputs) return true;
    for (int h = ref.func + 1; h < num_decided(); ++h) {
      if (graph_->funcs[h].overcompute_reads_past_inputs && inside(h, {ref.func, ref.stage, 0}))
        return true;
    }
    return false;
  };
  out.erase(std::remove_if(out.begin(), out.end(), guards_a_reader), out.end());
  return out;
}

int64_t ScheduleState::points_per_use(int f, int g, int s) const {
  const StageNode &stage = graph_->funcs[g].stages[s];
  Region point = stage.loop_region(bounds(g).region);
  for (Span &sp : point) {
    const int64_t mid = sp.min + sp.extent() / 2;
    sp = {mid, mid};
  }
  Region need(graph_->funcs[f].dimensions);
  add_uses(f, g, s, point, need);
  return region_points(need);
}

int64_t ScheduleState::inline_footprint(int f) const {
  int64_t worst = 0;
  for_each_use(*this, f, [&](int g, int s) { worst = std::max(worst, points_per_use(f, g, s)); });
  return worst;
}

std::vector<ScheduleState::InlineUse> ScheduleState::inline_uses(int f) const {
  std::vector<InlineUse> out;
  for_each_use(*this, f, [&](int g, int s) { out.push_back({g, s, points_per_use(f, g, s)}); });
  return out;
}

int64_t ScheduleState::inlined_block_calls(int f) const {
  int64_t worst = 0;
  for_each_use(*this, f, [&](int g, int s) {
    const int64_t block = stage_block_points(graph_->funcs[g].stages[s], decision(g).stages[s]);
    worst = std::max(worst, points_per_use(f, g, s) * block);
  });
  return worst;
}

int64_t ScheduleState::inlined_block_lane_ops(int f) const {
  int64_t points = 0;
  for_each_use(*this, f, [&](int g, int s) {
    const int64_t block = stage_block_points(graph_->funcs[g].stages[s], decision(g).stages[s]);
    points += points_per_use(f, g, s) * block;
  });
  return points * graph_->funcs[f].stages[0].code_per_point;
}

FuncBounds ScheduleState::compute_bounds(int f, const FuncDecision &d) const {
  FuncBounds b;
  if (d.placement == Placement::kInline) {
    b.inlined = true;
    return b;
  }
  const LoopRef at = d.placement == Placement::kAt ? d.compute_at : LoopRef{};
  const LoopRef store = d.placement == Placement::kAt ? d.store_at : LoopRef{};
  b.region = region_at(f, at);
  b.realizations = realizations_at(at);
  b.store_region = region_at(f, store);
  b.allocations = realizations_at(store);
  b.inside_parallel = inside_parallel_loop(at);
  const FuncNode &node = graph_->funcs[f];
  for (size_t s = 0; s < node.stages.size(); ++s) {
    const Region loops = node.stages[s].loop_region(b.region);
    b.loops.push_back(stage_loops(node.stages[s], d.stages[s], loops));
    b.stage_points.push_back(region_points(loops));
  }
  return b;
}

void ScheduleState::Pending::start_stage(const StageNode &stage) {
  const Region loops = stage.loop_region(region);
  stage_extents.clear();
  for (int v = 0; v < stage.num_pure; ++v) {
    stage_extents.push_back(std::max<int64_t>(loops[v].extent(), 1));
  }
  stage_points = region_points(loops) * realizations;
}

ScheduleState::NextStep ScheduleState::next_step() const {
  NextStep next;
  if (!pending_) return next;
  const FuncDecision &d = pending_->decision;
  const auto &stages = graph_->funcs[num_decided()].stages;
  if (d.stages.empty()) {
    next.kind = stages[0].num_pure > 0 ? Step::Kind::kTile : Step::Kind::kParallel;
    return next;
  }
  next.stage = static_cast<int>(d.stages.size()) - 1;
  const int have = static_cast<int>(d.stages.back().tile.size());
  if (have < stages[next.stage].num_pure) {
    next.kind = Step::Kind::kTile;
    next.var = have;
  } else if (!pending_->last_stage_done) {
    next.kind = Step::Kind::kParallel;
  } else {
    ++next.stage;
    next.kind = stages[next.stage].num_pure > 0 ? Step::Kind::kTile : Step::Kind::kParallel;
  }
  return next;
}

std::string ScheduleState::check_step(const Step &step) const {
  if (complete()) return "every Func is already decided";
  const NextStep next = next_step();
  if (step.kind != next.kind) return "this step does not come next";
  switch (step.kind) {
    case Step::Kind::kPlace: {
      FuncDecision d;
      d.placement = step.placement;
      d.compute_at = step.compute_at;
      d.store_at = step.store_at;
      return check_placement(d);
    }
    case Step::Kind::kTile:
      return step.inner >= 1 && step.tile >= step.inner ? "" : "needs 1 <= inner <= tile";
    case Step::Kind::kParallel: {
      const StageNode &stage = graph_->funcs[num_decided()].stages[next.stage];
      if (const char *why =
              parallel_loops_refusal(stage, step.parallel_loops, pending_->decision.placement)) {
        return why;
      }
      if (step.reduction_outside && !stage.reorderable_reduction()) {
        return "the stage has no reduction loops to move outside its tile";
      }
      if (step.unroll_reduction) {
        if (const char *why = unroll_reduction_refusal(stage, step.parallel_loops,
                                                       step.reduction_outside)) {
          return std::string("the stage cannot unroll its reduction: ") + why;
        }
      }
      if (step.reduction_lanes != 0) {
        const auto &tiled = pending_->decision.stages;
        StageTiling t = static_cast<int>(tiled.size()) > next.stage ? tiled[next.stage]
                                                                    : StageTiling{};
        t.reduction_outside = step.reduction_outside;
        t.unroll_reduction = step.unroll_reduction;
        t.reduction_lanes = step.reduction_lanes;
        if (const char *why = lane_reduction_refusal(stage, t)) {
          return std::string("the stage cannot reduce in lanes: ") + why;
        }
      }
      if (step.parallel_loops < 2) return "";
      const char *why = no_fused_parallel_loops_reason(graph_->funcs[num_decided()],
                                                       pending_->decision.placement);
      return why ? why : "";
    }
  }
  return "unknown step";
}

ScheduleState ScheduleState::with_step(const Step &step) const {
  ScheduleState child = *this;
  child.take_step(step);
  return child;
}

void ScheduleState::take_step(const Step &step) {
  const std::string why = check_step(step);
  if (!why.empty()) {
    throw std::invalid_argument("illegal step for '" + graph_->funcs[num_decided()].name +
                                "': " + why);
  }
  const NextStep next = next_step();
  const FuncNode &node = graph_->funcs[num_decided()];
  if (step.kind == Step::Kind::kPlace) {
    FuncDecision d;
    d.placement = step.placement;
    if (step.placement == Placement::kInline) {
      decide(std::move(d));
      return;
    }
    auto p = std::make_shared<Pending>();
    if (step.placement == Placement::kAt) {
      d.compute_at = step.compute_at;
      d.store_at = step.store_at;
    }
    p->region = region_at(num_decided(), d.compute_at);
    p->realizations = realizations_at(d.compute_at);
    p->inside_parallel = inside_parallel_loop(d.compute_at);
    p->start_stage(node.stages[0]);
    p->decision = std::move(d);
    pending_ = std::move(p);
    return;
  }
  if (step.kind == Step::Kind::kParallel &&
      next.stage + 1 == static_cast<int>(node.stages.size())) {
    // The last step: decide, leaving this state as it was if that throws.
    FuncDecision d = pending_->decision;
    if (static_cast<int>(d.stages.size()) == next.stage) d.stages.emplace_back();
    d.stages.back().parallel_loops = step.parallel_loops;
    d.stages.back().reduction_outside = step.reduction_outside;
    d.stages.back().unroll_reduction = step.unroll_reduction;
    d.stages.back().reduction_lanes = step.reduction_lanes;
    commit(std::move(d));
    pending_.reset();
    return;
  }
  // Copy on write: a rollout extends one state, whose pending decision nobody else shares.
  if (pending_.use_count() > 1) pending_ = std::make_shared<Pending>(*pending_);
  Pending &p = *pending_;
  std::vector<StageTiling> &stages = p.decision.stages;
  if (static_cast<int>(stages.size()) == next.stage) {
    stages.emplace_back();
    p.last_stage_done = false;
  }
  if (step.kind == Step::Kind::kTile) {
    stages.back().tile.push_back(step.tile);
    stages.back().inner.push_back(step.inner);
    return;
  }
  stages.back().parallel_loops = step.parallel_loops;
  stages.back().reduction_outside = step.reduction_outside;
  stages.back().unroll_reduction = step.unroll_reduction;
  stages.back().reduction_lanes = step.reduction_lanes;
  p.last_stage_done = true;
  p.start_stage(node.stages[stages.size()]);
}

}  // namespace protuner
