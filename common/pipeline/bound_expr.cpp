#include "common/pipeline/bound_expr.h"

#include <Halide.h>

#include <cmath>
#include <cstring>

namespace protuner {

namespace HI = Halide::Internal;

// Walks an Expr in postfix order, emitting one instruction per node; any node outside the
// modelled subset marks the whole expression unsupported.
class BoundExprCompiler : public HI::IRVisitor {
 public:
  BoundExprCompiler(const std::map<std::string, int> &slots, BoundExpr &out)
      : slots_(slots), out_(out) {}
  bool ok = true;

 private:
  using IRVisitor::visit;

  void emit(BoundExpr::Op op, int64_t value = 0) { out_.code_.push_back({op, value}); }

  template <typename T>
  void binary(const T *node, BoundExpr::Op op) {
    node->a.accept(this);
    node->b.accept(this);
    emit(op);
  }
  // The integer op, or its double twin when the operands are floats.
  template <typename T>
  void arithmetic(const T *node, BoundExpr::Op int_op, BoundExpr::Op float_op) {
    binary(node, node->a.type().is_float() ? float_op : int_op);
  }

  void visit(const HI::IntImm *op) override { emit(BoundExpr::Op::kConst, op->value); }
  void visit(const HI::UIntImm *op) override {
    emit(BoundExpr::Op::kConst, static_cast<int64_t>(op->value));
  }
  void visit(const HI::FloatImm *op) override { emit(BoundExpr::Op::kConst, to_bits(op->value)); }
  void visit(const HI::StringImm *) override { ok = false; }
  void visit(const HI::Variable *op) override {
    auto it = slots_.find(op->name);
    if (it == slots_.end()) {
      ok = false;
      return;
    }
    emit(BoundExpr::Op::kSlot, it->second);
  }
  void visit(const HI::Cast *op) override {
    // Bounds are integers in range of their type; a cast between integer types is the
    // identity on them, as is one between float types (both are doubles here).
    const Halide::Type from = op->value.type(), to = op->type;
    if (!(from.is_int_or_uint() || from.is_float()) || !(to.is_int_or_uint() || to.is_float())) {
      ok = false;
      return;
    }
    op->value.accept(this);
    if (from.is_float() && to.is_int_or_uint()) emit(BoundExpr::Op::kTruncate);
    if (from.is_int_or_uint() && to.is_float()) emit(BoundExpr::Op::kToFloat);
  }
  void visit(const HI::Add *op) override { arithmetic(op, BoundExpr::Op::kAdd, BoundExpr::Op::kFAdd); }
  void visit(const HI::Sub *op) override { arithmetic(op, BoundExpr::Op::kSub, BoundExpr::Op::kFSub); }
  void visit(const HI::Mul *op) override { arithmetic(op, BoundExpr::Op::kMul, BoundExpr::Op::kFMul); }
  void visit(const HI::Div *op) override { arithmetic(op, BoundExpr::Op::kDiv, BoundExpr::Op::kFDiv); }
  void visit(const HI::Mod *op) override {
    if (op->type.is_float()) {
      ok = false;
      return;
    }
    binary(op, BoundExpr::Op::kMod);
  }
  void visit(const HI::Min *op) override { arithmetic(op, BoundExpr::Op::kMin, BoundExpr::Op::kFMin); }
  void visit(const HI::Max *op) override { arithmetic(op, BoundExpr::Op::kMax, BoundExpr::Op::kFMax); }
  void visit(const HI::LT *op) override { arithmetic(op, BoundExpr::Op::kLt, BoundExpr::Op::kFLt); }
  void visit(const HI::LE *op) override { arithmetic(op, BoundExpr::Op::kLe, BoundExpr::Op::kFLe); }
  void visit(const HI::EQ *op) override { arithmetic(op, BoundExpr::Op::kEq, BoundExpr::Op::kFEq); }
  void visit(const HI::NE *op) override { arithmetic(op, BoundExpr::Op::kNe, BoundExpr::Op::kFNe); }
  void visit(const HI::And *op) override { binary(op, BoundExpr::Op::kAnd); }
  void visit(const HI::Or *op) override { binary(op, BoundExpr::Op::kOr); }
  void visit(const HI::GT *op) override {
    op->b.accept(this);
    op->a.accept(this);
    emit(op->a.type().is_float() ? BoundExpr::Op::kFLt : BoundExpr::Op::kLt);
  }
  void visit(const HI::GE *op) override {
    op->b.accept(this);
    op->a.accept(this);
    emit(op->a.type().is_float() ? BoundExpr::Op::kFLe : BoundExpr::Op::kLe);
  }
  void visit(const HI::Not *op) override {
    op->a.accept(this);
    emit(BoundExpr::Op::kNot);
  }
  void visit(const HI::Select *op) override {
    op->condition.accept(this);
    op->true_value.accept(this);
    op->false_value.accept(this);
    emit(BoundExpr::Op::kSelect);
  }
  // floor, ceil and round of a float (what float index arithmetic uses); no other call.
  void visit(const HI::Call *op) override {
    static const std::map<std::string, BoundExpr::Op> kRounding = {
        {"floor_f32", BoundExpr::Op::kFloor}, {"floor_f64", BoundExpr::Op::kFloor},
        {"ceil_f32", BoundExpr::Op::kCeil},   {"ceil_f64", BoundExpr::Op::kCeil},
        {"round_f32", BoundExpr::Op::kRound}, {"round_f64", BoundExpr::Op::kRound}};
    const auto it = kRounding.find(op->name);
    if (it == kRounding.end() || op->args.size() != 1 || !op->is_pure()) {
      ok = false;
      return;
    }
    op->args[0].accept(this);
    emit(it->second);
  }
  void visit(const HI::Let *) override { ok = false; }  // bounds are simplified first
  void visit(const HI::Load *) override { ok = false; }
  void visit(const HI::Ramp *) override { ok = false; }
  void visit(const HI::Broadcast *) override { ok = false; }
  void visit(const HI::Shuffle *) override { ok = false; }
  void visit(const HI::VectorReduce *) override { ok = false; }

