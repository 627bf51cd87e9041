#include "searcher/schedule_state.h"

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
  const std::string why = check_decision(d);
  if (!why.empty()) {
    throw std::invalid_argument("illegal decision for '" + graph_->funcs[num_decided()].name +
                                "': " + why);
  }
  auto entry = std::make_shared<Decided>();
  entry->bounds = compute_bounds(num_decided(), d);
  entry->decision = std::move(d);
  decided_.push_back(std::move(entry));
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
    if (t.parallel_loops < 0 || t.parallel_loops > static_cast<int>(n)) {
      return "stage " + std::to_string(s) + " parallel_loops out of range";
    }
  }
  if (d.placement == Placement::kRoot) return "";
  for (size_t s = 0; s < d.stages.size(); ++s) {
    // Halide 14 infers wrong bounds for a Func computed inside another loop nest whose own
    // fused loops cover guarded splits: it reads far outside its inputs. Fuse at root only.
    if (d.stages[s].parallel_loops > 1) {
      return "stage " + std::to_string(s) + ": fused parallel loops only in Funcs computed at root";
    }
  }

  const LoopRef &at = d.compute_at;
  if (at.is_root() || at.func >= f) return "compute_at must name a loop of a decided consumer";
  if (decision(at.func).placement == Placement::kInline) return "compute_at an inlined Func";
  const auto &loops = bounds(at.func).loops;
  if (at.stage < 0 || at.stage >= static_cast<int>(loops.size()) || at.loop < 0 ||
      at.loop >= static_cast<int>(loops[at.stage].size())) {
    return "compute_at names a loop that does not exist";
  }
  if (loops[at.stage][at.loop].kind == LoopKind::kInner) {
    return "compute_at a vectorized or unrolled inner loop";
  }
  if (!can_compute_at(f, at)) return "some use of it is outside the compute_at loop";
  const auto stores = store_options(at);
  if (std::find(stores.begin(), stores.end(), d.store_at) == stores.end()) {
    return "store_at must be the compute_at loop or enclose it, and not be outside a parallel "
           "loop that encloses compute_at";
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
    }
    add_uses(f, g, s, loops, out);
  });
  for (int d = 0; d < node.dimensions; ++d) {
    if (out[d].empty()) out[d] = node.root_region[d];
  }
  return out;
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
  for (LoopRef l = at; !l.is_root();) {
    for (int k = l.loop; k >= 0; --k) out.push_back({l.func, l.stage, k});
    const FuncDecision &d = decision(l.func);
    l = d.placement == Placement::kAt ? d.compute_at : LoopRef{};
  }
  return out;
}

std::vector<LoopRef> ScheduleState::store_options(const LoopRef &at) const {
  // Storage further out than the computation makes Halide 14 slide the producer's window
  // across iterations, and with guarded tails that computes wrong values or reads outside
  // the inputs (found by the random-schedule property test on blur, bilateral grid and
  // convolution pipelines). Until that is understood, storage stays at the compute loop.
  return {at};
}

int64_t ScheduleState::inline_footprint(int f) const {
  int64_t worst = 0;
  for_each_use(*this, f, [&](int g, int s) {
    const StageNode &stage = graph_->funcs[g].stages[s];
    Region point = stage.loop_region(bounds(g).region);
    for (Span &sp : point) {
      const int64_t mid = sp.min + sp.extent() / 2;
      sp = {mid, mid};
    }
    Region need(graph_->funcs[f].dimensions);
    add_uses(f, g, s, point, need);
    worst = std::max(worst, region_points(need));
  });
  return worst;
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
  for (const LoopRef &l : enclosing_loops(at)) {
    b.inside_parallel = b.inside_parallel || bounds(l.func).loops[l.stage][l.loop].parallel;
  }
  const FuncNode &node = graph_->funcs[f];
  for (size_t s = 0; s < node.stages.size(); ++s) {
    const Region loops = node.stages[s].loop_region(b.region);
    b.loops.push_back(stage_loops(node.stages[s], d.stages[s], loops));
    b.stage_points.push_back(region_points(loops));
  }
  return b;
}

}  // namespace protuner
