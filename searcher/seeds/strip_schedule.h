// Seed schedules in the shape an expert writes first for an image pipeline: the output
// computed in parallel strips along its outermost dimension, every other Func computed per
// strip (the region the strip needs, vectorized along its innermost dimension), and the
// Funcs inlined whose every point one consumer reads once (no recompute) or that cost
// next to nothing to recompute. One schedule per strip height; tuning measures the ones
// the cost model ranks best right after the compute-root fallback, so a search starts
// from a schedule near the hand-written ones.
//
// Why: on harris the analytic model can rank a tiled schedule beam search finds, which
// runs much slower than the expert's, above the expert's, which is in the space. A
// measured seed of the expert's shape keeps such a model error from costing the user the
// result.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "common/schedule/schedule_state.h"
#include "searcher/space/search_space.h"

namespace protuner {

// Strip heights tried (points of the strip dimension, usually rows): small enough that a
// strip's intermediates stay in a core's cache (harris' expert strips are 16 rows), big
// enough that their halos recompute little. A height needs kMinStripsPerCore strips per
// core to balance the cores.
inline constexpr int kStripHeights[] = {4, 8, 16, 32, 64};
inline constexpr int kMinStripsPerCore = 2;

// A Func computed per strip is computed at root instead when the strips would compute this
// many times its root region or more (a reduction over the whole input, a histogram, or a
// producer whose halo spans the strip): recomputing it per strip is no seed worth measuring.
inline constexpr double kMaxStripRecompute = 1.5;

// Inlining a Func whose one consumer reads each of its points about once computes nothing
// twice; "about": a boundary condition's clamp reads the edge of what it wraps again for
// every point of the halo, this share more at most.
inline constexpr double kInlineEdgeRereads = 0.1;

// A Func this cheap per point (operations and loads, StageNode::code_per_point) is inlined
// even where its consumers read each point up to kMaxCheapRecompute times: recomputing a
// product of two stored gradients in a 3x3 box is cheaper than storing and reloading it
// (harris runs faster with its three products inlined than with them computed per strip).
inline constexpr int64_t kCheapCodePerPoint = 4;
inline constexpr int64_t kMaxCheapRecompute = 9;

// Whether a seed inlines f (the next Func of `state`): its one consumer reads each of its
// points about once (kInlineEdgeRereads), or it is cheap enough to recompute
// (kCheapCodePerPoint, kMaxCheapRecompute). Both count the reads a reduction's loops make
// per point it computes: a convolution reads its padding again per output channel and
// filter tap, so the padding is stored; a Func that only loads is inlined whatever reads it.
bool seed_inlines(const ScheduleState &state, int f);

// Func f (the next of `state`) computed per iteration of loop `at`: each stage whole over
// the region one iteration needs, its innermost variable vectorized if that is legal. It
// is stored there too, or at `store_at`, a loop enclosing `at`, so that Halide slides it
// along the loops in between and computes about the region stored there once per
// iteration of `store_at`. Nothing when no such decision is legal, or when the stored
// regions over the whole run would be kMaxStripRecompute times f's root region or more.
std::optional<FuncDecision> per_iteration(const ScheduleState &state, int f, const LoopRef &at,
                                          const SearchSpaceOptions &options,
                                          const std::optional<LoopRef> &store_at = std::nullopt);

// The decision inlining f (the next Func of `state`) where a seed inlines it and that is
// legal, else nothing.
std::optional<FuncDecision> inlined_if_seed_inlines(const ScheduleState &state, int f);

// Complete, legal schedules (ScheduleState::check_decision), one per distinct height of
// kStripHeights some dimension of the output is long enough for, lowest first. Empty when
// no dimension of the output is that long.
std::vector<ScheduleState> strip_schedules(std::shared_ptr<const PipelineGraph> graph,
                                           const SearchSpaceOptions &options);

// Seeds in the shape of a pyramid's expert schedule (interpolate, local_laplacian): every
// Func not inlined computed at root in parallel strips (as the output of a strip seed),
// except one computed per strip of a Func at root decided before it, the nearest first,
// where that is legal and recomputes less than kMaxStripRecompute: each horizontal pass
// per strip of its vertical pass. A Func reading a scan (StageNode::scans) is neither
// inlined nor computed per strip, so that the scan is computed per strip of it: iir_blur's
// blurs per band of their transposes. Funcs too short for strips are computed as in the
// fallback. One per distinct height of kStripHeights, lowest first; none where no Func is
// computed per strip of a Func other than the output (that is about a strip seed).
//
// Why: a strip seed computes a pyramid's every level per strip of the output, and the
// coarse levels recompute too much there, so they go to root with their passes apart; the
// search then changes one Func at a time and cannot fuse a pass into its level, as that
// takes two changes (the level in strips, the pass inside them). Likewise a scan per band
// of its transpose takes two: the transpose out of line and at root, the scan in it.
std::vector<ScheduleState> root_strip_schedules(std::shared_ptr<const PipelineGraph> graph,
                                                const SearchSpaceOptions &options);

}  // namespace protuner
