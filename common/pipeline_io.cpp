#include "common/pipeline_io.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "common/errors.h"
#include "common/stable_hash.h"
#include "common/unscheduled_check.h"

namespace protuner {
namespace {

using Halide::Internal::as_const_int;

// splitmix64: tiny, fast, and the same stream on every platform.
uint64_t next_random(uint64_t &state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t hash_name(const std::string &s) { return stable_hash(s); }

template <typename T>
void fill_typed(Halide::Buffer<> &buf, uint64_t &state) {
  Halide::Buffer<T> typed(*buf.raw_buffer());
  typed.for_each_value([&](T &v) {
    const uint64_t r = next_random(state);
    if constexpr (std::is_floating_point_v<T>) {
      v = static_cast<T>(static_cast<double>(r >> 11) * (1.0 / 9007199254740992.0));
    } else if constexpr (sizeof(T) >= 4) {
      v = static_cast<T>(r & 0xFF);  // wide integers index and count: keep them small
    } else {
      v = static_cast<T>(r);
    }
  });
}

void fill_random(Halide::Buffer<> &buf, uint64_t state) {
  const Halide::Type t = buf.type();
  if (t.is_float() && t.bits() == 32) return fill_typed<float>(buf, state);
  if (t.is_float() && t.bits() == 64) return fill_typed<double>(buf, state);
  if (t.is_bool() || (t.is_uint() && t.bits() == 8)) return fill_typed<uint8_t>(buf, state);
  if (t.is_int() && t.bits() == 8) return fill_typed<int8_t>(buf, state);
  if (t.is_uint() && t.bits() == 16) return fill_typed<uint16_t>(buf, state);
  if (t.is_int() && t.bits() == 16) return fill_typed<int16_t>(buf, state);
  if (t.is_uint() && t.bits() == 32) return fill_typed<uint32_t>(buf, state);
  if (t.is_int() && t.bits() == 32) return fill_typed<int32_t>(buf, state);
  if (t.is_uint() && t.bits() == 64) return fill_typed<uint64_t>(buf, state);
  if (t.is_int() && t.bits() == 64) return fill_typed<int64_t>(buf, state);
  std::ostringstream os;
  os << t;
  throw ConfigError("cannot generate random data of type " + os.str());
}

std::vector<Halide::Internal::Function> output_functions(Halide::Pipeline &pipeline) {
  std::vector<Halide::Internal::Function> fs;
  for (const Halide::Func &f : pipeline.outputs()) fs.push_back(f.function());
  return fs;
}

int const_or_throw(const Halide::Expr &e, const std::string &what) {
  const int64_t *v = e.defined() ? as_const_int(e) : nullptr;
  if (v == nullptr) {
    throw ConfigError(what + " has no constant estimate: give it set_estimates in the generator");
  }
  return static_cast<int>(*v);
}

// A buffer of `type` over `shape`, laid out in its storage order.
Halide::Buffer<> make_buffer(const Halide::Type &type, const EstimatedShape &shape) {
  Halide::Buffer<> buf = shape.storage_order.empty()
                             ? Halide::Buffer<>(type, shape.extents)
                             : Halide::Buffer<>(type, shape.extents, shape.storage_order);
  buf.set_min(shape.mins);
  return buf;
}

// A constant the generator constrained a buffer property to, or nullopt.
std::optional<int> constant_constraint(const Halide::Expr &e) {
  const int64_t *v = e.defined() ? as_const_int(e) : nullptr;
  if (v == nullptr) return std::nullopt;
  return static_cast<int>(*v);
}

// `shape` with the constant min and extent constraints of `buffer` (a buffer Parameter)
// applied, and the storage order its stride constraints ask for: dimensions constrained to
// stride 1 first, the others in dimension order. Throws ConfigError when another constant
// stride constraint does not hold in that layout.
EstimatedShape constrained(EstimatedShape shape, const Halide::Internal::Parameter &buffer,
                           const std::string &who) {
  const int dims = static_cast<int>(shape.extents.size());
  std::vector<int> unit_stride, other;
  for (int d = 0; d < dims; ++d) {
    if (auto min = constant_constraint(buffer.min_constraint(d))) shape.mins[d] = *min;
    if (auto extent = constant_constraint(buffer.extent_constraint(d))) shape.extents[d] = *extent;
    (constant_constraint(buffer.stride_constraint(d)) == 1 ? unit_stride : other).push_back(d);
  }
  if (unit_stride.empty() || unit_stride.front() == 0) return shape;  // dimension order fits
  shape.storage_order = unit_stride;
  shape.storage_order.insert(shape.storage_order.end(), other.begin(), other.end());
  int64_t stride = 1;
  std::vector<int64_t> strides(dims);
  for (int d : shape.storage_order) strides[d] = stride, stride *= shape.extents[d];
  for (int d = 0; d < dims; ++d) {
    const auto wanted = constant_constraint(buffer.stride_constraint(d));
    if (wanted && *wanted != strides[d]) {
      throw ConfigError(who + " dimension " + std::to_string(d) + " is constrained to stride " +
                        std::to_string(*wanted) + ", which no dense layout of its estimated " +
                        "region gives (it would be " + std::to_string(strides[d]) + ")");
    }
  }
  return shape;
}

Halide::Buffer<> make_input_buffer(const Halide::Internal::InferredArgument &a) {
  return make_buffer(a.arg.type, input_estimate(a));
}

void set_scalar_estimate(const Halide::Internal::InferredArgument &a) {
  const Halide::Expr e = scalar_estimate(a);
  const std::string who = "scalar input '" + a.arg.name + "'";
  Halide::Internal::Parameter p = a.param;
  const Halide::Type t = a.arg.type;
  if (t.is_float()) {
    const double *v = Halide::Internal::as_const_float(e);
    const int64_t *i = as_const_int(e);
    if (!v && !i) throw ConfigError(who + ": estimate is not a constant");
    const double x = v ? *v : static_cast<double>(*i);
    if (t.bits() == 32)
      p.set_scalar<float>(static_cast<float>(x));
    else
      p.set_scalar<double>(x);
    return;
  }
  const int64_t *i = as_const_int(e);
  const uint64_t *u = Halide::Internal::as_const_uint(e);
  if (!i && !u) throw ConfigError(who + ": estimate is not a constant");
  const int64_t x = i ? *i : static_cast<int64_t>(*u);
  halide_scalar_value_t value{};
  value.u.u64 = 0;
  switch (t.bits()) {
    case 1:
      value.u.b = x != 0;
      break;
    case 8:
      value.u.u8 = static_cast<uint8_t>(x);
      break;
    case 16:
      value.u.u16 = static_cast<uint16_t>(x);
      break;
    case 32:
      value.u.u32 = static_cast<uint32_t>(x);
      break;
    default:
      value.u.u64 = static_cast<uint64_t>(x);
      break;
  }
  p.set_scalar(t, value);
}

}  // namespace

std::vector<BoundInput> bind_random_inputs(Halide::Pipeline &pipeline, uint64_t seed) {
  const auto outputs = output_functions(pipeline);
  std::set<std::string> output_params;
  for (const auto &f : outputs) {
    for (const auto &p : f.output_buffers()) output_params.insert(p.name());
  }
  std::vector<BoundInput> bound;
  for (const auto &a : Halide::Internal::infer_arguments(Halide::Internal::Stmt(), outputs)) {
    if (a.buffer.defined() || output_params.count(a.arg.name)) continue;
    if (a.arg.is_buffer()) {
      Halide::Buffer<> buf = make_input_buffer(a);
      // Each input gets its own stream, so adding an input does not change the others.
      fill_random(buf, seed ^ hash_name(a.arg.name));
      Halide::Internal::Parameter p = a.param;
      p.set_buffer(buf);
      bound.push_back({a.arg.name, a.param, buf});
    } else {
      set_scalar_estimate(a);
      bound.push_back({a.arg.name, a.param, Halide::Buffer<>()});
    }
  }
  return bound;
}

EstimatedShape input_estimate(const Halide::Internal::InferredArgument &a) {
  const auto &region = a.arg.argument_estimates.buffer_estimates;
  const std::string who = "input '" + a.arg.name + "'";
  if (region.size() != a.arg.dimensions) {
    throw ConfigError(who + " has estimates for " + std::to_string(region.size()) + " of " +
                      std::to_string(a.arg.dimensions) +
                      " dimensions: give every dimension set_estimates in the generator");
  }
  EstimatedShape shape;
  for (size_t d = 0; d < region.size(); ++d) {
    const std::string dim = who + " dimension " + std::to_string(d);
    // A dimension the generator fixed by a constraint needs no estimate.
    if (!region[d].extent.defined() && constant_constraint(a.param.extent_constraint(d))) {
      shape.mins.push_back(0);
      shape.extents.push_back(0);
      continue;
    }
    shape.mins.push_back(region[d].min.defined() ? const_or_throw(region[d].min, dim) : 0);
    shape.extents.push_back(const_or_throw(region[d].extent, dim));
  }
  return constrained(shape, a.param, who);
}

EstimatedShape output_estimate(const Halide::Internal::Function &fn) {
  const auto &estimates = fn.schedule().estimates();
  const auto &bounds = fn.schedule().bounds();
  EstimatedShape shape;
  for (const std::string &arg : fn.args()) {
    const std::string who = "output '" + fn.name() + "' dimension '" + arg + "'";
    const auto on_arg = [&](const Halide::Internal::Bound &b) { return b.var == arg; };
    // Func::bound fixes the output's region in that dimension, as a constraint does.
    auto bound = std::find_if(bounds.begin(), bounds.end(), on_arg);
    auto it = std::find_if(estimates.begin(), estimates.end(), on_arg);
    if (bound != bounds.end() && constant_constraint(bound->min) &&
        constant_constraint(bound->extent)) {
      it = bound;
    }
    if (it == estimates.end()) {
      throw ConfigError(who + " has no estimate: give the output set_estimates");
    }
    shape.mins.push_back(it->min.defined() ? const_or_throw(it->min, who) : 0);
    shape.extents.push_back(const_or_throw(it->extent, who));
  }
  // Every buffer of a Tuple-valued output has the same region and constraints.
  return constrained(shape, fn.output_buffers().at(0), "output '" + fn.name() + "'");
}

Halide::Expr scalar_estimate(const Halide::Internal::InferredArgument &a) {
  const Halide::Expr &e = a.arg.argument_estimates.scalar_estimate;
  if (!e.defined()) {
    throw ConfigError("scalar input '" + a.arg.name + "' has no estimate: give it set_estimate");
  }
  return e;
}

std::vector<std::vector<int>> estimated_output_extents(Halide::Pipeline &pipeline) {
  std::vector<std::vector<int>> all;
  for (const Halide::Func &f : pipeline.outputs())
    all.push_back(output_estimate(f.function()).extents);
  return all;
}

Halide::Realization allocate_outputs(Halide::Pipeline &pipeline,
                                     const std::vector<std::vector<int>> &extents) {
  const auto outputs = pipeline.outputs();
  if (extents.size() != outputs.size()) {
    throw ConfigError("allocate_outputs: " + std::to_string(extents.size()) + " shapes for " +
                      std::to_string(outputs.size()) + " outputs");
  }
  std::vector<Halide::Buffer<>> buffers;
  for (size_t i = 0; i < outputs.size(); ++i) {
    for (const Halide::Type &t : outputs[i].output_types()) buffers.emplace_back(t, extents[i]);
  }
  return Halide::Realization(buffers);
}

Halide::Realization allocate_estimated_outputs(Halide::Pipeline &pipeline) {
  std::vector<Halide::Buffer<>> buffers;
  for (const Halide::Func &f : pipeline.outputs()) {
    const EstimatedShape shape = output_estimate(f.function());
    for (const Halide::Type &t : f.output_types()) buffers.push_back(make_buffer(t, shape));
  }
  return Halide::Realization(buffers);
}

void apply_root_schedule(Halide::Pipeline &pipeline) {
  require_unscheduled(pipeline);
  for (auto &[name, fn] : Halide::Internal::build_environment(output_functions(pipeline))) {
    Halide::Func(fn).compute_root();
  }
}

std::optional<std::string> first_bitwise_difference(const Halide::Buffer<> &a,
                                                    const Halide::Buffer<> &b) {
  if (a.type() != b.type()) return std::string("types differ");
  if (a.dimensions() != b.dimensions()) return std::string("dimension counts differ");
  for (int d = 0; d < a.dimensions(); ++d) {
    if (a.dim(d).min() != b.dim(d).min() || a.dim(d).extent() != b.dim(d).extent()) {
      return "shapes differ in dimension " + std::to_string(d);
    }
  }
  const size_t bytes = a.type().bytes();
  auto address = [bytes](const Halide::Buffer<> &buf, const int *pos) {
    int64_t offset = 0;
    for (int d = 0; d < buf.dimensions(); ++d) {
      offset += int64_t(pos[d] - buf.dim(d).min()) * buf.dim(d).stride();
    }
    return static_cast<const uint8_t *>(buf.data()) + offset * int64_t(bytes);
  };
  std::optional<std::string> diff;
  a.for_each_element([&](const int *pos) {
    if (diff || std::memcmp(address(a, pos), address(b, pos), bytes) == 0) return;
    std::string where;
    for (int d = 0; d < a.dimensions(); ++d) where += (d ? ", " : "") + std::to_string(pos[d]);
    diff = "values differ at (" + where + ")";
  });
  return diff;
}

}  // namespace protuner
