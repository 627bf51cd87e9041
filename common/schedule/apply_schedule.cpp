#include "common/schedule/apply_schedule.h"

#include <Halide.h>
#include <cctype>
#include <sstream>
#include <stdexcept>

#include "common/errors.h"
#include "common/schedule/schedule_directives.h"
#include "common/unscheduled_check.h"

namespace protuner {

extern const char kFuncOrderSource[];  // common/pipeline/func_order.h, embedded by CMake

namespace {

using Kind = Directive::Kind;

// Halide names reduction variables per instance: an RDom without a name takes a process-
// wide counter ("r156$x" in one instance of an algorithm, "r1146$x" in the next). So a
// schedule refers to them by position, the index-th rvar of update stage `stage`, and
// each pipeline it is applied to supplies its own names.
struct RVarPosition {
  int stage = 0, index = 0;
};

RVarPosition rvar_position(const PipelineGraph &g, int func, const std::string &name) {
  const FuncNode &node = g.funcs[func];
  for (size_t s = 1; s < node.stages.size(); ++s) {
    const StageNode &st = node.stages[s];
    for (size_t v = static_cast<size_t>(st.num_pure); v < st.loop_vars.size(); ++v) {
      if (st.loop_vars[v] == name) return {static_cast<int>(s), static_cast<int>(v) - st.num_pure};
    }
  }
  throw std::logic_error("apply_schedule: no reduction variable '" + name + "' in " + node.name);
}

Halide::VarOrRVar loop_var(const PipelineGraph &g, std::vector<Halide::Func> &funcs, int func,
                           const std::string &name, bool is_rvar) {
  if (!is_rvar) return Halide::Var(name);
  const RVarPosition p = rvar_position(g, func, name);
  const auto &rvars = funcs[func].function().update(p.stage - 1).schedule().rvars();
  return Halide::RVar(rvars.at(static_cast<size_t>(p.index)).var);
}

Halide::TailStrategy tail_strategy(Tail t) {
  switch (t) {
    case Tail::kGuard:
      return Halide::TailStrategy::GuardWithIf;
    case Tail::kShiftInwards:
      return Halide::TailStrategy::ShiftInwards;
    case Tail::kRoundUp:
      return Halide::TailStrategy::RoundUp;
  }
  throw std::logic_error("apply_schedule: unknown tail strategy");
}

const char *tail_source(Tail t) {
  switch (t) {
    case Tail::kGuard:
      return "TailStrategy::GuardWithIf";
    case Tail::kShiftInwards:
      return "TailStrategy::ShiftInwards";
    case Tail::kRoundUp:
      return "TailStrategy::RoundUp";
  }
  throw std::logic_error("apply_schedule: unknown tail strategy");
}

void apply_directive(const Directive &d, const PipelineGraph &g, std::vector<Halide::Func> &funcs) {
  Halide::Func &f = funcs[d.func];
  Halide::Stage stage = d.stage == 0 ? Halide::Stage(f) : f.update(d.stage - 1);
  auto var = [&](size_t i) { return Halide::VarOrRVar(Halide::Var(d.vars[i])); };
  // An rfactor directive's reduction variable (vars[0]) split by its factor into vars[1]
  // outside and vars[2] inside; the directive rfactors one of them.
  auto split_reduction = [&](Halide::Stage &s) -> Halide::Stage & {
    return s.split(loop_var(g, funcs, d.func, d.vars[0], true), Halide::RVar(d.vars[1]),
                   Halide::RVar(d.vars[2]), static_cast<int>(d.factor),
                   Halide::TailStrategy::GuardWithIf);
  };
  switch (d.kind) {
    case Kind::kComputeInline:
      f.compute_inline();
      break;
    case Kind::kComputeRoot:
      f.compute_root();
      break;
    case Kind::kStoreRoot:
      f.store_root();
      break;
    case Kind::kComputeAt:
    case Kind::kStoreAt: {
      const Halide::LoopLevel at(funcs[d.target_func],
                                 loop_var(g, funcs, d.target_func, d.vars[0], d.target_is_rvar));
      if (d.kind == Kind::kComputeAt)
        f.compute_at(at);
      else
        f.store_at(at);
      break;
    }
    case Kind::kSplit:
      stage.split(var(0), var(1), var(2), static_cast<int>(d.factor), tail_strategy(d.tail));
      break;
    case Kind::kStoreOnStack:
      f.store_in(Halide::MemoryType::Stack);
      break;
    case Kind::kAlignStorage:
      f.align_storage(Halide::Var(d.vars[0]), static_cast<int>(d.factor));
      break;
    case Kind::kReorder: {
      std::vector<Halide::VarOrRVar> order;
      for (size_t i = 0; i < d.vars.size(); ++i) {
        order.push_back(loop_var(g, funcs, d.func, d.vars[i], d.is_rvar[i]));
      }
      stage.reorder(order);
      break;
    }
    case Kind::kFuse:
      stage.fuse(var(0), var(1), var(2));
      break;
    case Kind::kRename:
      stage.rename(var(0), var(1));
      break;
    case Kind::kParallel:
      stage.parallel(var(0));
      break;
    case Kind::kVectorize:
      stage.vectorize(var(0));
      break;
    case Kind::kUnroll:
      stage.unroll(loop_var(g, funcs, d.func, d.vars[0], d.target_is_rvar));
      break;
    case Kind::kRfactorBands: {
      const Halide::Var band(d.vars[3]);
      Halide::Func partial = split_reduction(stage).rfactor(Halide::RVar(d.vars[1]), band);
      partial.compute_root();
      partial.update(0).parallel(band);
      break;
    }
    case Kind::kRfactorLanes: {
      const Halide::Var lane(d.vars[3]);
      Halide::Func partial = split_reduction(stage).rfactor(Halide::RVar(d.vars[2]), lane);
      partial.compute_at(funcs[d.func], Halide::Var(d.vars[4]));
      partial.vectorize(lane);
      partial.update(0).vectorize(lane);
      break;
    }
  }
}

std::string quoted(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string var_source(const std::string &name) { return "Var(" + quoted(name) + ")"; }

// See RVarPosition: the pasted source looks the name up in the generator's own pipeline.
std::string rvar_source(const PipelineGraph &g, int func, const std::string &name) {
  const RVarPosition p = rvar_position(g, func, name);
  return "RVar(f" + std::to_string(func) + ".function().update(" + std::to_string(p.stage - 1) +
         ").schedule().rvars().at(" + std::to_string(p.index) + ").var)";
}

std::string stage_source(const Directive &d) {
  const std::string f = "f" + std::to_string(d.func);
  return d.stage == 0 ? f : f + ".update(" + std::to_string(d.stage - 1) + ")";
}

std::string directive_source(const Directive &d, const PipelineGraph &g) {
  auto loop_source = [&](int func, const std::string &name, bool is_rvar) {
    return is_rvar ? rvar_source(g, func, name) : var_source(name);
  };
  const std::string f = "f" + std::to_string(d.func);
  std::ostringstream os;
  switch (d.kind) {
    case Kind::kComputeInline:
      os << f << ".compute_inline();";
      break;
    case Kind::kComputeRoot:
      os << f << ".compute_root();";
      break;
    case Kind::kStoreRoot:
      os << f << ".store_root();";
      break;
    case Kind::kComputeAt:
    case Kind::kStoreAt:
      os << f << (d.kind == Kind::kComputeAt ? ".compute_at" : ".store_at") << "(LoopLevel(f"
         << d.target_func << ", " << loop_source(d.target_func, d.vars[0], d.target_is_rvar)
         << "));";
      break;
    case Kind::kSplit:
      os << stage_source(d) << ".split(" << var_source(d.vars[0]) << ", "
         << var_source(d.vars[1]) << ", " << var_source(d.vars[2]) << ", " << d.factor
         << ", " << tail_source(d.tail) << ");";
      break;
    case Kind::kStoreOnStack:
      os << f << ".store_in(MemoryType::Stack);";
      break;
    case Kind::kAlignStorage:
      os << f << ".align_storage(" << var_source(d.vars[0]) << ", " << d.factor << ");";
      break;
    case Kind::kReorder:
      os << stage_source(d) << ".reorder(std::vector<VarOrRVar>{";
      for (size_t i = 0; i < d.vars.size(); ++i) {
        os << (i ? ", " : "") << loop_source(d.func, d.vars[i], d.is_rvar[i]);
      }
      os << "});";
      break;
    case Kind::kRename:
      os << stage_source(d) << ".rename(" << var_source(d.vars[0]) << ", "
         << var_source(d.vars[1]) << ");";
      break;
    case Kind::kFuse:
      os << stage_source(d) << ".fuse(" << var_source(d.vars[0]) << ", "
         << var_source(d.vars[1]) << ", " << var_source(d.vars[2]) << ");";
      break;
    case Kind::kParallel:
      os << stage_source(d) << ".parallel(" << var_source(d.vars[0]) << ");";
      break;
    case Kind::kVectorize:
      os << stage_source(d) << ".vectorize(" << var_source(d.vars[0]) << ");";
      break;
    case Kind::kUnroll:
      os << stage_source(d) << ".unroll(" << loop_source(d.func, d.vars[0], d.target_is_rvar)
         << ");";
      break;
    case Kind::kRfactorBands: {
      const std::string outer = "RVar(" + quoted(d.vars[1]) + ")";
      const std::string partial = f + "_s" + std::to_string(d.stage) + "_bands";
      os << "Func " << partial << " = " << stage_source(d) << ".split("
         << rvar_source(g, d.func, d.vars[0]) << ", " << outer << ", RVar(" << quoted(d.vars[2])
         << "), " << d.factor << ", TailStrategy::GuardWithIf).rfactor(" << outer << ", "
         << var_source(d.vars[3]) << "); " << partial << ".compute_root(); " << partial
         << ".update(0).parallel(" << var_source(d.vars[3]) << ");";
      break;
    }
    case Kind::kRfactorLanes: {
      const std::string inner = "RVar(" + quoted(d.vars[2]) + ")";
      const std::string lane = var_source(d.vars[3]);
      const std::string partial = f + "_s" + std::to_string(d.stage) + "_lanes";
      os << "Func " << partial << " = " << stage_source(d) << ".split("
         << rvar_source(g, d.func, d.vars[0]) << ", RVar(" << quoted(d.vars[1]) << "), " << inner
         << ", " << d.factor << ", TailStrategy::GuardWithIf).rfactor(" << inner << ", " << lane
         << "); " << partial << ".compute_at(" << f << ", " << var_source(d.vars[4]) << "); "
         << partial << ".vectorize(" << lane << "); " << partial << ".update(0).vectorize("
         << lane << ");";
      break;
    }
  }
  return os.str();
}

bool is_identifier(const std::string &s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

}  // namespace

void apply_schedule(const ScheduleState &state, Halide::Pipeline &pipeline) {
  require_unscheduled(pipeline);
  const std::vector<Directive> directives = schedule_directives(state);
  std::vector<Halide::Func> funcs = funcs_in_graph_order(pipeline);
  check_same_pipeline(pipeline_signature(state.graph()), pipeline_signature(funcs));
  for (const Directive &d : directives) apply_directive(d, state.graph(), funcs);
}

std::string schedule_source(const ScheduleState &state, const std::string &name) {
  if (!is_identifier(name))
    throw ConfigError("schedule_source: '" + name + "' is not a C++ identifier");
  const PipelineGraph &g = state.graph();
  std::ostringstream os;
  os << "// Schedule found by protuner. Call apply_schedule_" << name
     << "(get_pipeline(), get_target())\n"
     << "// from the generator's schedule() instead of its hand-written schedule.\n"
     << "#pragma once\n\n#include <stdexcept>\n#include <string>\n#include <vector>\n\n"
     << kFuncOrderSource << "\n"
     << "inline void apply_schedule_" << name
     << "(::Halide::Pipeline pipeline, const ::Halide::Target &target) {\n"
     << "  using namespace Halide;\n"
     << "  (void)target;\n"
     << "  std::vector<Internal::Function> outputs;\n"
     << "  for (const Func &o : pipeline.outputs()) outputs.push_back(o.function());\n"
     << "  const auto order = protuner_func_order::funcs_in_order(outputs);\n"
     << "  if (order.size() != " << g.funcs.size() << ") {\n"
     << "    throw std::runtime_error(\"apply_schedule_" << name << ": the schedule is for a "
     << "pipeline of " << g.funcs.size()
     << " Funcs, this one has \" + std::to_string(order.size()));\n"
     << "  }\n";
  for (size_t i = 0; i < g.funcs.size(); ++i) {
    os << "  Func f" << i << "(order[" << i << "]);  // " << stable_func_name(g.funcs[i].name)
       << "\n";
  }
  for (const Directive &d : schedule_directives(state)) os << "  " << directive_source(d, g) << "\n";
  os << "}\n";
  return os.str();
}

}  // namespace protuner
