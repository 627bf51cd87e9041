// The hand-made cost terms of the feed-forward model (002_* section 5.2 and appendix B,
// after Adams et al. 2019): per stage, quantities in seconds that a runtime is a weighted
// sum of. The network predicts the non-negative weights; the terms carry the schedule's
// arithmetic, so the network only learns how much each kind of work costs in context.
//
// Each term is the analytic model's (analytic_model.cpp) corresponding cost with its
// constant set to 1 cycle or a nominal time, so a weight of 1 means "as the analytic model
// roughly says" and an untrained model starts near it. Terms use a fixed reference
// machine (MachineModel's defaults), not the host's: a weights file must mean the same on
// every host; what differs between hosts is for the coefficients (and fine-tuning) to learn.
#pragma once

#include <array>

#include "searcher/cost/featurizer.h"

namespace protuner {

// clang-format off
#define PROTUNER_COST_TERMS(X)                                                              \
  X(vector_compute, "native vector instructions, 1 cycle each, over the parallel speed-up")  \
  X(scalar_compute, "scalar arithmetic, 1 cycle each, over the speed-up")                    \
  X(loads, "load instructions of the innermost blocks (block_loads), 1 cycle each, over the speed-up") \
  X(gathers, "gathered loads, 1 cycle per lane, over the speed-up")                          \
  X(loop_overhead, "innermost block executions, 1 cycle each, over the speed-up")            \
  X(productions, "productions, 1 cycle each (bounds, loop setup), over the speed-up")         \
  X(stores, "bytes written, at the L1 fill bandwidth, over the speed-up")                    \
  X(l2_traffic, "bytes from beyond L1, at the L2 bandwidth, over the speed-up")              \
  X(l3_traffic, "bytes from beyond L2, at the L3 bandwidth, over the speed-up")              \
  X(dram_traffic, "bytes from memory, at the shared DRAM bandwidth")                         \
  X(parallel_launches, "parallel loops started, 1 us each")                                  \
  X(parallel_tasks, "parallel tasks run, 0.1 us each")                                       \
  X(allocations, "heap allocations above the stack threshold, 0.1 us each")                  \
  X(page_faults, "pages of large allocations first touched, 0.1 us each")
// clang-format on

enum class CostTerm : int {
#define PROTUNER_X(name, meaning) name,
  PROTUNER_COST_TERMS(PROTUNER_X)
#undef PROTUNER_X
      kCount
};
constexpr int kNumCostTerms = static_cast<int>(CostTerm::kCount);
const char *cost_term_name(CostTerm t);

using CostTerms = std::array<float, kNumCostTerms>;

// The terms of one stage node, in seconds; all zero for an undecided or inlined Func
// (its work is counted in the stages it is folded into).
CostTerms cost_terms(const StageFeatures &stage);

}  // namespace protuner
