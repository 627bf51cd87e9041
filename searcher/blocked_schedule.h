// Seed schedules for pipelines whose time goes into reductions (matrix multiply,
// convolution): the compute-root fallback (fallback_schedule.h) with every reduction update
// register-blocked as experts write it: an accumulator block of a vector or two along the
// innermost variable by a few rows unrolled, the reduction loops around the block, inside
// cache tiles that run in parallel. Tuning measures them with the strip seeds
// (strip_schedule.h), since strips do nothing for a reduction (conv_layer's best strip
// seed ran 5x slower than its expert schedule, mat_mul's 18x).
#pragma once

#include <memory>
#include <vector>

#include "searcher/schedule_state.h"
#include "searcher/search_space.h"

namespace protuner {

// Accumulator blocks tried: (vectors along the innermost variable, rows along the next).
// 2x4 and 1x8 vectors are 8 registers of the 16 (AVX2) or 32 (AVX-512) there are.
struct RegisterBlock {
  int vectors = 1;
  int rows = 1;
};
inline constexpr RegisterBlock kRegisterBlocks[] = {{1, 4}, {2, 4}, {1, 8}};

// Cache tiles around a block, in blocks: a tile of 4 x 8 blocks of 2 x 4 vectors of 16
// floats is 128 x 32 outputs, whose operands stay in L2 while the reduction runs.
inline constexpr int kTileBlocksInner = 4;
inline constexpr int kTileBlocksRows = 8;

// One complete, legal schedule per block shape of kRegisterBlocks that fits some reduction
// update of the pipeline (one with reduction variables and two pure variables or more, at
// least a block long in each); empty when none fits.
std::vector<ScheduleState> blocked_schedules(std::shared_ptr<const PipelineGraph> graph,
                                             const SearchSpaceOptions &options);

// When the output only maps a reduction pointwise (matrix multiply's copy, a convolution's
// ReLU), the way experts write both: the output in parallel cache tiles of register
// blocks, the reduction computed per block (its accumulator the block, vectorized and
// unrolled, the reduction loops around it), the rest as seeds inline or at root. One per
// block shape of kRegisterBlocks that fits; empty otherwise.
std::vector<ScheduleState> blocked_in_tile_schedules(std::shared_ptr<const PipelineGraph> graph,
                                                     const SearchSpaceOptions &options);

}  // namespace protuner
