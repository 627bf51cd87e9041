#include "common/pipeline/op_histogram.h"

#include <Halide.h>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <sstream>

namespace protuner {
namespace {

namespace HI = Halide::Internal;
using Halide::Expr;

OpType op_type_of(const Halide::Type &t) {
  if (t.is_bool()) return OpType::kBool;
  const int bits = t.bits();
  if (t.is_float() || t.is_bfloat()) {
    return bits <= 16 ? OpType::kFloat16 : bits <= 32 ? OpType::kFloat32 : OpType::kFloat64;
  }
  if (t.is_int()) {
    return bits <= 8    ? OpType::kInt8
           : bits <= 16 ? OpType::kInt16
           : bits <= 32 ? OpType::kInt32
                        : OpType::kInt64;
  }
  if (t.is_uint()) {
    return bits <= 8    ? OpType::kUInt8
           : bits <= 16 ? OpType::kUInt16
           : bits <= 32 ? OpType::kUInt32
                        : OpType::kUInt64;
  }
  return OpType::kUInt64;  // handles
}

// Extern math functions, as Halide names them ("sqrt_f32", "pow_f64", ...) by prefix.
bool is_math_extern(const std::string &name) {
  static const char *const kMath[] = {"sqrt",  "exp",   "log",   "pow",   "sin",  "cos",
                                      "tan",   "asin",  "acos",  "atan",  "sinh", "cosh",
                                      "tanh",  "asinh", "acosh", "atanh", "floor", "ceil",
                                      "round", "trunc", "fast_inverse", "is_nan",
                                      "is_inf", "is_finite"};
  for (const char *m : kMath) {
    const std::string p = m;
    if (name.compare(0, p.size(), p) == 0) return true;
  }
  return false;
}

// Whether an Expr reads memory or any of the given variables: what makes an index depend
// on the loop (or on data).
class DependsOn : public HI::IRVisitor {
 public:
  explicit DependsOn(const std::map<std::string, int> &vars) : vars_(vars) {}
  bool loads = false, vars = false;
  uint64_t var_bits = 0;  // bit v: reads the variable of index v (the first 64)

