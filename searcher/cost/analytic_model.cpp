// The analytic model (analytic_model.h): per stage, seconds by term.
#include "searcher/cost/analytic_model.h"

#include <algorithm>
#include <cmath>

#include "searcher/cost/analytic_calibration.h"

namespace protuner {

AnalyticModel::AnalyticModel(std::shared_ptr<const PipelineGraph> graph, MachineModel machine,
                             AnalyticModelOptions options,
                             std::shared_ptr<const AnalyticCalibration> calibration)
    : featurizer_(std::move(graph), machine),
      options_(options),
      calibration_(std::move(calibration)) {}

const char *analytic_term_name(AnalyticTerm term) {
  switch (term) {
    case AnalyticTerm::kCompute:
      return "compute";
    case AnalyticTerm::kCacheTraffic:
      return "cache_traffic";
    case AnalyticTerm::kMemoryTraffic:
      return "memory_traffic";
    case AnalyticTerm::kParallelOverhead:
      return "parallel_overhead";
    case AnalyticTerm::kAllocation:
      return "allocation";
    case AnalyticTerm::kPageFaults:
      return "page_faults";
    case AnalyticTerm::kCount:
      break;
  }
  return "?";
}

AnalyticTerms unit_term_weights() {
  AnalyticTerms w;
  w.fill(1.0);
  return w;
}

std::vector<double> heap_bytes_freed_together(const PipelineFeatures &features,
                                              const AnalyticModelOptions &o) {
  using F = ScheduledFeature;
  const size_t n = features.stages.size();
  std::vector<double> out(n, 0.0);
  std::vector<size_t> repeated;  // heap allocations made more than once per run
  for (size_t i = 0; i < n; ++i) {
    const StageFeatures &s = features.stages[i];
    const bool on_heap = s[F::decided] != 0 && s[F::inlined] == 0 &&
                         s[F::alloc_bytes] > o.stack_allocation_max_bytes;
    if (!on_heap) continue;
    out[i] = s[F::alloc_bytes];
    // At root each buffer is freed after its last use, so it is freed alone.
    if (s[F::realizations] > 1) repeated.push_back(i);
  }
  if (repeated.size() < 2) return out;

  // Funcs stored at one loop are allocated the same number of times at the same depth, in
  // one connected part of the stage graph; the features do not name the loop, so two loops
  // of one depth and count there are taken as one.
  std::vector<size_t> part(n);
  for (size_t i = 0; i < n; ++i) part[i] = i;
  auto root = [&](size_t i) {
    while (part[i] != i) i = part[i] = part[part[i]];
    return i;
  };
  for (const auto &[p, c] : features.edges)
    part[root(static_cast<size_t>(p))] = root(static_cast<size_t>(c));
  const std::vector<double> alone = out;
  for (size_t i : repeated) {
    const StageFeatures &x = features.stages[i];
    for (size_t j : repeated) {
      const StageFeatures &y = features.stages[j];
      if (j != i && x[F::realizations] == y[F::realizations] &&
          x[F::store_depth] == y[F::store_depth] && root(i) == root(j))
        out[i] += alone[j];
    }
  }
  return out;
}

AnalyticTerms analytic_stage_terms(const StageFeatures &s, double freed_together,
                                   const MachineModel &m, const AnalyticModelOptions &o) {
  using F = ScheduledFeature;
  AnalyticTerms t{};
  auto add = [&](AnalyticTerm k, double seconds) { t[static_cast<int>(k)] += seconds; };
  if (s[F::decided] == 0 || s[F::inlined] != 0) return t;

  // Compute: arithmetic, loads and loop overhead, in core cycles.
  const double total = s[F::points_total];
  const double vw = s[F::vector_width];
  const double plain_loads = s[F::loads_per_point] - s[F::gather_loads_per_point];
  // A stage left unvectorized still runs vector code when its innermost loop walks the
  // storage dimension without gathers: LLVM vectorizes such a loop itself.
  const bool auto_vectorized = vw <= 1 && s[F::gather_loads_per_point] == 0 &&
                               s[F::innermost_serial_walks_x] != 0 &&
                               s[F::innermost_serial_extent] >= s[F::native_vector_width] &&
                               s[F::unrolled_extent] <= o.auto_vector_max_unrolled;
  const double auto_lanes = s[F::native_vector_width] * o.auto_vector_lane_share;
  double cycles = s[F::vector_ops_total] * o.cycles_per_vector_op;
  if (auto_vectorized) {
    cycles += s[F::scalar_ops_total] / auto_lanes * o.cycles_per_vector_op;
    cycles += (plain_loads * o.cycles_per_load + o.cycles_per_store) * total / auto_lanes;
  } else {
    // Loads and stores as the innermost block issues them: shared by its unrolled points,
    // and an accumulator kept in registers across the reduction loop around it.
    cycles += s[F::scalar_ops_total] * o.cycles_per_scalar_op;
    cycles += (s[F::block_loads] * o.cycles_per_load + s[F::block_stores] * o.cycles_per_store) *
              s[F::body_executions];
    // A block that waits for the one before runs no faster than the chain's round trip.
    if (s[F::block_waits_for_previous] != 0) {
      const double chain =
          s[F::accumulators_in_registers] != 0 ? o.register_chain_cycles : o.memory_chain_cycles;
      cycles = std::max(cycles, s[F::body_executions] * chain);
    }
  }
  // A gather costs per lane what a vector load costs whole; in unvectorized code it is
  // just a load.
  cycles += s[F::gather_loads_per_point] * total *
            (vw > 1 ? o.cycles_per_gathered_lane : o.cycles_per_load);
  cycles += s[F::body_executions] * o.cycles_per_block;
  cycles += s[F::productions] * o.cycles_per_production;

  // Memory: what the reuse model says comes from beyond each cache level.
  const double l1_misses = s[F::traffic_beyond_l1] - s[F::traffic_beyond_l2];
  const double l2_misses = s[F::traffic_beyond_l2] - s[F::traffic_beyond_l3];
  const double cache_cycles = std::max(l1_misses, 0.0) / m.l2_bytes_per_cycle +
                              std::max(l2_misses, 0.0) / m.l3_bytes_per_cycle;

  // Parallelism: tasks run in rounds over the cores; the slowest core decides
  // (core_utilization). A core is busy for whichever of its instructions and its cache
  // traffic takes longer.
  const double speedup = parallel_speedup(s, m.cores);
  add(cycles >= cache_cycles ? AnalyticTerm::kCompute : AnalyticTerm::kCacheTraffic,
      std::max(cycles, cache_cycles) / m.clock_hz / speedup);
  const double dram_share = speedup > 1 ? 1.0 : o.single_core_dram_share;
  add(AnalyticTerm::kMemoryTraffic,
      s[F::traffic_beyond_l3] / (m.dram_bytes_per_second * dram_share) +
          s[F::memory_streams] * o.memory_stream_seconds / speedup);

  // Overheads.
  add(AnalyticTerm::kParallelOverhead,
      s[F::parallel_launches] *
          (o.parallel_launch_seconds + s[F::parallel_tasks] * o.parallel_task_seconds));
  if (s[F::alloc_bytes] > o.stack_allocation_max_bytes) {
    add(AnalyticTerm::kAllocation, s[F::realizations] * o.allocation_seconds);
    if (freed_together >= o.page_fault_min_bytes) {
      add(AnalyticTerm::kPageFaults, s[F::alloc_bytes_total] * o.page_fault_seconds_per_byte);
    }
  }
  return t;
}

AnalyticTerms analytic_terms(const PipelineFeatures &features, const MachineModel &machine,
                             const AnalyticModelOptions &options) {
  AnalyticTerms sum{};
  const std::vector<double> freed_together = heap_bytes_freed_together(features, options);
  for (size_t i = 0; i < features.stages.size(); ++i) {
    const AnalyticTerms t =
        analytic_stage_terms(features.stages[i], freed_together[i], machine, options);
    for (int k = 0; k < kNumAnalyticTerms; ++k) sum[k] += t[k];
  }
  return sum;
}

double weighed_seconds(const AnalyticTerms &terms, const AnalyticTerms &weights) {
  double seconds = 0;
  for (int k = 0; k < kNumAnalyticTerms; ++k) seconds += weights[k] * terms[k];
  return seconds;
}

std::vector<double> analytic_stage_costs(const PipelineFeatures &features,
                                         const MachineModel &machine,
                                         const AnalyticModelOptions &options,
                                         const AnalyticTerms &weights) {
  std::vector<double> out;
  out.reserve(features.stages.size());
  const std::vector<double> freed_together = heap_bytes_freed_together(features, options);
  for (size_t i = 0; i < features.stages.size(); ++i) {
    out.push_back(weighed_seconds(
        analytic_stage_terms(features.stages[i], freed_together[i], machine, options), weights));
  }
  return out;
}

AnalyticTerms AnalyticModel::weights() const {
  return calibration_ ? calibration_->weights() : unit_term_weights();
}

std::vector<double> AnalyticModel::stage_costs(const PipelineFeatures &features) const {
  return analytic_stage_costs(features, featurizer_.machine(), options_, weights());
}

std::vector<double> AnalyticModel::predict(const std::vector<const ScheduleState *> &batch) {
  const AnalyticTerms w = weights();  // one set of weights for the whole batch
  std::vector<double> out;
  out.reserve(batch.size());
  for (const ScheduleState *state : batch) {
    const PipelineFeatures &features = featurizer_.featurize(*state, cache_);
    out.push_back(weighed_seconds(analytic_terms(features, featurizer_.machine(), options_), w));
  }
  return out;
}

}  // namespace protuner
