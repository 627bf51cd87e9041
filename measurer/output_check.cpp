// The output comparison policy of output_check.h: one pass over the reference for its
// magnitude, one pass over both buffers counting points outside the tolerance.
#include "measurer/output_check.h"

#include <cmath>
#include <cstdint>
#include <sstream>
#include <type_traits>

namespace protuner {
namespace {

std::string type_name(const Halide::Type &t) {
  std::ostringstream os;
  os << t;
  return os.str();
}

std::string coordinate(const int *pos, int dims) {
  std::string s = "(";
  for (int d = 0; d < dims; ++d) s += (d ? ", " : "") + std::to_string(pos[d]);
  return s + ")";
}

template <typename T>
std::string value_text(T v) {
  std::ostringstream os;
  os.precision(std::is_floating_point_v<T> ? 9 : 20);
  if constexpr (sizeof(T) == 1) {
    os << static_cast<int>(v);
  } else {
    os << v;
  }
  return os.str();
}

template <typename T>
bool float_close(T expected, T got, double relative, double absolute) {
  if (std::isnan(expected) || std::isnan(got)) return std::isnan(expected) && std::isnan(got);
  if (std::isinf(expected) || std::isinf(got)) return expected == got;
  const double diff = std::fabs(static_cast<double>(got) - static_cast<double>(expected));
  return diff <= relative * std::fabs(static_cast<double>(expected)) + absolute;
}

template <typename T>
bool integer_close(T expected, T got, double units) {
  // Differences of 64-bit values may not fit in a double exactly; compare in the widest
  // signed or unsigned type first.
  if (expected == got) return true;
  const T hi = expected > got ? expected : got;
  const T lo = expected > got ? got : expected;
  if constexpr (std::is_signed_v<T>) {
    const uint64_t diff = static_cast<uint64_t>(static_cast<int64_t>(hi) - static_cast<int64_t>(lo));
    return static_cast<double>(diff) <= units;
  } else {
    return static_cast<double>(static_cast<uint64_t>(hi - lo)) <= units;
  }
}

template <typename T>
std::optional<std::string> compare_typed(const std::string &name, const Halide::Buffer<> &e,
                                         const Halide::Buffer<> &g, const OutputTolerance &tol) {
  Halide::Buffer<T> expected(*e.raw_buffer());
  Halide::Buffer<T> got(*g.raw_buffer());
  double absolute = 0;
  if constexpr (std::is_floating_point_v<T>) {
    double max_abs = 0;
    expected.for_each_value([&](const T &v) {
      if (std::isfinite(v)) max_abs = std::max(max_abs, std::fabs(static_cast<double>(v)));
    });
    absolute = tol.float_absolute_of_max * max_abs;
  }
  int64_t bad = 0, points = 0;
  std::string first;
  const int dims = expected.dimensions();
  expected.for_each_element([&](const int *pos) {
    ++points;
    const T want = expected(pos), have = got(pos);
    bool ok;
    if constexpr (std::is_floating_point_v<T>) {
      ok = float_close(want, have, tol.float_relative, absolute);
    } else {
      ok = integer_close(want, have, tol.integer_units);
    }
    if (ok) return;
    if (bad++ == 0) {
      first = coordinate(pos, dims) + ": expected " + value_text(want) + ", got " + value_text(have);
    }
  });
  const auto allowed = static_cast<int64_t>(std::floor(tol.outlier_fraction * points));
  if (bad <= allowed) return std::nullopt;
  return "output '" + name + "': " + std::to_string(bad) + " of " + std::to_string(points) +
         " points differ beyond tolerance (" + std::to_string(allowed) + " allowed); first at " +
         first;
}

}  // namespace

std::optional<std::string> compare_output(const std::string &name,
                                          const Halide::Buffer<> &expected,
                                          const Halide::Buffer<> &got,
                                          const OutputTolerance &tolerance) {
  const std::string who = "output '" + name + "': ";
  if (!expected.defined() || !got.defined()) return who + "a buffer is missing";
  if (expected.type() != got.type()) {
    return who + "type " + type_name(got.type()) + ", expected " + type_name(expected.type());
  }
  if (expected.dimensions() != got.dimensions()) {
    return who + std::to_string(got.dimensions()) + " dimensions, expected " +
           std::to_string(expected.dimensions());
  }
  for (int d = 0; d < expected.dimensions(); ++d) {
    if (expected.dim(d).min() != got.dim(d).min() ||
        expected.dim(d).extent() != got.dim(d).extent()) {
      return who + "dimension " + std::to_string(d) + " is [" + std::to_string(got.dim(d).min()) +
             ", +" + std::to_string(got.dim(d).extent()) + "), expected [" +
             std::to_string(expected.dim(d).min()) + ", +" +
             std::to_string(expected.dim(d).extent()) + ")";
    }
  }
  const Halide::Type t = expected.type();
  if (t.is_float() && t.bits() == 32) return compare_typed<float>(name, expected, got, tolerance);
  if (t.is_float() && t.bits() == 64) return compare_typed<double>(name, expected, got, tolerance);
  if (t.is_bool() || (t.is_uint() && t.bits() == 8)) {
    return compare_typed<uint8_t>(name, expected, got, tolerance);
  }
  if (t.is_int() && t.bits() == 8) return compare_typed<int8_t>(name, expected, got, tolerance);
  if (t.is_uint() && t.bits() == 16) return compare_typed<uint16_t>(name, expected, got, tolerance);
  if (t.is_int() && t.bits() == 16) return compare_typed<int16_t>(name, expected, got, tolerance);
  if (t.is_uint() && t.bits() == 32) return compare_typed<uint32_t>(name, expected, got, tolerance);
  if (t.is_int() && t.bits() == 32) return compare_typed<int32_t>(name, expected, got, tolerance);
  if (t.is_uint() && t.bits() == 64) return compare_typed<uint64_t>(name, expected, got, tolerance);
  if (t.is_int() && t.bits() == 64) return compare_typed<int64_t>(name, expected, got, tolerance);
  return who + "cannot compare values of type " + type_name(t);
}

}  // namespace protuner
