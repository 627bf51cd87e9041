// One MCTS tree (see mcts_tree.h).
#include "searcher/search/mcts_tree.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "searcher/space/search_space.h"

namespace protuner {

struct MctsTree::Node {
  ScheduleState state;
  Node *parent = nullptr;
  Step step;  // from the parent
  std::vector<std::unique_ptr<Node>> children;
  // Steps not expanded yet, listed on the first expansion (steps only: no child states).
  std::vector<Step> untried;
  bool listed = false;
  // No complete schedule left to find below: a dead end, or every path explored.
  bool exhausted = false;
  ChildStats stats;
  double best_cost = std::numeric_limits<double>::infinity();
  std::shared_ptr<const ScheduleState> best_complete;
  std::optional<double> own_cost;  // a complete node's cost, scored once

  explicit Node(ScheduleState s) : state(std::move(s)) {}
};

namespace {

int64_t count_nodes(const std::vector<std::unique_ptr<MctsTree::Node>> &children);

}  // namespace

MctsTree::MctsTree(ScheduleState root, const SearchSpace &space, CostModel &model,
                   MctsTreeOptions options, uint64_t seed)
    : space_(&space),
      model_(&model),
      options_(options),
      rng_(seed),
      root_(std::make_unique<Node>(std::move(root))) {
  stats_.nodes = 1;
}

MctsTree::~MctsTree() = default;
MctsTree::MctsTree(MctsTree &&) noexcept = default;
MctsTree &MctsTree::operator=(MctsTree &&) noexcept = default;

const ScheduleState &MctsTree::root_state() const { return root_->state; }
std::shared_ptr<const ScheduleState> MctsTree::best_complete() const {
  return root_->best_complete;
}
double MctsTree::best_cost() const { return root_->best_cost; }
const ChildStats &MctsTree::root_stats() const { return root_->stats; }

bool MctsTree::iterate() {
  if (root_->exhausted) return false;
  ++stats_.iterations;
  Node *leaf = select_and_expand();
  if (!leaf) return !root_->exhausted;  // a dead end was found and pruned
  if (leaf->state.complete()) {
    if (!leaf->own_cost) leaf->own_cost = score(leaf->state);
    auto complete = leaf->best_complete ? leaf->best_complete
                                        : std::make_shared<const ScheduleState>(leaf->state);
    back_up(leaf, *leaf->own_cost, complete);
    // A complete node has nothing more to find: steer selection elsewhere.
    leaf->exhausted = true;
    for (Node *p = leaf->parent; p; p = p->parent) {
      const bool all_done = p->untried.empty() && p->listed &&
                            std::all_of(p->children.begin(), p->children.end(),
                                        [](const auto &c) { return c->exhausted; });
      if (!all_done) break;
      p->exhausted = true;
    }
    return true;
  }
  std::optional<ScheduleState> complete = simulate(leaf->state);
  if (!complete) return true;  // counted as a dead end; the next iteration tries again
  const double cost = score(*complete);
  back_up(leaf, cost, std::make_shared<const ScheduleState>(std::move(*complete)));
  return true;
}

void MctsTree::add_known(std::shared_ptr<const ScheduleState> complete, double cost) {
  if (!complete || !complete->complete()) {
    throw std::invalid_argument("MCTS: a known schedule must be complete");
  }
  if (root_->state.num_decided() > 0 || root_->state.mid_decision()) {
    throw std::invalid_argument("MCTS: known schedules go into a tree at the empty schedule");
  }
  Node *node = root_.get();
  for (int f = 0; f < complete->num_decided() && !node->state.complete(); ++f) {
    for (const Step &step : steps_of(complete->decision(f))) {
      if (!node->listed) {
        node->untried = space_->children(node->state);
        node->listed = true;
      }
      Node *next = nullptr;
      for (const auto &c : node->children) {
        if (c->step == step) next = c.get();
      }
      if (!next) {
        const auto it = std::find(node->untried.begin(), node->untried.end(), step);
        // A step the space does not offer (or a full tree): the path ends here.
        if (it == node->untried.end() || stats_.nodes >= options_.max_nodes) break;
        node->untried.erase(it);
        next = add_child(node, step);
      }
      node = next;
    }
    if (node->state.num_decided() <= f) break;  // the path left the space inside Func f
  }
  if (node->state.complete() && !node->own_cost) node->own_cost = cost;
  back_up(node, cost, complete);
}

// Descends by the tree policy to a node with untried steps and expands one of them,
// chosen uniformly. Returns the new child, a complete node, or a node to simulate from
// when the tree is full; nullptr when the descent hit a dead end (now marked).
MctsTree::Node *MctsTree::select_and_expand() {
  Node *node = root_.get();
  while (!node->state.complete()) {
    if (!node->listed) {
      node->untried = space_->children(node->state);
      node->listed = true;
    }
    if (node->untried.empty() && node->children.empty()) {
      mark_dead(node);
      return nullptr;
    }
    if (!node->untried.empty() && stats_.nodes < options_.max_nodes) {
      std::uniform_int_distribution<size_t> pick(0, node->untried.size() - 1);
      const size_t i = pick(rng_);
      std::swap(node->untried[i], node->untried.back());
      const Step step = node->untried.back();
      node->untried.pop_back();
      return add_child(node, step);
    }
    Node *best = nullptr;
    double best_score = -std::numeric_limits<double>::infinity();
    for (const auto &c : node->children) {
      if (c->exhausted) continue;
      const double s =
          ucb_score(options_.formula, options_.cp, c->stats, node->stats.visits, root_->best_cost);
      if (!best || s > best_score) {
        best = c.get();
        best_score = s;
      }
    }
    if (!best) return node;  // every child explored, untried left but the tree is full
    node = best;
  }
  return node;
}

MctsTree::Node *MctsTree::add_child(Node *node, const Step &step) {
  auto child = std::make_unique<Node>(node->state.with_step(step));
  child->parent = node;
  child->step = step;
  node->children.push_back(std::move(child));
  ++stats_.nodes;
  return node->children.back().get();
}

// A node without children (every step pruned) can never complete; neither can a parent
// all of whose steps are such nodes.
void MctsTree::mark_dead(Node *node) {
  ++stats_.dead_ends;
  while (node) {
    node->exhausted = true;
    Node *parent = node->parent;
    if (!parent || !parent->untried.empty()) break;
    const bool all_dead = std::all_of(parent->children.begin(), parent->children.end(),
                                      [](const auto &c) { return c->exhausted; });
    if (!all_dead) break;
    node = parent;
  }
}

std::optional<ScheduleState> MctsTree::simulate(const ScheduleState &from) {
  ScheduleState state = from;
  const bool ok = options_.greedy_simulation ? greedy_simulation(state) : random_simulation(state);
  if (!ok) {
    ++stats_.dead_ends;
    return std::nullopt;
  }
  ++stats_.rollouts;
  return state;
}

bool MctsTree::random_simulation(ScheduleState &state) {
  return space_->random_rollout(state, rng_);
}

// Decides one Func at a time: samples completions of the next Func's decision (random
// steps until it is decided) and keeps the one the cost model predicts cheapest, scoring
// all of them in one batch.
bool MctsTree::greedy_simulation(ScheduleState &state) {
  const int samples = std::max(1, options_.greedy_samples);
  std::vector<ScheduleState> candidates;
  std::vector<const ScheduleState *> batch;
  while (!state.complete()) {
    candidates.clear();
    const int decided = state.num_decided();
    for (int i = 0; i < samples; ++i) {
      ScheduleState s = state;
      bool stuck = false;
      while (s.num_decided() == decided) {
        std::optional<Step> step = space_->random_child(s, rng_);
        if (!step) {
          stuck = true;
          break;
        }
        s.take_step(*step);
      }
      if (!stuck) candidates.push_back(std::move(s));
    }
    if (candidates.empty()) return false;
    batch.clear();
    for (const ScheduleState &c : candidates) batch.push_back(&c);
    const std::vector<double> costs = model_->predict(batch);
    stats_.evaluations += static_cast<int64_t>(batch.size());
    const size_t best = std::min_element(costs.begin(), costs.end()) - costs.begin();
    state = std::move(candidates[best]);
  }
  return true;
}

double MctsTree::score(const ScheduleState &complete) {
  ++stats_.evaluations;
  return model_->predict({&complete}).at(0);
}

void MctsTree::back_up(Node *leaf, double cost,
                       const std::shared_ptr<const ScheduleState> &complete) {
  for (Node *n = leaf; n; n = n->parent) {
    ++n->stats.visits;
    n->stats.sum_cost += cost;
    n->stats.sum_inv_cost += cost > 0 ? 1.0 / cost : 0.0;
    if (cost < n->best_cost) {
      n->best_cost = cost;
      n->best_complete = complete;
    }
  }
}

std::vector<MctsTree::Decision> MctsTree::alternatives() const {
  std::vector<Decision> out;
  for (const auto &c : root_->children) {
    if (c->stats.visits == 0 || !c->best_complete) continue;
    out.push_back(
        {c->step, c->state, c->best_cost, c->stats.sum_cost / c->stats.visits, c->best_complete});
  }
  return out;
}

std::optional<MctsTree::Decision> MctsTree::decide() const {
  std::vector<Decision> all = alternatives();
  // min_element keeps the first of equals: the first expanded.
  const auto best =
      std::min_element(all.begin(), all.end(), [](const Decision &a, const Decision &b) {
        if (a.best_cost != b.best_cost) return a.best_cost < b.best_cost;
        return a.average_cost < b.average_cost;
      });
  if (best == all.end()) return std::nullopt;
  return std::move(*best);
}

void MctsTree::advance(const Step &step, const ScheduleState &next_root) {
  for (auto &c : root_->children) {
    if (c->step == step) {
      std::unique_ptr<Node> kept = std::move(c);
      kept->parent = nullptr;
      root_ = std::move(kept);
      stats_.nodes = 1 + count_nodes(root_->children);
      return;
    }
  }
  root_ = std::make_unique<Node>(next_root);
  stats_.nodes = 1;
}

namespace {

int64_t count_nodes(const std::vector<std::unique_ptr<MctsTree::Node>> &children) {
  int64_t n = 0;
  std::vector<const std::vector<std::unique_ptr<MctsTree::Node>> *> stack{&children};
  while (!stack.empty()) {
    const auto *list = stack.back();
    stack.pop_back();
    n += static_cast<int64_t>(list->size());
    for (const auto &c : *list) stack.push_back(&c->children);
  }
  return n;
}

}  // namespace

int steps_taken(const ScheduleState &state) {
  int steps = 0;
  for (int f = 0; f < state.num_decided(); ++f) {
    steps += static_cast<int>(steps_of(state.decision(f)).size());
  }
  if (!state.mid_decision()) return steps;
  const FuncDecision &d = state.pending();
  steps += 1;  // the placement
  for (const StageTiling &t : d.stages) steps += static_cast<int>(t.tile.size()) + 1;
  // The last stage's parallel step is counted above but not taken while it is still the
  // stage the next step works on.
  if (!d.stages.empty() && state.next_step().stage == static_cast<int>(d.stages.size()) - 1) {
    --steps;
  }
  return steps;
}

}  // namespace protuner
