// Finding scheduling directives on a pipeline's Funcs (unscheduled_check.h).
#include "common/unscheduled_check.h"

#include <Halide.h>

#include <algorithm>
#include <cctype>

#include "common/errors.h"

namespace protuner {
namespace {

namespace HI = Halide::Internal;

// `text` with Func names as the generator's source gives them: Halide appends "$<n>" to
// make the names of a process's Funcs unique.
std::string source_names(const std::string &text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '$' && i + 1 < text.size() &&
        std::isdigit(static_cast<unsigned char>(text[i + 1]))) {
      while (i + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[i + 1]))) ++i;
      continue;
    }
    out += text[i];
  }
  return out;
}

// What one stage's schedule says beyond Halide's defaults, or nullopt: splits, loop types
// other than serial, a loop order other than the definition's, fusion, race or atomic
// overrides, prefetches, specializations.
std::optional<std::string> stage_directive(const HI::Definition &def,
                                           const std::vector<std::string> &args) {
  const HI::StageSchedule &s = def.schedule();
  if (!s.splits().empty()) return "split/tile of " + s.splits().front().old_var;
  for (const HI::Dim &d : s.dims()) {
    if (d.for_type != HI::ForType::Serial) return "a non-serial loop over " + d.var;
  }
  // The default order: the reduction variables innermost (in the RDom's order), then the
  // pure variables in argument order, then the outermost placeholder.
  std::vector<std::string> order;
  for (const HI::ReductionVariable &r : s.rvars()) order.push_back(r.var);
  for (const std::string &a : args) {
    if (std::any_of(s.dims().begin(), s.dims().end(),
                    [&](const HI::Dim &d) { return d.var == a; })) {
      order.push_back(a);
    }
  }
  order.push_back(Halide::Var::outermost().name());
  std::vector<std::string> dims;
  for (const HI::Dim &d : s.dims()) dims.push_back(d.var);
  if (dims != order) return std::string("reorder");
  if (!s.fuse_level().level.is_inlined() || !s.fused_pairs().empty()) return "compute_with";
  if (s.allow_race_conditions()) return std::string("allow_race_conditions");
  if (s.atomic()) return std::string("atomic");
  if (!s.prefetches().empty()) return std::string("prefetch");
  if (!def.specializations().empty()) return std::string("specialize");
  return std::nullopt;
}

std::optional<std::string> function_directive(HI::Function &fn) {
  fn.lock_loop_levels();  // Halide refuses to inspect a loop level before
  const HI::FuncSchedule &s = fn.schedule();
  if (s.compute_level().is_root()) return std::string("compute_root");
  if (!s.compute_level().is_inlined()) return "compute_at " + s.compute_level().to_string();
  if (s.store_level().is_root()) return std::string("store_root");
  if (!s.store_level().is_inlined()) return "store_at " + s.store_level().to_string();
  if (s.memoized()) return std::string("memoize");
  if (s.async()) return std::string("async");
  if (s.memory_type() != Halide::MemoryType::Auto) return std::string("store_in");
  for (const HI::StorageDim &d : s.storage_dims()) {
    if (d.alignment.defined() || d.fold_factor.defined()) return "align/fold storage of " + d.var;
  }
  std::vector<std::string> storage;
  for (const HI::StorageDim &d : s.storage_dims()) storage.push_back(d.var);
  if (storage != fn.args()) return std::string("reorder_storage");
  if (auto d = stage_directive(fn.definition(), fn.args())) return d;
  for (size_t u = 0; u < fn.updates().size(); ++u) {
    std::vector<std::string> args;
    for (const Halide::Expr &e : fn.updates()[u].args()) {
      // A pure variable of the update; a reduction variable in an argument is an rvar.
      const auto *v = e.as<HI::Variable>();
      if (v && !v->reduction_domain.defined()) args.push_back(v->name);
    }
    if (auto d = stage_directive(fn.updates()[u], args)) {
      return "update " + std::to_string(u) + ": " + *d;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> first_scheduling_directive(const Halide::Pipeline &pipeline) {
  std::vector<HI::Function> outputs;
  for (const Halide::Func &f : pipeline.outputs()) outputs.push_back(f.function());
  for (auto &[name, fn] : HI::build_environment(outputs)) {
    if (auto d = function_directive(fn)) return source_names("Func '" + name + "': " + *d);
  }
  return std::nullopt;
}

void require_unscheduled(const Halide::Pipeline &pipeline) {
  if (auto d = first_scheduling_directive(pipeline)) {
    throw ConfigError("the pipeline is already scheduled (" + *d +
                      ") although the generator was built with auto_schedule=true; a generator "
                      "to be autoscheduled applies its own schedule only under "
                      "`if (!auto_schedule)`");
  }
}

}  // namespace protuner
