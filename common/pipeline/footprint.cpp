#include "common/pipeline/footprint.h"

namespace protuner {

bool Footprint::exact() const {
  for (size_t d = 0; d < min_.size(); ++d) {
    if (!min_[d] || !max_[d]) return false;
  }
  return true;
}

Region Footprint::eval(const Region &loops, const Region &whole) const {
  // Slots 2i and 2i+1 hold the min and max of loop variable i.
  int64_t slots[64];
  const size_t n = std::min(loops.size(), sizeof(slots) / sizeof(slots[0]) / 2);
  for (size_t i = 0; i < n; ++i) {
    slots[2 * i] = loops[i].min;
    slots[2 * i + 1] = loops[i].max;
  }
  Region r(min_.size());
  for (size_t d = 0; d < min_.size(); ++d) {
    r[d].min = min_[d] ? min_[d]->eval(slots) : whole[d].min;
    r[d].max = max_[d] ? max_[d]->eval(slots) : whole[d].max;
  }
  return r;
}

}  // namespace protuner