 private:
  using HI::IRVisitor::visit;
  void visit(const HI::Variable *op) override {
    const auto it = vars_.find(op->name);
    if (it == vars_.end()) return;
    vars = true;
    if (it->second < 64) var_bits |= uint64_t{1} << it->second;
  }
  void visit(const HI::Call *op) override {
    if (op->call_type == HI::Call::Halide || op->call_type == HI::Call::Image) loads = true;
    HI::IRVisitor::visit(op);
  }
  const std::map<std::string, int> &vars_;
};

bool loop_invariant(const Expr &e, const std::map<std::string, int> &vars) {
  DependsOn d(vars);
  e.accept(&d);
  return !d.loads && !d.vars;
}

std::optional<double> constant_of(const Expr &e) {
  if (const int64_t *i = HI::as_const_int(e)) return static_cast<double>(*i);
  if (const uint64_t *u = HI::as_const_uint(e)) return static_cast<double>(*u);
  if (const double *f = HI::as_const_float(e)) return *f;
  return std::nullopt;
}

// Whether an Expr carries a `likely` tag (BoundaryConditions wrap the clamped variable in
// one): Halide then splits the loop at the clamp's edges wherever the clamp ends up.
bool tagged_likely(const Expr &e) {
  class Finder : public HI::IRVisitor {
   public:
    bool found = false;

   private:
    using HI::IRVisitor::visit;
    void visit(const HI::Call *op) override {
      found = found || op->is_intrinsic({HI::Call::likely, HI::Call::likely_if_innermost});
      HI::IRVisitor::visit(op);
    }
  } finder;
  e.accept(&finder);
  return finder.found;
}

// Folds bound `b` of a plain clamp into the running hash `clamp` (see Access::clamps).
void add_clamp_bound(const char *side, const Expr &b, uint64_t &clamp) {
  std::ostringstream text;
  text << side << ' ' << b;
  clamp = join_clamps(clamp, std::hash<std::string>{}(text.str()));
}

// How many values `index` can take when bounds analysis finds constant bounds for it
// (Access::reach), else 0.
double constant_reach(const Expr &index) {
  const HI::Interval range = HI::bounds_of_expr_in_scope(index, HI::Scope<HI::Interval>());
  if (!range.is_bounded()) return 0;
  const Expr min = HI::simplify(range.min), max = HI::simplify(range.max);
  const int64_t *lo = HI::as_const_int(min), *hi = HI::as_const_int(max);  // point into them
  if (!lo || !hi || *hi < *lo) return 0;
  return static_cast<double>(*hi - *lo + 1);
}

// Adds scale * (coefficients of e) to `coeffs` and its literal constant part to `offset`;
// false when e is not affine in `vars`.
// Clamps (min/max against a loop-invariant bound) count as their argument: boundary
// conditions clamp affine indices, which stay affine away from the edges. The bounds of
// those without a `likely` tag go into `clamp`; one with the tag sets `edge`.
bool add_affine(const Expr &e, const std::map<std::string, int> &vars, double scale,
                std::vector<double> &coeffs, double &offset, uint64_t &clamp, bool &edge) {
  auto affine = [&](const Expr &sub, double s) {
    return add_affine(sub, vars, s, coeffs, offset, clamp, edge);
  };
  if (loop_invariant(e, vars)) {
    if (auto c = constant_of(e)) offset += scale * *c;
    return true;
  }
  if (const auto *v = e.as<HI::Variable>()) {
    coeffs[vars.at(v->name)] += scale;
    return true;
  }
  if (const auto *a = e.as<HI::Add>()) return affine(a->a, scale) && affine(a->b, scale);
  if (const auto *s = e.as<HI::Sub>()) return affine(s->a, scale) && affine(s->b, -scale);
  if (const auto *m = e.as<HI::Mul>()) {
    if (auto c = constant_of(m->b)) return affine(m->a, scale * *c);
    if (auto c = constant_of(m->a)) return affine(m->b, scale * *c);
    return false;
  }
  if (const auto *d = e.as<HI::Div>()) {
    auto c = constant_of(d->b);
    return c && *c != 0 && affine(d->a, scale / *c);
  }
  if (const auto *c = e.as<HI::Cast>()) return affine(c->value, scale);
  // One side of a clamp's min or max is the bound, the other the clamped index.
  auto clamped = [&](const char *side, const Expr &a, const Expr &b) {
    const bool b_bound = loop_invariant(b, vars);
    if (!b_bound && !loop_invariant(a, vars)) return false;
    const Expr &index = b_bound ? a : b;
    if (tagged_likely(index)) {
      edge = true;
    } else {
      add_clamp_bound(side, b_bound ? b : a, clamp);
    }
    return affine(index, scale);
  };
  if (const auto *m = e.as<HI::Min>()) return clamped("min", m->a, m->b);
  if (const auto *m = e.as<HI::Max>()) return clamped("max", m->a, m->b);
  if (const auto *c = e.as<HI::Call>()) {
    // Hints that wrap an index without changing it.
    if (c->is_intrinsic({HI::Call::likely, HI::Call::likely_if_innermost,
                         HI::Call::promise_clamped, HI::Call::unsafe_promise_clamped})) {
      return affine(c->args[0], scale);
    }
  }
  return false;
}

class Counter : public HI::IRVisitor {
 public:
  Counter(const std::vector<std::string> &loop_vars, int num_pure, std::string self)
      : num_pure_(num_pure), self_(std::move(self)) {
    for (size_t i = 0; i < loop_vars.size(); ++i) vars_[loop_vars[i]] = static_cast<int>(i);
  }
  OpHistogram h;

 private:
  using HI::IRVisitor::visit;

  void count(OpKind k, const Halide::Type &t) {
    h.counts[static_cast<int>(k)][static_cast<int>(op_type_of(t))] += 1;
  }
  template <typename T>
  void binary(OpKind k, const T *op) {
    if (strength_reduced(op)) return;
    count(k, op->type);
    HI::IRVisitor::visit(op);
  }

  // Integer arithmetic linear in the loop variables (x + r.y, 2 * x - 1: the usual index)
  // is not computed per point: the compiler keeps it as an induction variable or folds it
  // into the address, one add per loop iteration. It is counted apart, as code
  // (OpHistogram::linear_index_ops), not as work. Clamps and quotients are not linear:
  // their min, max and shift run per point.
  bool strength_reduced(const HI::BaseExprNode *op) {
    const Expr e(op);
    if (!e.type().is_int() && !e.type().is_uint()) return false;
    if (!linear(HI::substitute(lets_, e))) return false;
    h.linear_index_ops += operations(e);  // a let's value was counted at the let
    return true;
  }
  bool linear(const Expr &e) const {
    if (loop_invariant(e, vars_) || e.as<HI::Variable>()) return true;
    if (const auto *a = e.as<HI::Add>()) return linear(a->a) && linear(a->b);
    if (const auto *s = e.as<HI::Sub>()) return linear(s->a) && linear(s->b);
    if (const auto *m = e.as<HI::Mul>()) {
      return (constant_of(m->a) && linear(m->b)) || (constant_of(m->b) && linear(m->a));
    }
    if (const auto *c = e.as<HI::Cast>())
      return c->value.type().is_int_or_uint() && linear(c->value);
    return false;
  }
  // The arithmetic nodes of a linear expression.
  static double operations(const Expr &e) {
    if (const auto *a = e.as<HI::Add>()) return 1 + operations(a->a) + operations(a->b);
    if (const auto *s = e.as<HI::Sub>()) return 1 + operations(s->a) + operations(s->b);
    if (const auto *m = e.as<HI::Mul>()) return 1 + operations(m->a) + operations(m->b);
    if (const auto *c = e.as<HI::Cast>()) return 1 + operations(c->value);
    return 0;
  }
  template <typename T>
  void compare(const T *op) {
    count(OpKind::kCompare, op->a.type());
    HI::IRVisitor::visit(op);
  }