  static int64_t to_bits(double v) {
    int64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return bits;
  }

  const std::map<std::string, int> &slots_;
  BoundExpr &out_;
};

std::optional<BoundExpr> BoundExpr::compile(const Halide::Expr &e,
                                            const std::map<std::string, int> &slots) {
  if (!e.defined() || !e.type().is_int_or_uint()) return std::nullopt;
  BoundExpr out;
  BoundExprCompiler compiler(slots, out);
  e.accept(&compiler);
  if (!compiler.ok || out.max_stack_depth() > kMaxStack) return std::nullopt;
  return out;
}

namespace {

bool is_unary(BoundExpr::Op op) {
  using Op = BoundExpr::Op;
  return op == Op::kNot || op == Op::kToFloat || op == Op::kTruncate || op == Op::kFloor ||
         op == Op::kCeil || op == Op::kRound;
}

}  // namespace

size_t BoundExpr::max_stack_depth() const {
  size_t depth = 0, deepest = 0;
  for (const Instr &i : code_) {
    if (i.op == Op::kConst || i.op == Op::kSlot)
      ++depth;
    else if (i.op == Op::kSelect)
      depth -= 2;
    else if (!is_unary(i.op))
      depth -= 1;
    deepest = std::max(deepest, depth);
  }
  return deepest;
}

namespace {

double as_double(int64_t bits) {
  double v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

int64_t as_bits(double v) {
  int64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

// A double that does not fit an int64 (or NaN) has no meaningful index: 0, as an
// unknown bound would be clamped anyway.
int64_t truncate(double v) {
  if (!(std::abs(v) < 9.2e18)) return 0;
  return static_cast<int64_t>(v);
}

int64_t floor_div(int64_t a, int64_t b) {
  if (b == 0) return 0;  // Halide defines x / 0 == 0
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t floor_mod(int64_t a, int64_t b) {
  if (b == 0) return 0;  // Halide defines x % 0 == 0
  int64_t r = a % b;
  if (r < 0) r += (b < 0 ? -b : b);
  return r;
}

}  // namespace

int64_t BoundExpr::eval(const int64_t *slot_values) const {
  // compile() refuses programs deeper than this, so a fixed stack avoids allocation.
  int64_t stack[kMaxStack];
  int sp = 0;
  for (const Instr &i : code_) {
    switch (i.op) {
      case Op::kConst:
        stack[sp++] = i.value;
        break;
      case Op::kSlot:
        stack[sp++] = slot_values[i.value];
        break;
      case Op::kNot:
        stack[sp - 1] = !stack[sp - 1];
        break;
      case Op::kToFloat:
        stack[sp - 1] = as_bits(static_cast<double>(stack[sp - 1]));
        break;
      case Op::kTruncate:
        stack[sp - 1] = truncate(as_double(stack[sp - 1]));
        break;
      case Op::kFloor:
        stack[sp - 1] = as_bits(std::floor(as_double(stack[sp - 1])));
        break;
      case Op::kCeil:
        stack[sp - 1] = as_bits(std::ceil(as_double(stack[sp - 1])));
        break;
      case Op::kRound:
        stack[sp - 1] = as_bits(std::nearbyint(as_double(stack[sp - 1])));
        break;
      case Op::kSelect: {
        const int64_t f = stack[--sp], t = stack[--sp], c = stack[--sp];
        stack[sp++] = c ? t : f;
        break;
      }
      default: {
        const int64_t b = stack[--sp], a = stack[--sp];
        int64_t r = 0;
        switch (i.op) {
          case Op::kAdd:
            r = a + b;
            break;
          case Op::kSub:
            r = a - b;
            break;
          case Op::kMul:
            r = a * b;
            break;
          case Op::kDiv:
            r = floor_div(a, b);
            break;
          case Op::kMod:
            r = floor_mod(a, b);
            break;
          case Op::kMin:
            r = std::min(a, b);
            break;
          case Op::kMax:
            r = std::max(a, b);
            break;
          case Op::kLt:
            r = a < b;
            break;
          case Op::kLe:
            r = a <= b;
            break;
          case Op::kEq:
            r = a == b;
            break;
          case Op::kNe:
            r = a != b;
            break;
          case Op::kAnd:
            r = a && b;
            break;
          case Op::kOr:
            r = a || b;
            break;
          case Op::kFAdd:
            r = as_bits(as_double(a) + as_double(b));
            break;
          case Op::kFSub:
            r = as_bits(as_double(a) - as_double(b));
            break;
          case Op::kFMul:
            r = as_bits(as_double(a) * as_double(b));
            break;
          case Op::kFDiv:
            r = as_bits(as_double(a) / as_double(b));
            break;
          case Op::kFMin:
            r = as_bits(std::min(as_double(a), as_double(b)));
            break;
          case Op::kFMax:
            r = as_bits(std::max(as_double(a), as_double(b)));
            break;
          case Op::kFLt:
            r = as_double(a) < as_double(b);
            break;
          case Op::kFLe:
            r = as_double(a) <= as_double(b);
            break;
          case Op::kFEq:
            r = as_double(a) == as_double(b);
            break;
          case Op::kFNe:
            r = as_double(a) != as_double(b);
            break;
          default:
            break;
        }
        stack[sp++] = r;
      }
    }
  }
  return stack[0];
}

}  // namespace protuner
