// From dataset records (dataset.h) to training samples: each distinct app's pipeline is
// rebuilt once (AppInstance::create for protuner::host_target(), never Halide's own host
// target, which can SIGILL here), every schedule is read back with schedule_from_json on
// that pipeline and featurized. The dataset stores no features, so it outlives changes to
// the feature layout; this is where features are made.
#pragma once

#include <string>
#include <vector>

#include "searcher/cost/dataset.h"
#include "searcher/cost/learned/trainer.h"
#include "searcher/cost/machine_model.h"

namespace protuner {

// The in-memory form. A sample whose schedule this build's space refuses
// (IllegalScheduleError: measured before a rule that now excludes it) is skipped with a
// warning: its measurement stays in the file, and a build whose rules allow it again
// trains on it. Throws ConfigError naming the sample (pipeline id and index) whose schedule
// is malformed or for another pipeline or whose runtime is not positive, AppLoadError for
// an app that cannot be rebuilt.
std::vector<TrainingSample> featurize_dataset(const std::vector<DatasetSample> &records,
                                              const MachineModel &machine = {});

// Every sample of every file (read_dataset), featurized. Library names are resolved as
// resolve_library (common/suite.h) does, relative to the dataset file's folder. Errors as
// read_dataset, resolve_library and featurize_dataset.
std::vector<TrainingSample> load_training_samples(const std::vector<std::string> &paths,
                                                  const MachineModel &machine = {});

}  // namespace protuner
