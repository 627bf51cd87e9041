#include "searcher/bound_expr.h"

#include <Halide.h>

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

  void visit(const HI::IntImm *op) override { emit(BoundExpr::Op::kConst, op->value); }
  void visit(const HI::UIntImm *op) override {
    emit(BoundExpr::Op::kConst, static_cast<int64_t>(op->value));
  }
  void visit(const HI::FloatImm *) override { ok = false; }
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
    // identity on them. A cast from float is not modelled.
    if (!op->type.is_int_or_uint() || !op->value.type().is_int_or_uint()) {
      ok = false;
      return;
    }
    op->value.accept(this);
  }
  void visit(const HI::Add *op) override { binary(op, BoundExpr::Op::kAdd); }
  void visit(const HI::Sub *op) override { binary(op, BoundExpr::Op::kSub); }
  void visit(const HI::Mul *op) override { binary(op, BoundExpr::Op::kMul); }
  void visit(const HI::Div *op) override { binary(op, BoundExpr::Op::kDiv); }
  void visit(const HI::Mod *op) override { binary(op, BoundExpr::Op::kMod); }
  void visit(const HI::Min *op) override { binary(op, BoundExpr::Op::kMin); }
  void visit(const HI::Max *op) override { binary(op, BoundExpr::Op::kMax); }
  void visit(const HI::LT *op) override { binary(op, BoundExpr::Op::kLt); }
  void visit(const HI::LE *op) override { binary(op, BoundExpr::Op::kLe); }
  void visit(const HI::EQ *op) override { binary(op, BoundExpr::Op::kEq); }
  void visit(const HI::NE *op) override { binary(op, BoundExpr::Op::kNe); }
  void visit(const HI::And *op) override { binary(op, BoundExpr::Op::kAnd); }
  void visit(const HI::Or *op) override { binary(op, BoundExpr::Op::kOr); }
  void visit(const HI::GT *op) override {
    op->b.accept(this);
    op->a.accept(this);
    emit(BoundExpr::Op::kLt);
  }
  void visit(const HI::GE *op) override {
    op->b.accept(this);
    op->a.accept(this);
    emit(BoundExpr::Op::kLe);
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
  void visit(const HI::Call *) override { ok = false; }
  void visit(const HI::Let *) override { ok = false; }  // bounds are simplified first
  void visit(const HI::Load *) override { ok = false; }
  void visit(const HI::Ramp *) override { ok = false; }
  void visit(const HI::Broadcast *) override { ok = false; }
  void visit(const HI::Shuffle *) override { ok = false; }
  void visit(const HI::VectorReduce *) override { ok = false; }

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

size_t BoundExpr::max_stack_depth() const {
  size_t depth = 0, deepest = 0;
  for (const Instr &i : code_) {
    if (i.op == Op::kConst || i.op == Op::kSlot)
      ++depth;
    else if (i.op == Op::kSelect)
      depth -= 2;
    else if (i.op != Op::kNot)
      depth -= 1;
    deepest = std::max(deepest, depth);
  }
  return deepest;
}

namespace {

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
