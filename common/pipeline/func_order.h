// The order protuner numbers a pipeline's Funcs in: consumers first, and producers in the
// order their consumers first call them (a depth-first post-order from the outputs,
// reversed). Unlike Halide's names (anonymous Funcs get process-wide counters) and name-
// sorted maps, this order is the same in every process that builds the same algorithm, so
// a schedule can name Funcs by position. Emitted schedule source carries this file
// verbatim, so user code and protuner find the same Func at the same index.
#ifndef PROTUNER_FUNC_ORDER_H
#define PROTUNER_FUNC_ORDER_H

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "Halide.h"

namespace protuner_func_order {

class CallOrder : public Halide::Internal::IRGraphVisitor {
 public:
  std::vector<std::string> callees;

 private:
  using IRGraphVisitor::visit;
  void visit(const Halide::Internal::Call *op) override {
    IRGraphVisitor::visit(op);
    if (op->call_type == Halide::Internal::Call::Halide &&
        std::find(callees.begin(), callees.end(), op->name) == callees.end()) {
      callees.push_back(op->name);
    }
  }
};

// Producers of `fn`, in the order its definitions first call them.
inline std::vector<std::string> callees_in_order(const Halide::Internal::Function &fn) {
  CallOrder visitor;
  auto visit_def = [&](const Halide::Internal::Definition &def) {
    for (const Halide::Expr &e : def.values()) e.accept(&visitor);
    for (const Halide::Expr &e : def.args()) e.accept(&visitor);
    if (def.predicate().defined()) def.predicate().accept(&visitor);
  };
  visit_def(fn.definition());
  for (const Halide::Internal::Definition &u : fn.updates()) visit_def(u);
  return visitor.callees;
}

// Every Func of the pipeline with `outputs`, consumers first.
inline std::vector<Halide::Internal::Function> funcs_in_order(
    const std::vector<Halide::Internal::Function> &outputs) {
  const std::map<std::string, Halide::Internal::Function> env =
      Halide::Internal::build_environment(outputs);
  std::vector<Halide::Internal::Function> post;
  std::set<std::string> seen;
  std::function<void(const std::string &)> visit = [&](const std::string &name) {
    if (!seen.insert(name).second) return;
    for (const std::string &c : callees_in_order(env.at(name))) {
      if (env.count(c)) visit(c);
    }
    post.push_back(env.at(name));
  };
  for (const Halide::Internal::Function &o : outputs) visit(o.name());
  std::reverse(post.begin(), post.end());
  return post;
}

}  // namespace protuner_func_order

#endif  // PROTUNER_FUNC_ORDER_H
