// One-Func variants of a measured schedule (see incumbent_variants.h).
#include "searcher/search/incumbent_variants.h"

#include <algorithm>
#include <numeric>

#include "common/schedule/loop_nest.h"
#include "searcher/seeds/fallback_schedule.h"

namespace protuner {

std::optional<ScheduleState> incumbent_variant(const ScheduleState &start,
                                               const ScheduleState &incumbent,
                                               const FuncDecision &decision,
                                               const ScheduleState *fallback) {
  const int f = start.num_decided();
  if (!start.check_decision(decision).empty()) return std::nullopt;
  ScheduleState s = start;
  s.decide(decision);
  for (int g = f + 1; g < static_cast<int>(s.graph().funcs.size()); ++g) {
    if (s.check_decision(incumbent.decision(g)).empty()) {
      s.decide(incumbent.decision(g));
    } else if (fallback && s.check_decision(fallback->decision(g)).empty()) {
      s.decide(fallback->decision(g));
    } else {
      return std::nullopt;
    }
  }
  return s;
}

std::vector<FuncDecision> tiling_neighbours(const ScheduleState &start, const FuncDecision &d,
                                            const SearchSpace *space) {
  std::vector<FuncDecision> out;
  if (d.placement == Placement::kInline || !start.check_decision(d).empty()) return out;
  // Each variable's extent per realization, as the state reports it while tiling.
  std::vector<std::vector<int64_t>> extents(d.stages.size());
  ScheduleState s = start;
  for (const Step &step : steps_of(d)) {
    if (step.kind == Step::Kind::kTile) {
      const ScheduleState::NextStep next = s.next_step();
      extents[next.stage].push_back(s.pending_stage_extents()[next.var]);
    }
    s.take_step(step);
  }
  auto add = [&](FuncDecision n) {
    if (n == d || std::find(out.begin(), out.end(), n) != out.end()) return;
    if (start.check_decision(n).empty()) out.push_back(std::move(n));
  };
  for (size_t st = 0; st < d.stages.size(); ++st) {
    const StageTiling &t = d.stages[st];
    for (size_t v = 0; v < t.tile.size(); ++v) {
      if (t.tile[v] < extents[st][v]) {
        FuncDecision n = d;
        n.stages[st].tile[v] = std::min(t.tile[v] * 2, extents[st][v]);
        add(n);
      }
      if (t.tile[v] > t.inner[v]) {
        FuncDecision n = d;
        n.stages[st].tile[v] = std::max(t.inner[v], t.tile[v] / 2);
        add(n);
      }
    }
    for (int delta : {1, -1}) {
      FuncDecision n = d;
      n.stages[st].parallel_loops += delta;
      add(n);
    }
    const StageNode &stage = start.graph().funcs[start.num_decided()].stages[st];
    if (reduction_order_matters(stage, t, extents[st])) {
      FuncDecision n = d;
      n.stages[st].reduction_outside = !t.reduction_outside;
      n.stages[st].unroll_reduction = false;
      add(n);
    }
    // Unrolled or not (check_decision refuses what the stage cannot unroll).
    FuncDecision unrolled = d;
    unrolled.stages[st].unroll_reduction = !t.unroll_reduction;
    if (!unrolled.stages[st].unroll_reduction || !space ||
        space->pruned_because(start, unrolled).empty()) {
      add(unrolled);
    }
    // In lanes or not: each lane count the space offers, or back to the plain reduction.
    if (t.reduction_lanes > 0) {
      FuncDecision plain = d;
      plain.stages[st].reduction_lanes = 0;
      add(plain);
    } else if (space && stage.lane_rfactorable) {
      for (int multiple : kLaneReductionMultiples) {
        FuncDecision lanes = d;
        lanes.stages[st].reduction_lanes = static_cast<int>(
            multiple * native_lanes(start.graph().funcs[start.num_decided()], space->options()));
        if (space->pruned_because(start, lanes).empty()) add(lanes);
      }
    }
  }
  return out;
}

FuncDecision placement_of(const FuncDecision &d) {
  FuncDecision p = d;
  p.stages.clear();
  return p;
}

std::vector<size_t> measuring_order(const std::vector<FuncDecision> &decisions,
                                    const std::vector<double> &costs,
                                    const FuncDecision &incumbent_decision) {
  std::vector<size_t> by_cost(decisions.size());
  std::iota(by_cost.begin(), by_cost.end(), 0);
  std::stable_sort(by_cost.begin(), by_cost.end(),
                   [&](size_t a, size_t b) { return costs[a] < costs[b]; });
  // Groups of one placement each, cheapest first within; the incumbent's group leads, the
  // others follow in the order of their cheapest member.
  const FuncDecision own = placement_of(incumbent_decision);
  std::vector<FuncDecision> keys;
  std::vector<std::vector<size_t>> groups;
  for (size_t i : by_cost) {
    const FuncDecision key = placement_of(decisions[i]);
    auto it = std::find(keys.begin(), keys.end(), key);
    if (it == keys.end()) {
      keys.push_back(key);
      groups.emplace_back();
      it = keys.end() - 1;
    }
    groups[it - keys.begin()].push_back(i);
  }
  const auto own_group = std::find(keys.begin(), keys.end(), own);
  if (own_group != keys.end()) {
    const size_t k = own_group - keys.begin();
    std::rotate(groups.begin(), groups.begin() + k, groups.begin() + k + 1);
  }
  std::vector<size_t> order;
  for (size_t round = 0; order.size() < decisions.size(); ++round) {
    for (const auto &g : groups) {
      if (round < g.size()) order.push_back(g[round]);
    }
  }
  return order;
}

}  // namespace protuner
