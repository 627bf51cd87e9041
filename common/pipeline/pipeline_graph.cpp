#include "common/pipeline/pipeline_graph.h"

#include <Halide.h>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>

#include "common/errors.h"
#include "common/pipeline/func_order.h"
#include "common/pipeline_io.h"

namespace protuner {
namespace {

namespace HI = Halide::Internal;
using Halide::Expr;

// Footprints are compiled over at most this many loop variables per stage (two slots each).
constexpr size_t kMaxLoopVars = 32;

std::string type_name(const Halide::Type &t) {
  std::ostringstream os;
  os << t;
  return os.str();
}

// Values of every parameter-derived variable at the estimates: scalar params, and the
// min/extent of every input and output buffer.
std::map<std::string, Expr> estimate_bindings(const std::vector<HI::Function> &outputs) {
  std::map<std::string, Expr> bindings;
  auto bind_shape = [&](const std::string &buffer, const EstimatedShape &shape) {
    for (size_t d = 0; d < shape.extents.size(); ++d) {
      bindings[buffer + ".min." + std::to_string(d)] = shape.mins[d];
      bindings[buffer + ".extent." + std::to_string(d)] = shape.extents[d];
    }
  };
  for (const auto &a : HI::infer_arguments(HI::Stmt(), outputs)) {
    if (a.buffer.defined()) continue;
    if (a.arg.is_buffer())
      bind_shape(a.arg.name, input_estimate(a));
    else
      bindings[a.arg.name] = scalar_estimate(a);
  }
  for (const HI::Function &f : outputs) {
    const EstimatedShape shape = output_estimate(f);
    for (const auto &p : f.output_buffers()) bind_shape(p.name(), shape);
  }
  return bindings;
}

int64_t evaluate_constant(const Expr &e, const std::map<std::string, Expr> &bindings,
                          const std::string &who) {
  const Expr v = HI::simplify(HI::substitute(bindings, e));
  const int64_t *c = HI::as_const_int(v);
  if (c == nullptr)
    throw ConfigError(who + " is not constant at the estimates: " + [&] {
      std::ostringstream os;
      os << v;
      return os.str();
    }());
  return *c;
}

// Everything needed to derive one stage's footprints: its loop variables as symbolic
// intervals, and the slot each interval end occupies in a compiled BoundExpr.
struct StageScope {
  HI::Scope<HI::Interval> scope;
  std::map<std::string, int> slots;
};

StageScope make_scope(const std::vector<std::string> &loop_vars) {
  StageScope s;
  for (size_t i = 0; i < loop_vars.size(); ++i) {
    const std::string lo = loop_vars[i] + ".fp.min", hi = loop_vars[i] + ".fp.max";
    s.scope.push(loop_vars[i], HI::Interval(HI::Variable::make(Halide::Int(32), lo),
                                            HI::Variable::make(Halide::Int(32), hi)));
    s.slots[lo] = static_cast<int>(2 * i);
    s.slots[hi] = static_cast<int>(2 * i + 1);
  }
  return s;
}

std::optional<BoundExpr> compile_bound(const Expr &e, const StageScope &s,
                                       const std::map<std::string, Expr> &bindings) {
  if (!e.defined() || e.same_as(HI::Interval::neg_inf()) || e.same_as(HI::Interval::pos_inf())) {
    return std::nullopt;
  }
  return BoundExpr::compile(HI::simplify(HI::substitute(bindings, e)), s.slots);
}

Footprint compile_box(const std::string &producer, const HI::Box &box, const StageScope &s,
                      const std::map<std::string, Expr> &bindings) {
  std::vector<std::optional<BoundExpr>> mins, maxs;
  for (size_t d = 0; d < box.size(); ++d) {
    mins.push_back(compile_bound(box[d].min, s, bindings));
    maxs.push_back(compile_bound(box[d].max, s, bindings));
  }
  return Footprint(producer, std::move(mins), std::move(maxs));
}

// Whether some call in `e` to a Func or buffer has an argument with min, max, select or a
// call in it: an index that is clamped or depends on data.
bool reads_at_clamped_index(const Expr &e) {
  class Finder : public HI::IRGraphVisitor {
   public:
    bool found = false;

   private:
    using HI::IRGraphVisitor::visit;
    class InIndex : public HI::IRGraphVisitor {
     public:
      bool found = false;

     private:
      using HI::IRGraphVisitor::visit;
      void visit(const HI::Min *) override { found = true; }
      void visit(const HI::Max *) override { found = true; }
      void visit(const HI::Select *) override { found = true; }
      void visit(const HI::Call *) override { found = true; }
      void visit(const HI::Load *) override { found = true; }
    };
    void visit(const HI::Call *op) override {
      if (op->call_type == HI::Call::Halide || op->call_type == HI::Call::Image) {
        for (const Expr &a : op->args) {
          InIndex in_index;
          a.accept(&in_index);
          found = found || in_index.found;
        }
      }
      HI::IRGraphVisitor::visit(op);
    }
  };
  Finder f;
  e.accept(&f);
  return f.found;
}

// Whether `e` calls a Func or reads a buffer: its value depends on data.
bool loads_a_value(const Expr &e) {
  class Finder : public HI::IRGraphVisitor {
   public:
    bool found = false;

   private:
    using HI::IRGraphVisitor::visit;
    void visit(const HI::Call *op) override {
      found = found || op->call_type == HI::Call::Halide || op->call_type == HI::Call::Image;
      HI::IRGraphVisitor::visit(op);
    }
  };
  Finder f;
  e.accept(&f);
  return f.found;
}

// The Funcs `ops` calls at two affine indices of different shapes: coefficients that
// differ between two call sites whose every index is affine (constant offsets alone, a
// stencil's taps, do not count; neither do gathers, whose footprint Halide bounds by the
// values they can take).
std::vector<std::string> producers_read_in_several_shapes(const OpHistogram &ops) {
  std::map<std::string, const Access *> first;
  std::vector<std::string> out;
  for (const Access &a : ops.accesses) {
    const bool affine = std::find(a.affine.begin(), a.affine.end(), false) == a.affine.end();
    if (a.is_input || a.is_self || !affine) continue;
    auto [it, added] = first.emplace(a.producer, &a);
    if (!added && it->second->coefficients != a.coefficients &&
        std::find(out.begin(), out.end(), a.producer) == out.end()) {
      out.push_back(a.producer);
    }
  }
  return out;
}

StageNode analyze_stage(const HI::Function &fn, int index, const HI::Definition &def,
                        const std::map<std::string, HI::Function> &env,
                        const std::map<std::string, Expr> &bindings,
                        const HI::FuncValueBounds &value_bounds) {
  StageNode stage;
  stage.index = index;
  const std::string who = "stage " + std::to_string(index) + " of '" + fn.name() + "'";
  for (size_t i = 0; i < def.args().size(); ++i) {
    const auto *v = def.args()[i].as<HI::Variable>();
    if (v && std::find(fn.args().begin(), fn.args().end(), v->name) != fn.args().end()) {
      stage.loop_vars.push_back(v->name);
      stage.pure_dims.push_back(static_cast<int>(i));
    }
  }
  stage.num_pure = static_cast<int>(stage.loop_vars.size());
  const auto &rvars = def.schedule().rvars();
  stage.constant_reduction_extent = !rvars.empty() && HI::is_const(rvars.front().extent);
  for (const HI::ReductionVariable &rv : rvars) {
    stage.loop_vars.push_back(rv.var);
    const int64_t lo = evaluate_constant(rv.min, bindings, who + " rvar " + rv.var + " min");
    const int64_t ext = evaluate_constant(rv.extent, bindings, who + " rvar " + rv.var + " extent");
    stage.rvar_region.push_back({lo, lo + ext - 1});
  }
  if (stage.loop_vars.size() > kMaxLoopVars) {
    throw ConfigError(who + " has more than " + std::to_string(kMaxLoopVars) + " loop variables");
  }

  StageScope s = make_scope(stage.loop_vars);
  std::vector<Expr> exprs = def.values();
  if (index > 0) exprs.insert(exprs.end(), def.args().begin(), def.args().end());
  if (def.predicate().defined()) exprs.push_back(def.predicate());
  std::map<std::string, HI::Box> required, inputs;
  for (const Expr &e : exprs) {
    for (const auto &[name, box] : HI::boxes_required(e, s.scope, value_bounds)) {
      if (name == fn.name()) continue;
      auto &boxes = env.count(name) ? required : inputs;
      auto it = boxes.find(name);
      if (it == boxes.end())
        boxes.emplace(name, box);
      else
        HI::merge_boxes(it->second, box);
    }
  }
  for (const auto &[name, box] : required) {
    stage.footprints.push_back(compile_box(name, box, s, bindings));
  }
  for (const auto &[name, box] : inputs) {
    stage.input_reads.push_back(compile_box(name, box, s, bindings));
  }
  stage.unsafe_to_slide = !inputs.empty();
  for (const Expr &e : exprs) stage.unsafe_to_slide = stage.unsafe_to_slide || reads_at_clamped_index(e);
  if (index > 0) {
    HI::Box written;
    for (const Expr &arg : def.args()) {
      written.push_back(HI::bounds_of_expr_in_scope(arg, s.scope, value_bounds));
      stage.scatters = stage.scatters || loads_a_value(arg);
    }
    stage.writes.push_back(compile_box(fn.name(), written, s, bindings));
  }
  stage.ops = histogram_of_stage(def, index > 0, stage.loop_vars, stage.num_pure, fn.name());
  if (index > 0 && !stage.rvar_region.empty()) {
    const bool associative =
        HI::prove_associativity(fn.name(), def.args(), def.values()).associative();
    stage.rfactorable =
        associative && stage.num_pure == 0 && stage.rvar_region.back().extent() >= 2;
    bool integers = true;
    for (const Expr &value : def.values()) integers = integers && value.type().is_int_or_uint();
    stage.lane_rfactorable = associative && integers && stage.num_pure > 0;
  }
  stage.reads_in_several_shapes = producers_read_in_several_shapes(stage.ops);
  for (const Access &a : stage.ops.accesses) {
    if (!a.is_self || stage.num_pure == 0) continue;
    for (size_t d = 0; d < a.coefficients.size(); ++d) {
      for (size_t v = stage.num_pure; v < a.coefficients[d].size(); ++v) {
        stage.scans =
            stage.scans || (a.affine[d] && a.coefficients[d][v] != 0 && a.offsets[d] != 0);
      }
    }
  }
  stage.code_per_point =
      std::max<int64_t>(1, std::llround(stage.ops.arithmetic() + stage.ops.linear_index_ops) +
                               static_cast<int64_t>(stage.ops.accesses.size()));
  for (const Access &a : stage.ops.accesses) stage.gathers += a.pattern == AccessPattern::kGather;
  return stage;
}

FuncNode analyze_func(const HI::Function &fn, const std::vector<HI::Function> &outputs,
                      const std::map<std::string, HI::Function> &env,
                      const std::map<std::string, Expr> &bindings,
                      const HI::FuncValueBounds &value_bounds) {
  FuncNode node;
  node.name = fn.name();
  node.dimensions = fn.dimensions();
  node.args = fn.args();
  node.is_output = std::any_of(outputs.begin(), outputs.end(),
                               [&](const HI::Function &o) { return o.name() == fn.name(); });
  for (const Halide::Type &t : fn.output_types()) node.value_types.push_back(type_name(t));
  node.stages.push_back(analyze_stage(fn, 0, fn.definition(), env, bindings, value_bounds));
  for (size_t u = 0; u < fn.updates().size(); ++u) {
    node.stages.push_back(analyze_stage(fn, static_cast<int>(u + 1), fn.updates()[u], env,
                                        bindings, value_bounds));
  }
  node.stages[0].shifts_tails = node.is_output;
  return node;
}

Region output_region(const HI::Function &fn) {
  const EstimatedShape shape = output_estimate(fn);
  Region r;
  for (size_t d = 0; d < shape.extents.size(); ++d) {
    r.push_back({shape.mins[d], int64_t{shape.mins[d]} + shape.extents[d] - 1});
  }
  return r;
}

// Each Func's region when the outputs cover `required` (indexed like funcs; empty for the
// others): walking consumers before producers, the union of what its consumers' stages
// need, plus what its own updates write. A read whose bounds are not derived takes the
// producer's root region (no bound while the root regions themselves are computed).
std::vector<Region> required_regions(const PipelineGraph &g, std::vector<Region> required) {
  for (size_t i = 0; i < g.funcs.size(); ++i) {
    const FuncNode &f = g.funcs[i];
    if (required[i].empty()) required[i] = Region(f.dimensions);  // nobody reads it
    required[i] = f.with_own_writes(std::move(required[i]));
    for (const StageNode &s : f.stages) {
      const Region loops = s.loop_region(required[i]);
      for (const Footprint &fp : s.footprints) {
        const int p = g.find(fp.producer());
        const Region whole =
            g.funcs[p].root_region.empty() ? Region(fp.dimensions()) : g.funcs[p].root_region;
        const Region need = fp.eval(loops, whole);
        if (required[p].empty()) required[p] = Region(fp.dimensions());
        for (int d = 0; d < fp.dimensions(); ++d) required[p][d].include(need[d]);
      }
    }
  }
  return required;
}

void compute_root_regions(PipelineGraph &g, const std::map<std::string, HI::Function> &env) {
  std::vector<Region> outputs(g.funcs.size());
  for (size_t i = 0; i < g.funcs.size(); ++i) {
    if (g.funcs[i].is_output) outputs[i] = output_region(env.at(g.funcs[i].name));
  }
  const std::vector<Region> regions = required_regions(g, std::move(outputs));
  for (size_t i = 0; i < g.funcs.size(); ++i) g.funcs[i].root_region = regions[i];
}

// Sets FuncNode::extent_follows_outputs: the outputs' regions grow in every dimension and
// the regions the Funcs then need are compared with their root regions.
void mark_output_sized_dimensions(PipelineGraph &g) {
  constexpr int64_t kGrowth = 64;
  std::vector<Region> grown(g.funcs.size());
  for (size_t i = 0; i < g.funcs.size(); ++i) {
    if (!g.funcs[i].is_output) continue;
    grown[i] = g.funcs[i].root_region;
    for (Span &sp : grown[i]) {
      if (!sp.empty()) sp.max += kGrowth;
    }
  }
  grown = required_regions(g, std::move(grown));
  for (size_t i = 0; i < g.funcs.size(); ++i) {
    FuncNode &f = g.funcs[i];
    f.extent_follows_outputs.assign(f.root_region.size(), false);
    for (size_t d = 0; d < f.root_region.size(); ++d) {
      f.extent_follows_outputs[d] = grown[i][d].extent() != f.root_region[d].extent();
    }
  }
}

bool contains(const Region &outer, const Region &inner) {
  for (size_t d = 0; d < inner.size(); ++d) {
    if (!inner[d].empty() && (inner[d].min < outer[d].min || inner[d].max > outer[d].max))
      return false;
  }
  return true;
}

// Sets FuncNode::widens, overcompute_reads_past_inputs and region_from_clamps, producers
// first: each Func's region is widened on every side and the reads that follow it are
// compared with the reads at its root region. Any widening shows an index that follows
// the Func's own; clamped and data-dependent indices stay put.
void mark_overcompute_hazards(PipelineGraph &g) {
  constexpr int64_t kWidening = 64;
  const size_t n = g.funcs.size();
  std::vector<bool> reads_inputs_past(n, false);  // its own input reads grow
  std::vector<bool> read_without_following(n, false);  // some reader's indices stay put
  for (size_t i = n; i-- > 0;) {
    FuncNode &f = g.funcs[i];
    f.widens.assign(n, false);
    Region wide = f.root_region;
    for (Span &sp : wide) {
      if (!sp.empty()) sp = {sp.min - kWidening, sp.max + kWidening};
    }
    for (const StageNode &s : f.stages) {
      const Region at_root = s.loop_region(f.root_region), widened = s.loop_region(wide);
      for (const Footprint &fp : s.input_reads) {
        const Region underived(fp.dimensions(), Span{0, 0});  // the same in both
        if (!contains(fp.eval(at_root, underived), fp.eval(widened, underived)))
          reads_inputs_past[i] = true;
      }
      for (const Footprint &fp : s.footprints) {
        const int p = g.find(fp.producer());
        if (contains(g.funcs[p].root_region, fp.eval(widened, g.funcs[p].root_region))) {
          read_without_following[p] = true;
          continue;
        }
        // An output is computed over its buffer alone, like an input it is there to be read
        // within its bounds.
        if (g.funcs[p].is_output) reads_inputs_past[i] = true;
        f.widens[p] = true;
        for (size_t q = 0; q < n; ++q) f.widens[q] = f.widens[q] || g.funcs[p].widens[q];
      }
    }
    f.overcompute_reads_past_inputs = reads_inputs_past[i];
    for (size_t q = 0; q < n; ++q) {
      f.overcompute_reads_past_inputs =
          f.overcompute_reads_past_inputs || (f.widens[q] && reads_inputs_past[q]);
    }
  }
  for (size_t i = 0; i < n; ++i) {  // consumers first
    FuncNode &f = g.funcs[i];
    f.region_from_clamps = read_without_following[i];
    for (int c : f.consumers) {
      f.region_from_clamps = f.region_from_clamps || g.funcs[c].region_from_clamps;
    }
  }
}

// Sets FuncNode::round_up_reads_past_inputs. Per Func and dimension, its root region grows
// by kRoundUpMaxPoints past its max there, and the regions its producers then need are
// carried through the footprints, consumers before producers (graph order), so each
// producer grows only in the dimensions its readers' indices follow. The dimension is
// unsafe when some grown Func reads an input past what the root regions read.
void mark_round_up_hazards(PipelineGraph &g) {
  const size_t n = g.funcs.size();
  // Whether growing Func f's region to `grown` reads an input past the root regions' reads.
  auto reads_past_inputs = [&](size_t f, const Region &grown) {
    std::vector<Region> region(n);
    for (size_t i = 0; i < n; ++i) region[i] = g.funcs[i].root_region;
    region[f] = grown;
    for (size_t i = f; i < n; ++i) {
      const FuncNode &node = g.funcs[i];
      if (region[i] == node.root_region) continue;
      for (const StageNode &s : node.stages) {
        const Region at_root = s.loop_region(node.root_region), loops = s.loop_region(region[i]);
        for (const Footprint &fp : s.input_reads) {
          const Region underived(fp.dimensions(), Span{0, 0});  // the same in both
          if (!contains(fp.eval(at_root, underived), fp.eval(loops, underived))) return true;
        }
        for (const Footprint &fp : s.footprints) {
          const int p = g.find(fp.producer());
          const Region need = fp.eval(loops, g.funcs[p].root_region);
          // An output read by another Func is computed over its buffer only, and read past
          // it like an input.
          if (g.funcs[p].is_output && !contains(g.funcs[p].root_region, need)) return true;
          if (region[p].empty()) region[p] = Region(need.size());
          for (size_t d = 0; d < need.size(); ++d) region[p][d].include(need[d]);
        }
      }
    }
    return false;
  };
  for (size_t f = 0; f < n; ++f) {
    FuncNode &node = g.funcs[f];
    node.round_up_reads_past_inputs.assign(node.root_region.size(), true);
    for (size_t d = 0; d < node.root_region.size(); ++d) {
      if (node.root_region[d].empty()) continue;
      Region grown = node.root_region;
      grown[d].max += kRoundUpMaxPoints;
      node.round_up_reads_past_inputs[d] = reads_past_inputs(f, grown);
    }
  }
}

}  // namespace

Region FuncNode::with_own_writes(Region required) const {
  // Data-dependent writes fall back to what is required so far.
  const Region so_far = required;
  for (const StageNode &s : stages) {
    for (const Footprint &w : s.writes) {
      const Region wrote = w.eval(s.loop_region(so_far), so_far);
      for (int d = 0; d < dimensions; ++d) required[d].include(wrote[d]);
    }
  }
  return required;
}

Region StageNode::loop_region(const Region &func_region) const {
  Region r;
  for (int d : pure_dims) r.push_back(func_region[d]);
  r.insert(r.end(), rvar_region.begin(), rvar_region.end());
  return r;
}

int value_type_bits(const std::string &type) {
  size_t i = type.size();
  while (i > 0 && std::isdigit(static_cast<unsigned char>(type[i - 1]))) --i;
  int bits = 0;
  for (size_t k = i; k < type.size(); ++k) bits = bits * 10 + (type[k] - '0');
  return std::max(bits, 8);
}

int value_bytes(const FuncNode &f) {
  int bytes = 0;
  for (const std::string &t : f.value_types) bytes += value_type_bits(t) / 8;
  return std::max(bytes, 1);
}

int PipelineGraph::find(const std::string &name) const {
  for (size_t i = 0; i < funcs.size(); ++i) {
    if (funcs[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

std::vector<Halide::Func> funcs_in_graph_order(Halide::Pipeline &pipeline) {
  std::vector<HI::Function> outputs;
  for (const Halide::Func &f : pipeline.outputs()) outputs.push_back(f.function());
  std::vector<Halide::Func> funcs;
  for (const HI::Function &fn : protuner_func_order::funcs_in_order(outputs))
    funcs.emplace_back(fn);
  return funcs;
}

std::string stable_func_name(const std::string &name) {
  auto all_digits = [](const std::string &s, size_t from) {
    return from < s.size() && std::all_of(s.begin() + static_cast<long>(from), s.end(), [](char c) {
             return std::isdigit(static_cast<unsigned char>(c));
           });
  };
  std::string n = name;
  // unique_name(prefix) appends "$<counter>" to a name already in use.
  if (const auto dollar = n.rfind('$'); dollar != std::string::npos && all_digits(n, dollar + 1)) {
    n.resize(dollar);
  }
  // Anonymous Funcs: lambda() makes "lambda_<counter>", Func() makes "f<counter>".
  if (n.rfind("lambda_", 0) == 0 && all_digits(n, 7)) return "lambda";
  if (n.size() > 1 && n[0] == 'f' && all_digits(n, 1)) return "f";
  return n;
}

std::vector<FuncSignature> pipeline_signature(const PipelineGraph &graph) {
  std::vector<FuncSignature> sig;
  for (const FuncNode &f : graph.funcs) {
    sig.push_back(
        {stable_func_name(f.name), f.dimensions, static_cast<int>(f.stages.size()), f.value_types});
  }
  return sig;
}

std::vector<FuncSignature> pipeline_signature(const std::vector<Halide::Func> &funcs) {
  std::vector<FuncSignature> sig;
  for (const Halide::Func &f : funcs) {
    std::vector<std::string> types;
    for (const Halide::Type &t : f.function().output_types()) types.push_back(type_name(t));
    sig.push_back(
        {stable_func_name(f.name()), f.dimensions(), f.num_update_definitions() + 1, types});
  }
  return sig;
}

void check_same_pipeline(const std::vector<FuncSignature> &expected,
                         const std::vector<FuncSignature> &actual) {
  if (expected.size() != actual.size()) {
    throw ConfigError("the schedule is for a different pipeline: it has " +
                      std::to_string(expected.size()) + " Funcs, this one has " +
                      std::to_string(actual.size()));
  }
  auto describe = [](const FuncSignature &f) {
    return "'" + f.name + "' (" + std::to_string(f.dimensions) + " dims, " +
           std::to_string(f.stages) + " stages)";
  };
  for (size_t i = 0; i < actual.size(); ++i) {
    if (!(expected[i] == actual[i])) {
      throw ConfigError("the schedule is for a different pipeline: Func #" + std::to_string(i) +
                        " is " + describe(actual[i]) + " here but " + describe(expected[i]) +
                        " in the schedule");
    }
  }
}

// Sets FuncNode::reads_keep_size: every footprint is evaluated over boxes of a few sizes
// (odd and even, so divisions by small constants show) moved along each pure loop variable
// by whole boxes, and the region it reads must keep its extents; then producers inherit
// their readers' variation.
void mark_size_keeping_reads(PipelineGraph &g) {
  constexpr int64_t kBoxSizes[] = {3, 5, 7, 8};
  constexpr int64_t kMoves = 24;
  for (const FuncNode &f : g.funcs) {
    for (const StageNode &s : f.stages) {
      const Region loops = s.loop_region(f.root_region);
      for (const Footprint &fp : s.footprints) {
        FuncNode &p = g.funcs[g.find(fp.producer())];
        if (!p.reads_keep_size) continue;
        for (int v = 0; v < s.num_pure && p.reads_keep_size; ++v) {
          for (int64_t size : kBoxSizes) {
            if (!p.reads_keep_size) break;
            Region box = loops;
            std::optional<Region> first;
            for (int64_t k = 0; k < kMoves; ++k) {
              box[v] = {loops[v].min + k * size, loops[v].min + (k + 1) * size - 1};
              Region read = fp.eval(box, p.root_region);
              for (Span &sp : read) sp = {0, sp.extent() - 1};
              if (!first) {
                first = std::move(read);
              } else if (read != *first) {
                p.reads_keep_size = false;
              }
            }
          }
        }
      }
    }
  }
  for (FuncNode &f : g.funcs) {  // consumers first
    for (int c : f.consumers) f.reads_keep_size = f.reads_keep_size && g.funcs[c].reads_keep_size;
  }
}

PipelineGraph analyze_pipeline(Halide::Pipeline &pipeline) {
  std::vector<HI::Function> outputs;
  for (const Halide::Func &f : pipeline.outputs()) outputs.push_back(f.function());
  const std::map<std::string, HI::Function> env = HI::build_environment(outputs);
  const std::map<std::string, Expr> bindings = estimate_bindings(outputs);

  const std::vector<HI::Function> funcs = protuner_func_order::funcs_in_order(outputs);
  // The range of each Func's values, as Halide's own bounds inference uses it: an index
  // computed from data (bilateral_grid's intensity bin, a LUT lookup) is bounded by the
  // clamp in the Func that computes it, not unknown. Halide wants producers first.
  std::vector<std::string> realization_order;
  for (auto it = funcs.rbegin(); it != funcs.rend(); ++it) realization_order.push_back(it->name());
  const HI::FuncValueBounds value_bounds =
      HI::compute_function_value_bounds(realization_order, env);

  PipelineGraph graph;
  for (const HI::Function &fn : funcs) {
    graph.funcs.push_back(analyze_func(fn, outputs, env, bindings, value_bounds));
  }
  for (size_t i = 0; i < graph.funcs.size(); ++i) {
    for (const StageNode &s : graph.funcs[i].stages) {
      for (const Footprint &fp : s.footprints) {
        const int p = graph.find(fp.producer());
        auto &prods = graph.funcs[i].producers;
        if (std::find(prods.begin(), prods.end(), p) != prods.end()) continue;
        prods.push_back(p);
        graph.funcs[p].consumers.push_back(static_cast<int>(i));
      }
    }
  }
  compute_root_regions(graph, env);
  mark_output_sized_dimensions(graph);
  mark_overcompute_hazards(graph);
  mark_round_up_hazards(graph);
  mark_size_keeping_reads(graph);
  return graph;
}

}  // namespace protuner
