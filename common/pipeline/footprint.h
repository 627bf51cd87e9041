// The footprint relation of one producer-consumer edge: the region of the producer that a
// consumer stage needs, as a function of the region its loops cover. Derived once,
// symbolically, with Halide's bounds machinery (boxes_required), then compiled to
// BoundExprs so the search evaluates it on concrete regions without touching Halide.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/pipeline/bound_expr.h"
#include "common/pipeline/region.h"

namespace protuner {

class Footprint {
 public:
  Footprint(std::string producer, std::vector<std::optional<BoundExpr>> min,
            std::vector<std::optional<BoundExpr>> max)
      : producer_(std::move(producer)), min_(std::move(min)), max_(std::move(max)) {}

  const std::string &producer() const { return producer_; }
  int dimensions() const { return static_cast<int>(min_.size()); }
  // True when every bound of every dimension was derived (no fallback needed).
  bool exact() const;

  // The producer region needed when the consumer stage's loop variables cover `loops`
  // (one Span per stage loop variable, in StageNode::loop_vars order). A dimension whose
  // bound could not be derived (data-dependent access) takes `whole`'s span there.
  Region eval(const Region &loops, const Region &whole) const;

 private:
  std::string producer_;
  std::vector<std::optional<BoundExpr>> min_, max_;
};

}  // namespace protuner
