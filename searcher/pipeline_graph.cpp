#include "searcher/pipeline_graph.h"

#include <Halide.h>
#include <algorithm>
#include <map>
#include <sstream>

namespace protuner {
namespace {

namespace HI = Halide::Internal;

std::vector<std::string> stage_pure_vars(const HI::Definition &def) {
  std::vector<std::string> vars;
  for (const Halide::Expr &arg : def.args()) {
    if (const auto *v = arg.as<HI::Variable>()) vars.push_back(v->name);
  }
  return vars;
}

std::vector<std::string> stage_rvars(const HI::Definition &def) {
  std::vector<std::string> rvars;
  for (const HI::ReductionVariable &rv : def.schedule().rvars()) rvars.push_back(rv.var);
  return rvars;
}

}  // namespace

int PipelineGraph::find(const std::string &name) const {
  for (size_t i = 0; i < funcs.size(); ++i) {
    if (funcs[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

PipelineGraph analyze_pipeline(Halide::Pipeline &pipeline) {
  std::vector<HI::Function> outputs;
  for (const Halide::Func &f : pipeline.outputs()) outputs.push_back(f.function());
  const std::map<std::string, HI::Function> env = HI::build_environment(outputs);
  std::vector<std::string> order = HI::topological_order(outputs, env);
  std::reverse(order.begin(), order.end());  // producers-first -> consumers-first

  PipelineGraph graph;
  for (const std::string &name : order) {
    const HI::Function &fn = env.at(name);
    FuncNode node;
    node.name = name;
    node.dimensions = fn.dimensions();
    node.is_output = std::any_of(outputs.begin(), outputs.end(),
                                 [&](const HI::Function &o) { return o.name() == name; });
    for (const Halide::Type &t : fn.output_types()) {
      std::ostringstream os;
      os << t;
      node.value_types.push_back(os.str());
    }
    node.stages.push_back({0, fn.args(), {}});
    for (size_t u = 0; u < fn.updates().size(); ++u) {
      const HI::Definition &def = fn.updates()[u];
      node.stages.push_back({static_cast<int>(u + 1), stage_pure_vars(def), stage_rvars(def)});
    }
    graph.funcs.push_back(std::move(node));
  }
  for (size_t i = 0; i < graph.funcs.size(); ++i) {
    for (const auto &[callee, unused] : HI::find_direct_calls(env.at(graph.funcs[i].name))) {
      const int p = graph.find(callee);
      if (p < 0 || p == static_cast<int>(i)) continue;  // self-reference of an update
      graph.funcs[i].producers.push_back(p);
      graph.funcs[p].consumers.push_back(static_cast<int>(i));
    }
  }
  return graph;
}

}  // namespace protuner
