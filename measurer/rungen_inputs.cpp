#include "measurer/rungen_inputs.h"

namespace protuner {

bool rungen_copies_input(const std::vector<halide_dimension_t> &current,
                         const std::vector<halide_dimension_t> &queried) {
  if (current.size() != queried.size()) return false;
  for (size_t i = 0; i < current.size(); ++i) {
    const halide_dimension_t &c = current[i], &q = queried[i];
    const int64_t current_max = int64_t{c.min} + c.extent - 1;
    const int64_t queried_max = int64_t{q.min} + q.extent - 1;
    if (q.min < c.min || queried_max > current_max) return true;
    // A stride of 0 in the answer leaves the buffer's stride free.
    if (q.stride != 0 && q.stride != c.stride) return true;
  }
  return false;
}

}  // namespace protuner
