// Concrete inputs and outputs for running a pipeline: deterministic random data for every
// input at the sizes its estimates give, output buffers at the estimated (or a reduced)
// size, a safe reference schedule, and a bit-exact comparison. Tests, the measurer and the
// CLI all run pipelines this way, so "the same inputs" means the same thing everywhere.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <Halide.h>

namespace protuner {

// One pipeline input, bound to data.
struct BoundInput {
  std::string name;
  Halide::Internal::Parameter param;
  Halide::Buffer<> buffer;  // undefined for scalars
};

// The constant region a buffer is tuned and measured at, one min and extent per dimension,
// and the order its dimensions are laid out in memory (innermost first).
struct EstimatedShape {
  std::vector<int> mins, extents;
  std::vector<int> storage_order;  // empty: dimension order (dimension 0 innermost)
};

// The regions a pipeline is tuned and measured at, as RunGen sizes the AOT-compiled
// generator: the estimates the generator gave, where a constant buffer constraint wins
// (`dim(d).set_bounds(min, extent)`, and for outputs `Func::bound`), laid out as its
// stride constraints require (a dimension constrained to stride 1 is innermost, as in an
// interleaved image). Each throws ConfigError naming the input or output (and dimension)
// whose estimate is missing or not a constant. Everything that sizes a pipeline by its
// estimates (inputs and outputs here, bounds in the searcher) reads them through these.
EstimatedShape input_estimate(const Halide::Internal::InferredArgument &buffer_input);
EstimatedShape output_estimate(const Halide::Internal::Function &output);
Halide::Expr scalar_estimate(const Halide::Internal::InferredArgument &scalar_input);

// Binds every input Parameter of `pipeline`: buffers get uniform random data at their
// estimated region (floats in [0, 1), integers over their full range, except 32/64-bit
// integers in [0, 256)), scalars get their estimate. The same seed gives the same bytes.
// Throws ConfigError naming the input when an estimate is missing.
std::vector<BoundInput> bind_random_inputs(Halide::Pipeline &pipeline, uint64_t seed);

// The estimated extents of every output, in dimension order. Throws ConfigError naming
// the output when an estimate is missing.
std::vector<std::vector<int>> estimated_output_extents(Halide::Pipeline &pipeline);

// Allocates one buffer per output with the given extents (min 0). `extents` must have one
// entry per output of the pipeline.
Halide::Realization allocate_outputs(Halide::Pipeline &pipeline,
                                     const std::vector<std::vector<int>> &extents);

// Allocates one buffer per output at its region (output_estimate: mins, extents, layout),
// where the generator's estimates put it. Throws ConfigError like output_estimate.
Halide::Realization allocate_estimated_outputs(Halide::Pipeline &pipeline);

// Schedules every Func of the pipeline compute_root: breadth-first, no recompute. Always
// feasible and simple enough to trust, which makes it the reference other schedules are
// checked against (Halide's default inlines everything, exponential on deep pipelines).
// Apply it to a pipeline nothing else has scheduled (checked: ConfigError otherwise).
void apply_root_schedule(Halide::Pipeline &pipeline);

// The first difference between two buffers of the same type and shape, compared bit for
// bit; nullopt when they are identical. Shape or type mismatches are differences too.
std::optional<std::string> first_bitwise_difference(const Halide::Buffer<> &a,
                                                    const Halide::Buffer<> &b);

}  // namespace protuner
