// The seed schedules a measuring search starts from, in the order to measure them: the
// compute-root fallback (fallback_schedule.h) first, so an app always has a measured
// schedule, then every block-in-tile seed (blocked_in_tile_schedules) and sliced seed
// (sliced_schedule.h), then the strip, root-strip and register-blocked seeds
// (strip_schedule.h, blocked_schedule.h) the cost model predicts faster than the fallback,
// best first.
//
// Why block-in-tile and sliced seeds skip the model: they are the experts' structure, and
// the analytic model prices a reduction computed per block or per tile far too high.
// resnet50's ran 60 ms against the fallback's 317 where the model predicted 3.2 s against
// 2.6; on conv_layer and mat_mul they ran as fast as the experts.
//
// Why the model only filters: it ranks strip heights poorly (camera_pipe's fastest strip
// seed was its 4th), but it does tell the seeds that cannot work (iir_blur's strips,
// predicted slower than the fallback, ran 5x to 600x slower). `protuner tune`/`compare`
// and the Halide plugin's measuring searches both measure these before searching.
#pragma once

#include <memory>
#include <vector>

#include "searcher/cost/cost_model.h"
#include "searcher/schedule_state.h"
#include "searcher/search_space.h"

namespace protuner {

// Defaults for the searches that measure seeds (TuneSettings, the plugin): at most this many
// seeds beyond the fallback (up to 6 block-in-tile seeds or 3 sliced ones, then of 5 strip
// heights, 5 root-strip heights and 3 blocks those predicted faster than the fallback; one
// compiles in a second or two, interpolate's in 4 or 5, resnet50's in 13 to 37 s), and
// none started once seeding has used this share of the time to the deadline.
inline constexpr int kDefaultSeedsMeasured = 11;
inline constexpr double kDefaultSeedsBudgetShare = 0.3;

struct SeedSchedule {
  ScheduleState state;
  double predicted_seconds = 0;  // by the model seeds_to_measure was given
};

// The fallback, then at most `max_seeds` other seeds: the block-in-tile ones, then those
// predicted faster than the fallback, best predicted first.
std::vector<SeedSchedule> seeds_to_measure(std::shared_ptr<const PipelineGraph> graph,
                                           const SearchSpaceOptions &options, CostModel &model,
                                           int max_seeds);

}  // namespace protuner
