// The one interface every cost model sits behind: a batch of schedule states in, predicted
// runtimes out. The search enqueues every candidate and evaluates once, so a learned model
// runs one batched forward pass; tests substitute a fake model here.
#pragma once

#include <string>
#include <vector>

#include "common/schedule/schedule_state.h"

namespace protuner {

class CostModel {
 public:
  virtual ~CostModel() = default;

  // Predicted runtime of one run of the pipeline, in seconds, per state, in batch order.
  // Partial states are predicted over their decided Funcs only (undecided ones add
  // nothing), so predictions compare states with the same number of decisions. Every
  // state must be of the pipeline the model was made for (std::invalid_argument
  // otherwise).
  virtual std::vector<double> predict(const std::vector<const ScheduleState *> &batch) = 0;

  virtual std::string name() const = 0;
};

}  // namespace protuner
