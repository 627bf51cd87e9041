// Our representation of a Halide pipeline: its Funcs and their stages (the pure definition
// and each update), and who calls whom. The search decides Funcs one at a time from the
// outputs back to the inputs (ProTuner's MDP), so Funcs are listed in that order.
#pragma once

#include <string>
#include <vector>

namespace Halide {
class Pipeline;
}

namespace protuner {

struct StageNode {
  int index = 0;                         // 0: pure definition, k: k-th update
  std::vector<std::string> pure_vars;    // loop variables, innermost first
  std::vector<std::string> rvars;        // reduction variables, innermost first
};

struct FuncNode {
  std::string name;
  bool is_output = false;
  int dimensions = 0;
  std::vector<std::string> value_types;  // one per tuple element, e.g. "float32"
  std::vector<StageNode> stages;
  std::vector<int> producers;            // indices into PipelineGraph::funcs
  std::vector<int> consumers;

  // A Func can be inlined when it is not an output and has no update definitions.
  bool inlinable() const { return !is_output && stages.size() == 1; }
};

struct PipelineGraph {
  // Consumers before producers: outputs first, inputs' readers last.
  std::vector<FuncNode> funcs;

  int find(const std::string &name) const;  // index of a Func, or -1
};

// Builds the graph of `pipeline` (which must have been defined; schedules are ignored).
PipelineGraph analyze_pipeline(Halide::Pipeline &pipeline);

}  // namespace protuner
