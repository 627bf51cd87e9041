#include "searcher/cost/analytic_model.h"

#include <algorithm>
#include <cmath>

namespace protuner {

AnalyticModel::AnalyticModel(std::shared_ptr<const PipelineGraph> graph, MachineModel machine,
                             AnalyticModelOptions options)
    : featurizer_(std::move(graph), machine), options_(options) {}

namespace {

double stage_cost(const StageFeatures &s, const MachineModel &m, const AnalyticModelOptions &o) {
  using F = ScheduledFeature;
  if (s[F::decided] == 0 || s[F::inlined] != 0) return 0;

  // Compute: arithmetic, loads and loop overhead, in core cycles.
  const double total = s[F::points_total];
  const double vw = s[F::vector_width];
  const double vector_instructions_per_point =
      vw > 1 ? std::ceil(vw / s[F::native_vector_width]) / vw : 1.0;
  const double plain_loads = s[F::loads_per_point] - s[F::gather_loads_per_point];
  // A stage left unvectorized still runs vector code when its innermost loop walks the
  // storage dimension without gathers: LLVM vectorizes such a loop itself.
  const bool auto_vectorized = vw <= 1 && s[F::gather_loads_per_point] == 0 &&
                               s[F::innermost_serial_walks_x] != 0 &&
                               s[F::innermost_serial_extent] >= s[F::native_vector_width];
  const double auto_lanes = s[F::native_vector_width] * o.auto_vector_lane_share;
  double cycles = s[F::vector_ops_total] * o.cycles_per_vector_op;
  if (auto_vectorized) {
    cycles += s[F::scalar_ops_total] / auto_lanes * o.cycles_per_vector_op;
    cycles += plain_loads * total / auto_lanes * o.cycles_per_load;
  } else {
    cycles += s[F::scalar_ops_total] * o.cycles_per_scalar_op;
    cycles += plain_loads * total * vector_instructions_per_point * o.cycles_per_load;
  }
  cycles += s[F::gather_loads_per_point] * total * o.cycles_per_gathered_lane;
  cycles += s[F::body_executions] * o.cycles_per_block;
  cycles += s[F::productions] * o.cycles_per_production;

  // Memory: what the reuse model says comes from beyond each cache level.
  const double l1_misses = s[F::traffic_beyond_l1] - s[F::traffic_beyond_l2];
  const double l2_misses = s[F::traffic_beyond_l2] - s[F::traffic_beyond_l3];
  const double cache_cycles = std::max(l1_misses, 0.0) / m.l2_bytes_per_cycle +
                              std::max(l2_misses, 0.0) / m.l3_bytes_per_cycle;

  // Parallelism: tasks run in rounds over the cores; the slowest round decides.
  const double tasks = std::max(1.0f, s[F::outer_parallelism]);
  const double speedup = tasks / std::ceil(tasks / m.cores);
  double seconds = std::max(cycles, cache_cycles) / m.clock_hz / speedup;
  const double dram_share = speedup > 1 ? 1.0 : o.single_core_dram_share;
  seconds += s[F::traffic_beyond_l3] / (m.dram_bytes_per_second * dram_share);

  // Overheads.
  seconds += s[F::parallel_launches] *
             (o.parallel_launch_seconds + s[F::parallel_tasks] * o.parallel_task_seconds);
  if (s[F::alloc_bytes] > o.stack_allocation_max_bytes) {
    seconds += s[F::realizations] * o.allocation_seconds;
    if (s[F::alloc_bytes] >= o.page_fault_min_bytes) {
      seconds += s[F::alloc_bytes_total] * o.page_fault_seconds_per_byte;
    }
  }
  return seconds;
}

}  // namespace

std::vector<double> analytic_stage_costs(const PipelineFeatures &features,
                                         const MachineModel &machine,
                                         const AnalyticModelOptions &options) {
  std::vector<double> out;
  out.reserve(features.stages.size());
  for (const StageFeatures &s : features.stages) out.push_back(stage_cost(s, machine, options));
  return out;
}

std::vector<double> AnalyticModel::stage_costs(const PipelineFeatures &features) const {
  return analytic_stage_costs(features, featurizer_.machine(), options_);
}

std::vector<double> AnalyticModel::predict(const std::vector<const ScheduleState *> &batch) {
  std::vector<double> out;
  out.reserve(batch.size());
  for (const ScheduleState *state : batch) {
    const std::vector<double> costs = stage_costs(featurizer_.featurize(*state, cache_));
    double total = 0;
    for (double c : costs) total += c;
    out.push_back(total);
  }
  return out;
}

}  // namespace protuner
