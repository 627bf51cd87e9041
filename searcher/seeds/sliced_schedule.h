// Seed schedules for a reduction over per-offset intermediates: nl_means sums, per pixel,
// weights over a search window of offsets, each weight a patch distance that is a 4-D Func
// of pixel and offset. The shape of its fast schedules (the expert's, Adams2019's), which
// no strip or block seed has: the output in parallel 2-D tiles, the reduction per tile,
// and the intermediates indexed by the offset computed at the innermost reduction loop,
// one slice per offset over the tile (or a row segment of it). A slice stays in cache
// between the passes that make and read it, and the patch halo is all it recomputes.
//
// Why a seed: the search reaches that schedule only through several changes that are each
// slower alone (the reduction moved into the tiles, its loops reordered, then each
// intermediate moved into them), and Adams2019 beats every strip seed on nl_means.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "common/schedule/schedule_state.h"
#include "searcher/space/search_space.h"

namespace protuner {

// The shapes of the sliced seeds. The output in tiles of `columns` x `rows` points
// (columns rounded to whole vectors), and the reduction per tile either
// - with row_vectors 0, as nl_means' expert writes it: the reduction loops outside the
//   tile's pixels, so one offset's intermediates are a slice of the whole tile (128 x 32
//   floats, 16 KiB) made and read while in cache, and the accumulators a tile of memory;
// - or, as Adams2019 schedules nl_means, per row segment of row_vectors vectors whose
//   accumulators stay in registers (4 vectors of a 4-value sum: 16, the AVX2 register
//   file) with the reduction loops around them, the offset's intermediates a slice of one
//   row segment. An intermediate that slice would recompute (a patch distance its box
//   filter reads 7 rows of) is computed per row of the tile and stored per tile, so that
//   Halide slides it down the rows and computes each row once.
// Both ways run nl_means about as fast as Adams2019's schedule and faster than the
// expert's, whose 256 x 32 slices fill a 32 KiB L1; the row segments run a little faster
// than the whole-tile slices, and slower without the sliding (`protuner compare` on
// nl_means measures Adams2019 beside the searches; seed_schedules.h says how to time the
// seeds).
struct SliceShape {
  int64_t columns = 1;
  int64_t rows = 1;
  int row_vectors = 0;
};
inline constexpr SliceShape kSliceShapes[] = {{128, 32, 0}, {64, 16, 4}, {64, 32, 4}};

// One complete, legal schedule per shape of kSliceShapes that fits the output: the output
// at root in parallel tiles; the first reduction Func that sums per point (every dimension
// a pure variable of its update) computed per tile in the shape's order; then, as each
// other Func comes, inlined where a seed inlines it (seed_inlines), else computed at the
// reduction's innermost loop where that recomputes less than kMaxStripRecompute, else
// (row segments) per row stored per tile, else per tile, else as in the fallback. Empty
// when nothing is computed at the reduction's innermost loop.
std::vector<ScheduleState> sliced_reduction_schedules(std::shared_ptr<const PipelineGraph> graph,
                                                      const SearchSpaceOptions &options);

}  // namespace protuner
