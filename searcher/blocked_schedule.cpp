#include "searcher/blocked_schedule.h"

#include <algorithm>
#include <optional>

#include "searcher/fallback_schedule.h"

namespace protuner {
namespace {

int64_t round_up(int64_t a, int64_t b) { return (a + b - 1) / b * b; }

// The update `stage` of f register-blocked with `block`, or nothing when it has no
// reduction variables, fewer than two pure variables, or is shorter than a block.
std::optional<StageTiling> blocked_tiling(const FuncNode &f, const StageNode &stage,
                                          const RegisterBlock &block,
                                          const SearchSpaceOptions &options) {
  if (stage.index == 0 || stage.num_pure < 2 ||
      static_cast<int>(stage.loop_vars.size()) == stage.num_pure) {
    return std::nullopt;
  }
  const Region loops = stage.loop_region(f.root_region);
  const int64_t bx = native_lanes(f, options) * block.vectors, by = block.rows;
  const int64_t ex = loops[0].extent(), ey = loops[1].extent();
  if (ex < bx || ey < by) return std::nullopt;
  StageTiling t;
  for (int v = 0; v < stage.num_pure; ++v) {
    t.tile.push_back(std::max<int64_t>(1, loops[v].extent()));
    t.inner.push_back(1);
  }
  t.inner[0] = bx;
  t.inner[1] = by;
  t.tile[0] = std::min(round_up(ex, bx), bx * kTileBlocksInner);
  t.tile[1] = std::min(round_up(ey, by), by * kTileBlocksRows);
  // Every outer loop (the cache tiles) fused into one parallel loop.
  t.parallel_loops = (t.tile[0] < ex ? 1 : 0) + (t.tile[1] < ey ? 1 : 0);
  return t;
}

}  // namespace

std::vector<ScheduleState> blocked_schedules(std::shared_ptr<const PipelineGraph> graph,
                                             const SearchSpaceOptions &options) {
  const ScheduleState fallback = fallback_schedule(graph, options);
  std::vector<ScheduleState> out;
  for (const RegisterBlock &block : kRegisterBlocks) {
    ScheduleState state(graph);
    bool blocked = false;
    for (int f = 0; f < static_cast<int>(graph->funcs.size()); ++f) {
      const FuncNode &node = graph->funcs[f];
      FuncDecision d = fallback.decision(f);
      FuncDecision candidate = d;
      for (size_t s = 0; s < node.stages.size(); ++s) {
        if (auto t = blocked_tiling(node, node.stages[s], block, options)) candidate.stages[s] = *t;
      }
      if (!(candidate == d) && state.check_decision(candidate).empty()) {
        d = std::move(candidate);
        blocked = true;
      }
      state.decide(std::move(d));
    }
    if (blocked) out.push_back(std::move(state));
  }
  return out;
}

}  // namespace protuner
