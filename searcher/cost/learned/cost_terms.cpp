#include "searcher/cost/learned/cost_terms.h"

#include <algorithm>
#include <cmath>

#include "searcher/cost/machine_model.h"

namespace protuner {
namespace {

// Nominal costs of the overhead terms (analytic_model.h's orders of magnitude).
constexpr double kLaunchSeconds = 1e-6;
constexpr double kTaskSeconds = 0.1e-6;
constexpr double kAllocationSeconds = 0.1e-6;
constexpr double kPageFaultSeconds = 0.1e-6;
constexpr double kPageBytes = 4096;
// Allocations up to this size are stack space in our loop nests (analytic_model.h).
constexpr double kStackAllocationMaxBytes = 16 * 1024;

}  // namespace

const char *cost_term_name(CostTerm t) {
  static const char *const names[] = {
#define PROTUNER_X(name, meaning) #name,
      PROTUNER_COST_TERMS(PROTUNER_X)
#undef PROTUNER_X
  };
  return names[static_cast<int>(t)];
}

CostTerms cost_terms(const StageFeatures &s) {
  using F = ScheduledFeature;
  CostTerms t{};
  if (s[F::decided] == 0 || s[F::inlined] != 0) return t;
  static const MachineModel m;  // the reference machine (see the header)
  const double cycle = 1.0 / (m.clock_hz * parallel_speedup(s, m.cores));  // seconds per cycle

  const double total = s[F::points_total];
  auto set = [&t](CostTerm term, double seconds) {
    t[static_cast<int>(term)] = static_cast<float>(std::max(seconds, 0.0));
  };
  set(CostTerm::vector_compute, s[F::vector_ops_total] * cycle);
  set(CostTerm::scalar_compute, s[F::scalar_ops_total] * cycle);
  set(CostTerm::loads, s[F::block_loads] * s[F::body_executions] * cycle);
  set(CostTerm::gathers, s[F::gather_loads_per_point] * total * cycle);
  set(CostTerm::loop_overhead, s[F::body_executions] * cycle);
  set(CostTerm::productions, s[F::productions] * cycle);
  set(CostTerm::stores,
      s[F::bytes_written_per_production] * s[F::productions] / m.l2_bytes_per_cycle * cycle);
  set(CostTerm::l2_traffic,
      (s[F::traffic_beyond_l1] - s[F::traffic_beyond_l2]) / m.l2_bytes_per_cycle * cycle);
  set(CostTerm::l3_traffic,
      (s[F::traffic_beyond_l2] - s[F::traffic_beyond_l3]) / m.l3_bytes_per_cycle * cycle);
  set(CostTerm::dram_traffic, s[F::traffic_beyond_l3] / m.dram_bytes_per_second);
  set(CostTerm::parallel_launches, s[F::parallel_launches] * kLaunchSeconds);
  set(CostTerm::parallel_tasks, s[F::parallel_launches] * s[F::parallel_tasks] * kTaskSeconds);
  if (s[F::alloc_bytes] > kStackAllocationMaxBytes) {
    set(CostTerm::allocations, s[F::realizations] * kAllocationSeconds);
    set(CostTerm::page_faults, s[F::alloc_bytes_total] / kPageBytes * kPageFaultSeconds);
  }
  return t;
}

}  // namespace protuner