  void visit(const HI::IntImm *op) override { count(OpKind::kConstant, op->type); }
  void visit(const HI::UIntImm *op) override { count(OpKind::kConstant, op->type); }
  void visit(const HI::FloatImm *op) override { count(OpKind::kConstant, op->type); }
  void visit(const HI::Cast *op) override { binary(OpKind::kCast, op); }
  void visit(const HI::Add *op) override { binary(OpKind::kAdd, op); }
  void visit(const HI::Sub *op) override { binary(OpKind::kSub, op); }
  void visit(const HI::Mul *op) override { binary(OpKind::kMul, op); }
  void visit(const HI::Div *op) override { binary(OpKind::kDiv, op); }
  void visit(const HI::Mod *op) override { binary(OpKind::kMod, op); }
  void visit(const HI::Min *op) override { binary(OpKind::kMin, op); }
  void visit(const HI::Max *op) override { binary(OpKind::kMax, op); }
  void visit(const HI::EQ *op) override { compare(op); }
  void visit(const HI::NE *op) override { compare(op); }
  void visit(const HI::LT *op) override { compare(op); }
  void visit(const HI::LE *op) override { compare(op); }
  void visit(const HI::GT *op) override { compare(op); }
  void visit(const HI::GE *op) override { compare(op); }
  void visit(const HI::And *op) override { binary(OpKind::kLogical, op); }
  void visit(const HI::Or *op) override { binary(OpKind::kLogical, op); }
  void visit(const HI::Not *op) override { binary(OpKind::kLogical, op); }
  void visit(const HI::Select *op) override { binary(OpKind::kSelect, op); }

  // Indices may name variables that Halide's CSE bound: expand them before analysis.
  void visit(const HI::Let *op) override {
    op->value.accept(this);
    lets_[op->name] = HI::substitute(lets_, op->value);
    op->body.accept(this);
  }

  void visit(const HI::Call *op) override {
    switch (op->call_type) {
      case HI::Call::Halide:
      case HI::Call::Image:
        record_access(op);
        break;
      case HI::Call::Extern:
      case HI::Call::ExternCPlusPlus:
      case HI::Call::PureExtern:
        count(is_math_extern(op->name) ? OpKind::kMath : OpKind::kOtherCall, op->type);
        break;
      case HI::Call::Intrinsic:
      case HI::Call::PureIntrinsic:
        if (op->is_intrinsic({HI::Call::likely, HI::Call::likely_if_innermost,
                              HI::Call::promise_clamped, HI::Call::unsafe_promise_clamped,
                              HI::Call::strict_float, HI::Call::bundle})) {
          break;  // hints: no work of their own
        }
        if (op->is_intrinsic({HI::Call::bitwise_and, HI::Call::bitwise_or, HI::Call::bitwise_xor,
                              HI::Call::bitwise_not, HI::Call::shift_left,
                              HI::Call::shift_right})) {
          count(OpKind::kLogical, op->type);
        } else if (op->is_intrinsic({HI::Call::abs, HI::Call::absd})) {
          count(OpKind::kMath, op->type);
        } else {
          count(OpKind::kOtherCall, op->type);
        }
        break;
    }
    HI::IRVisitor::visit(op);  // index and argument arithmetic counts too
  }

  void record_access(const HI::Call *op) {
    const bool is_input = op->call_type == HI::Call::Image;
    count(is_input ? OpKind::kLoadInput : OpKind::kLoadFunc, op->type);
    Access a;
    a.producer = op->name;
    a.is_input = is_input;
    a.is_self = !is_input && op->name == self_;
    a.type = op_type_of(op->type);
    for (const Expr &arg : op->args) {
      std::vector<double> row(vars_.size(), 0.0);
      double offset = 0;
      const Expr index = HI::substitute(lets_, arg);
      DependsOn reads(vars_);
      index.accept(&reads);
      a.index_vars.push_back(reads.var_bits);
      uint64_t clamp = 0;
      bool edge = false;
      const bool ok = add_affine(index, vars_, 1.0, row, offset, clamp, edge);
      if (!ok) std::fill(row.begin(), row.end(), 0.0);
      a.clamps.push_back(ok ? clamp : 0);
      a.edge_clamped.push_back(ok && edge);
      a.reach.push_back(ok ? 0.0 : constant_reach(index));
      a.offsets.push_back(ok ? offset : 0.0);
      a.coefficients.push_back(std::move(row));
      a.affine.push_back(ok);
    }
    a.pattern = classify_access(a.coefficients, a.affine, num_pure_);
    h.accesses.push_back(std::move(a));
  }

