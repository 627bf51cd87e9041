// One Monte Carlo search tree of ProTuner (003_* sections 2.4 and 4): nodes are schedule
// states, edges are the MDP's steps (schedule.h). An iteration selects a node by the tree
// policy (ucb.h), expands it with one random untried child, simulates from that child to a
// complete schedule (random, or greedy by the cost model for the "greedy tree" of 4.1),
// scores the complete schedule with the cost model and backs the cost up to the root.
// Each node keeps its visits, average cost, best cost and the best complete schedule seen
// below it; the root decision picks the child with the best cost.
//
// Thread safety: none; one thread drives a tree at a time (the ensemble, mcts.h, runs
// trees on several threads, each tree on one).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "common/schedule/schedule_state.h"
#include "searcher/cost/cost_model.h"
#include "searcher/search/ucb.h"

namespace protuner {

class SearchSpace;

struct MctsTreeOptions {
  UcbFormula formula = UcbFormula::kInverseAverage;
  double cp = 1.0;
  // Greedy tree: simulations pick, for each Func, the cheapest of this many sampled
  // completions of its decision. Steps inside one Func's decision cannot be ranked by the
  // cost model (it predicts decided Funcs only), so greedy works a whole decision at a time.
  bool greedy_simulation = false;
  int greedy_samples = 8;
  // Bounded memory: past this many nodes the tree stops expanding and only simulates from
  // its leaves. A node is a state (a few pointers) plus statistics, ~200 bytes.
  int64_t max_nodes = 200000;
};

class MctsTree {
 public:
  // The tree scores complete schedules with `model`, which the caller owns and which must
  // outlive the tree (trees on one thread may share a model: it is never used concurrently).
  MctsTree(ScheduleState root, const SearchSpace &space, CostModel &model, MctsTreeOptions options,
           uint64_t seed);
  ~MctsTree();
  MctsTree(MctsTree &&) noexcept;
  MctsTree &operator=(MctsTree &&) noexcept;

  // One iteration: select, expand, simulate, back up. Returns false when there is nothing
  // left to do: every complete schedule below the root is in the tree already, or every
  // path is a dead end.
  bool iterate();

  // The root decision: the root's child with the lowest best cost (ties: the lower
  // average cost, then the first expanded), with that best and the complete schedule that
  // has it. nullopt before any child has been simulated.
  struct Decision {
    Step step;
    ScheduleState next_root;
    double best_cost = 0;
    double average_cost = 0;
    std::shared_ptr<const ScheduleState> best_complete;
  };
  std::optional<Decision> decide() const;
  // Every root child simulated at least once, in expansion order, with its best cost and
  // complete schedule: what the root decision weighs.
  std::vector<Decision> alternatives() const;

  // Puts a complete schedule found elsewhere (a seed) into the tree as if a simulation had
  // reached it: its path from the root is expanded as far as the space offers its steps,
  // and `cost` is backed up from the deepest node on it, so root decisions follow it until
  // the tree finds something cheaper. Throws std::invalid_argument unless `complete` is
  // complete and the root is the empty schedule.
  void add_known(std::shared_ptr<const ScheduleState> complete, double cost);

  // Moves the root to the child reached by `step`, keeping its subtree (and statistics)
  // when the tree has it, else starting fresh from `next_root` (the same state).
  void advance(const Step &step, const ScheduleState &next_root);

  const ScheduleState &root_state() const;
  // The best complete schedule seen below the root, and its cost (nullopt before any).
  std::shared_ptr<const ScheduleState> best_complete() const;
  double best_cost() const;
  // The root's visits and cost sums (every simulation backed up through it).
  const ChildStats &root_stats() const;

  struct Stats {
    int64_t iterations = 0;
    int64_t evaluations = 0;  // states scored by the cost model
    int64_t rollouts = 0;     // simulations that reached a complete schedule
    int64_t dead_ends = 0;    // simulations that reached a state without children
    int64_t nodes = 0;        // nodes in the tree now
  };
  const Stats &stats() const { return stats_; }

  struct Node;  // defined in mcts_tree.cpp

 private:
  Node *select_and_expand();
  // Expands `step` (already taken out of node->untried) as a new child of `node`.
  Node *add_child(Node *node, const Step &step);
  std::optional<ScheduleState> simulate(const ScheduleState &from);
  bool random_simulation(ScheduleState &state);
  bool greedy_simulation(ScheduleState &state);
  double score(const ScheduleState &complete);
  void back_up(Node *leaf, double cost, const std::shared_ptr<const ScheduleState> &complete);
  void mark_dead(Node *node);

  const SearchSpace *space_;
  CostModel *model_;
  MctsTreeOptions options_;
  std::mt19937_64 rng_;
  std::unique_ptr<Node> root_;
  Stats stats_;
};

// Steps taken to reach `state` from the empty schedule (a step per placement, per tiled
// variable and per stage's parallel choice): the depth of the state in the MDP.
int steps_taken(const ScheduleState &state);

}  // namespace protuner
