// A symbolic integer bound, compiled once from a Halide Expr and then evaluated many times.
// The search asks "which region of this producer does that loop need?" millions of times;
// Halide's bounds machinery derives the answer symbolically (slow, once per edge) and this
// evaluates it on concrete numbers (fast, every time).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace Halide {
struct Expr;
}

namespace protuner {

class BoundExpr {
 public:
  // Compiles `e`, in which every free variable must be a key of `slots` (it then reads
  // slot `slots[name]` at evaluation). Returns nullopt when `e` uses anything this evaluator
  // does not model (a call other than floor, ceil, round, an unknown variable, infinity):
  // the caller then treats the bound as unknown. Float arithmetic inside an integer bound
  // (an index computed as cast<int>(floor((x + 0.5f) / 8))) is evaluated in double
  // precision, which may differ from Halide's float32 by one at an exact rounding edge:
  // close enough for a cost model's footprints, which never size real allocations.
  static std::optional<BoundExpr> compile(const Halide::Expr &e,
                                          const std::map<std::string, int> &slots);

  // Evaluates with Halide's integer semantics (division and modulo round to -infinity).
  int64_t eval(const int64_t *slot_values) const;

  // Number of instructions; a constant compiles to one.
  size_t size() const { return code_.size(); }

  enum class Op : uint8_t {
    kConst,
    kSlot,
    kAdd,
    kSub,
    kMul,
    kDiv,
    kMod,
    kMin,
    kMax,
    kLt,
    kLe,
    kEq,
    kNe,
    kAnd,
    kOr,
    kNot,
    kSelect,
    // On doubles, held in the same stack as the bits of a double (std::bit_cast).
    kToFloat,   // int64 -> double
    kTruncate,  // double -> int64, toward zero like Halide's cast
    kFAdd,
    kFSub,
    kFMul,
    kFDiv,
    kFMin,
    kFMax,
    kFLt,  // double, double -> int64 0 or 1
    kFLe,
    kFEq,
    kFNe,
    kFloor,  // double -> double
    kCeil,
    kRound,  // to nearest, ties to even, like Halide's round
  };
  struct Instr {
    Op op;
    int64_t value;  // kConst: the constant (a double's bits for a float); kSlot: the slot
  };

 private:
  static constexpr size_t kMaxStack = 64;
  size_t max_stack_depth() const;
  std::vector<Instr> code_;  // postfix program
  friend class BoundExprCompiler;
};

}  // namespace protuner