  std::map<std::string, int> vars_;
  std::map<std::string, Expr> lets_;
  int num_pure_;
  std::string self_;
};

}  // namespace

const char *op_kind_name(OpKind k) {
  static const char *const kNames[] = {"add",    "sub",     "mul",     "div",       "mod",
                                       "min",    "max",     "compare", "select",    "logical",
                                       "cast",   "load_func", "load_input", "constant", "math",
                                       "other_call"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == kNumOpKinds);
  return kNames[static_cast<int>(k)];
}

const char *op_type_name(OpType t) {
  static const char *const kNames[] = {"bool",   "int8",   "int16",   "int32",   "int64",  "uint8",
                                       "uint16", "uint32", "uint64",  "float16", "float32", "float64"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == kNumOpTypes);
  return kNames[static_cast<int>(t)];
}

int op_type_bytes(OpType t) {
  static const int kBytes[] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8};
  static_assert(sizeof(kBytes) / sizeof(kBytes[0]) == kNumOpTypes);
  return kBytes[static_cast<int>(t)];
}

bool op_type_is_float(OpType t) {
  return t == OpType::kFloat16 || t == OpType::kFloat32 || t == OpType::kFloat64;
}

const char *access_pattern_name(AccessPattern p) {
  static const char *const kNames[] = {"gather", "transposed", "strided", "broadcast", "pointwise"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == kNumAccessPatterns);
  return kNames[static_cast<int>(p)];
}

double OpHistogram::count(OpKind k) const {
  double n = 0;
  for (double c : counts[static_cast<int>(k)]) n += c;
  return n;
}

double OpHistogram::count(OpType t) const {
  double n = 0;
  for (const auto &row : counts) n += row[static_cast<int>(t)];
  return n;
}

double OpHistogram::total() const {
  double n = 0;
  for (const auto &row : counts)
    for (double c : row) n += c;
  return n;
}

double OpHistogram::arithmetic() const {
  return total() - count(OpKind::kLoadFunc) - count(OpKind::kLoadInput) -
         count(OpKind::kConstant);
}

void OpHistogram::add(const OpHistogram &o, double weight) {
  for (int k = 0; k < kNumOpKinds; ++k)
    for (int t = 0; t < kNumOpTypes; ++t) counts[k][t] += weight * o.counts[k][t];
  linear_index_ops += weight * o.linear_index_ops;
}

AccessPattern classify_access(const std::vector<std::vector<double>> &coefficients,
                              const std::vector<bool> &affine, int num_pure) {
  for (bool a : affine) {
    if (!a) return AccessPattern::kGather;
  }
  // Dimensions indexed by exactly one loop variable must follow the loop variables' order.
  int last_var = -1;
  bool strided = false;
  for (const auto &row : coefficients) {
    int only = -1, nonzero = 0;
    for (size_t v = 0; v < row.size(); ++v) {
      if (row[v] == 0) continue;
      ++nonzero;
      only = static_cast<int>(v);
      strided = strided || std::abs(row[v]) != 1.0;
    }
    if (nonzero != 1) continue;
    if (only < last_var) return AccessPattern::kTransposed;
    last_var = only;
  }
  if (strided) return AccessPattern::kStrided;
  for (int v = 0; v < num_pure; ++v) {
    bool used = false;
    for (const auto &row : coefficients) used = used || row[v] != 0;
    if (!used) return AccessPattern::kBroadcast;
  }
  return AccessPattern::kPointwise;
}

OpHistogram histogram_of_stage(const HI::Definition &def, bool is_update,
                               const std::vector<std::string> &loop_vars, int num_pure,
                               const std::string &func_name) {
  // Count what lowering evaluates: Halide shares common subexpressions between the values,
  // the update's indices and the predicate, so they are counted once, as after its CSE.
  std::vector<Expr> exprs = def.values();
  if (is_update) exprs.insert(exprs.end(), def.args().begin(), def.args().end());
  if (def.predicate().defined() && !HI::is_const_one(def.predicate())) {
    exprs.push_back(def.predicate());
  }
  const Expr bundle = HI::common_subexpression_elimination(
      HI::Call::make(Halide::Int(32), HI::Call::bundle, exprs, HI::Call::PureIntrinsic));
  Counter c(loop_vars, num_pure, func_name);
  bundle.accept(&c);
  return c.h;
}

}  // namespace protuner
