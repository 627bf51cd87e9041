// Concrete integer intervals and boxes: the currency of bounds in the search.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace protuner {

// A closed integer interval [min, max]; empty when max < min.
struct Span {
  int64_t min = 0;
  int64_t max = -1;

  int64_t extent() const { return max < min ? 0 : max - min + 1; }
  bool empty() const { return max < min; }
  void include(const Span &o) {
    if (o.empty()) return;
    if (empty()) {
      *this = o;
      return;
    }
    min = std::min(min, o.min);
    max = std::max(max, o.max);
  }
  bool operator==(const Span &o) const { return min == o.min && max == o.max; }
};

// The number of b-sized pieces that cover a (a >= 0, b > 0).
inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The smallest multiple of b that is at least a (a >= 0, b > 0).
inline int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

// One Span per dimension.
using Region = std::vector<Span>;

inline int64_t region_points(const Region &r) {
  int64_t n = 1;
  for (const Span &s : r) n *= s.extent();
  return n;
}

}  // namespace protuner
