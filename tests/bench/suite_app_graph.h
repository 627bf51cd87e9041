// The pipeline graph of one of the suite's apps, as the benchmarks load it: the app's
// library from the build tree (PROTUNER_APP_LIBRARY_DIR), instantiated for this machine's
// corrected host target with default params.
#pragma once

#include <Halide.h>

#include <memory>
#include <string>

#include "common/app.h"
#include "common/host_target.h"
#include "common/pipeline/pipeline_graph.h"

namespace protuner::bench {

inline std::shared_ptr<const PipelineGraph> suite_app_graph(const std::string &app) {
  AppInstance instance = AppInstance::create(
      {app, std::string(PROTUNER_APP_LIBRARY_DIR) + "/libprotuner_app_" + app + ".so", app, {}},
      host_target());
  return std::make_shared<const PipelineGraph>(analyze_pipeline(instance.pipeline()));
}

}  // namespace protuner::bench
