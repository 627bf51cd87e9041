// The seed schedules a measuring search starts from, in the order to measure them: the
// compute-root fallback (fallback_schedule.h) first, so an app always has a measured
// schedule, then every block-in-tile seed (blocked_in_tile_schedules) and sliced seed
// (sliced_schedule.h), then the strip, root-strip and register-blocked seeds
// (strip_schedule.h, blocked_schedule.h) the cost model predicts faster than the fallback,
// best first.
//
// Why block-in-tile and sliced seeds skip the model: they are the experts' structure, and
// the analytic model prices a reduction computed per block or per tile far too high: on
// resnet50 it predicts them slower than the fallback, which they beat several times over,
// and on conv_layer and mat_mul they run about as fast as the experts.
//
// Why the model only filters: it ranks strip heights poorly (camera_pipe's fastest strip
// seed is not the one it ranks first), but it does tell the seeds that cannot work
// (iir_blur's strips, predicted slower than the fallback, run many times slower).
// `protuner tune`/`compare` and the Halide plugin's measuring searches both measure these
// before searching.
//
// To compare the model with the seeds' runtimes on an app: `build/bin/search_probe APP
// --out DIR` prints each seed's prediction and writes it to DIR/APP_<seed>.json, and
// `protuner measure --app APP --suite apps/suite.yaml --schedule DIR/APP_<seed>.json`
// times it.
#pragma once

#include <memory>
#include <vector>

#include "common/schedule/schedule_state.h"
#include "searcher/cost/cost_model.h"
#include "searcher/space/search_space.h"

namespace protuner {

// Defaults for the searches that measure seeds (TuneSettings, the plugin): at most this many
// seeds beyond the fallback (up to 6 block-in-tile seeds or 3 sliced ones, then of 5 strip
// heights, 5 root-strip heights and 3 blocks those predicted faster than the fallback; one
// compiles in seconds, resnet50's in tens of seconds), and
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
