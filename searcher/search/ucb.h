// The tree policies of ProTuner's MCTS (003_* Table 1): how a node picks which child to
// descend into, trading the children's observed costs (exploitation) against how seldom
// they were tried (exploration). Kept apart from the tree so the formulas are tested
// against hand-computed values.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

namespace protuner {

enum class UcbFormula : uint8_t {
  // (1 / average cost) * (1 + Cp * sqrt(ln n / n_j)): ProTuner's default. Multiplying the
  // exploration term by the exploitation term explores cheap subtrees first, and the
  // ratio makes it independent of the cost's units.
  kInverseAverage,
  // UCB1 (003_* equation 1) on rewards normalized to [0, 1]:
  //   mean reward + 2 Cp sqrt(2 ln n / n_j),  reward = best cost in the tree / cost.
  // Cp = 1/sqrt(2) satisfies Hoeffding's inequality for rewards in [0, 1].
  kUcb1Normalized,
};

// Statistics of one child as the formulas need them.
struct ChildStats {
  int64_t visits = 0;        // n_j
  double sum_cost = 0;       // sum of the costs of its simulations
  double sum_inv_cost = 0;   // sum of 1 / cost
};

// The score of a child (higher is picked). `parent_visits` is n, `best_cost` the lowest
// cost seen in the tree (the reward normalizer of kUcb1Normalized). An unvisited child
// scores +infinity: every child is tried once before any is tried twice.
inline double ucb_score(UcbFormula formula, double cp, const ChildStats &child,
                        int64_t parent_visits, double best_cost) {
  if (child.visits <= 0) return INFINITY;
  const double n = static_cast<double>(std::max<int64_t>(parent_visits, 1));
  const double nj = static_cast<double>(child.visits);
  switch (formula) {
    case UcbFormula::kInverseAverage: {
      const double average = child.sum_cost / nj;
      return (1.0 / average) * (1.0 + cp * std::sqrt(std::log(n) / nj));
    }
    case UcbFormula::kUcb1Normalized: {
      const double mean_reward = best_cost * child.sum_inv_cost / nj;
      return mean_reward + 2.0 * cp * std::sqrt(2.0 * std::log(n) / nj);
    }
  }
  return 0;
}

inline const char *to_string(UcbFormula f) {
  return f == UcbFormula::kInverseAverage ? "inverse_average" : "ucb1_normalized";
}

}  // namespace protuner
