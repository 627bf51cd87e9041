// The arguments of a candidate compiled ahead of time, as a file: what the measure child
// hands protuner-measure-runner (the inputs' data, the outputs' shapes, scalar values, in
// the compiled function's argv order) and what the runner hands back (the outputs' data).
// Plain halide_buffer_t shapes and bytes, so the runner needs Halide's runtime header only,
// never libHalide.
//
// Format (host byte order): the magic line "protuner-run-plan 1\n", an argument count
// (uint32), then per argument: kind (uint8), type code, bits (uint8 each), lanes (uint16),
// dimensions (int32), per dimension min, extent, stride (int32 each), data size (uint64)
// and that many bytes: an input's or output's allocation from its first element to its
// last, a scalar's value.
#pragma once

#include <HalideRuntime.h>

#include <cstdint>
#include <string>
#include <vector>

namespace protuner {

struct PlannedArgument {
  enum class Kind : uint8_t { kInput = 0, kOutput = 1, kScalar = 2 };
  Kind kind = Kind::kInput;
  halide_type_t type;
  std::vector<halide_dimension_t> dims;  // empty for scalars
  std::vector<uint8_t> data;  // buffers: the allocation's bytes (outputs: empty in a plan)
};

// Bytes of a buffer's allocation with these dims (positive strides: from its first element
// to its last).
uint64_t allocation_bytes(const halide_type_t &type, const std::vector<halide_dimension_t> &dims);

// Throw IoError naming the path when it cannot be written or read, and ConfigError when
// its content is not a plan of this version.
void write_run_plan(const std::string &path, const std::vector<PlannedArgument> &arguments);
std::vector<PlannedArgument> read_run_plan(const std::string &path);

}  // namespace protuner
