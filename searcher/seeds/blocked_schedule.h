// Seed schedules for pipelines whose time goes into reductions (matrix multiply,
// convolution): the compute-root fallback (fallback_schedule.h) with every reduction update
// register-blocked as experts write it: an accumulator block of a vector or two along the
// innermost variable by a few rows unrolled, the reduction loops around the block, inside
// cache tiles that run in parallel. Tuning measures them with the strip seeds
// (strip_schedule.h), since strips do nothing for a reduction (on conv_layer and mat_mul
// the best strip seed runs several times slower than the expert schedule; seed_schedules.h
// says how to time the seeds).
#pragma once

#include <memory>
#include <vector>

#include "common/schedule/schedule_state.h"
#include "searcher/space/search_space.h"

namespace protuner {

// An accumulator block: vectors along the innermost variable by rows along the next.
struct RegisterBlock {
  int vectors = 1;
  int rows = 1;

  bool operator==(const RegisterBlock &o) const { return vectors == o.vectors && rows == o.rows; }
};
// The blocks of blocked_schedules: 2x4 and 1x8 vectors are 8 registers of the 16 (AVX2)
// or 32 (AVX-512) there are.
inline constexpr RegisterBlock kRegisterBlocks[] = {{1, 4}, {2, 4}, {1, 8}};

// Cache tiles around blocked_schedules' blocks, in blocks: a tile of 4 x 8 blocks of 2 x 4
// vectors of 16 floats is 128 x 32 outputs, whose operands stay in L2 while the reduction
// runs.
inline constexpr int kTileBlocksInner = 4;
inline constexpr int kTileBlocksRows = 8;

// One complete, legal schedule per block shape of kRegisterBlocks that fits some reduction
// update of the pipeline (one with reduction variables and two pure variables or more, at
// least a block long in each); empty when none fits.
std::vector<ScheduleState> blocked_schedules(std::shared_ptr<const PipelineGraph> graph,
                                             const SearchSpaceOptions &options);

// Block-in-tile seeds choose their accumulator blocks from the register file, as BLAS
// kernels do: a block of v vectors by r rows holds v x r accumulators, and each reduction
// step loads v vectors and broadcasts one value, doing v x r multiply-adds per v + r
// loads. It needs v x r + 2 registers: the accumulators, the broadcast value and one
// loaded vector; the other loaded vectors can be memory operands of the multiply-adds
// (L1 hits). Counting all v loads in registers would leave AVX2 no block for resnet50's
// 7-pixel rows, whose in-tile seed then runs about twice as long as with its expert's
// 2 x 7 (16 registers so counted). Per width v (at most kMaxBlockVectors
// vectors) the block takes the most rows that fit; it is kept when it holds at least
// kMinAccumulators and makes at least one multiply-add per load (so never one vector
// wide), and the kInTileBlockShapes with the most per load are tried (conv_layer's expert
// block, 4 vectors of AVX-512 by 5 rows, comes first there).
inline constexpr int kMaxBlockVectors = 4;
inline constexpr int kInTileBlockShapes = 3;
// Independent accumulators a block needs to keep the multiply-add units busy: two FMA
// pipes with a latency of 4 cycles (x86-64 since Skylake and Zen) need 8 in flight.
// resnet50's 7-pixel rows take blocks of 2 vectors x 7.
inline constexpr int kMinAccumulators = 8;
// The cache tile around a block-in-tile seed's blocks: one block wide and up to this many
// blocks tall, so consecutive blocks reuse one panel of the reduction's operand along the
// vector (mat_mul's B, 64 x 2048 floats: 512 KiB of the 2 MiB L2), as the experts tile.
inline constexpr int kInTileBlocksTall = 16;
// ...and this many points deep along its third variable (a convolution's rows), so the
// rows of the stencil's input and the panel copied per tile are reused over that many rows
// of blocks: a conv_layer schedule with its filter copied per tile runs about a third
// faster with tiles 16 rows deep than one row deep, and deeper tiles (40 rows) run slower
// again. Shallower when the tiles would otherwise be fewer than kInTileTasksPerCore per
// core.
inline constexpr int kInTileDepth = 16;
inline constexpr int kInTileTasksPerCore = 8;

// The block shapes above for an accumulator over ex x ey points of `lanes`-lane vectors,
// best first; blocks divide both extents. Empty when none fits.
std::vector<RegisterBlock> register_blocks(int64_t lanes, int64_t ex, int64_t ey,
                                           int vector_registers);

// Reductions that a Func maps pointwise (matrix multiply's copy, a convolution's ReLU,
// each of resnet50's convolutions and its batch norm), the way experts write them: the
// Func at root in cache tiles of register blocks, every loop outside the tiles fused into
// one parallel loop, the reduction computed per block (its accumulator the block,
// vectorized and unrolled, the reduction loops around it), the rest as seeds inline or at
// root. Seed k takes every such Func's k-th block shape of register_blocks (its last,
// when it has fewer); each comes twice, the second time also copying, per tile, every
// Func the reduction reads as a panel (rows loaded as vectors at each reduction step): the
// copy pays where the panel's rows are far apart (mat_mul's B, 8 KiB apart, runs much
// faster copied) and can cost where they are close (conv_layer's filter, 512 B apart, runs
// a little slower copied), so both are seeds. Empty when no block fits.
std::vector<ScheduleState> blocked_in_tile_schedules(std::shared_ptr<const PipelineGraph> graph,
                                                     const SearchSpaceOptions &options);

}  // namespace protuner
