// stencil_chain: a chain of 5x5 stencils over a 16-bit image, each stage reading the previous
// one. It is in the suite because its long producer-consumer chain makes the fusion choice
// (how many stages to compute together, over which tiles) the whole schedule.
#include "Halide.h"

#include <vector>

namespace protuner_apps {
namespace {

using namespace Halide;

class StencilChain : public Generator<StencilChain> {
 public:
  GeneratorParam<int> stages{"stages", 32};

  Input<Buffer<uint16_t>> input{"input", 2};
  Output<Buffer<uint16_t>> output{"output", 2};

  void generate() {
    clamped = BoundaryConditions::repeat_edge(input);
    Func prev = clamped;
    for (int s = 0; s < stages; s++) {
      Func stage("stage_" + std::to_string(s));
      stage(x, y) = smooth(prev);
      chain.push_back(stage);
      prev = stage;
    }
    output(x, y) = prev(x, y);
  }

  void schedule() {
    // 1536x2560, the image size of the Halide autoscheduler papers.
    input.set_estimates({{0, 1536}, {0, 2560}});
    output.set_estimates({{0, 1536}, {0, 2560}});
    if (!auto_schedule) {
      schedule_expert();
    }
  }

 private:
  Var x{"x"}, y{"y"}, yo{"yo"}, yi{"yi"};
  Func clamped;
  std::vector<Func> chain;

  // A 5x5 binomial weighting (outer product of 1 4 6 4 1, total 256), rounded back to 16
  // bits. It is written as one 25-tap stencil, not separably, as in the benchmark.
  Expr smooth(Func in) const {
    const int b[5] = {1, 4, 6, 4, 1};
    Expr sum = cast<uint32_t>(0);
    for (int j = -2; j <= 2; j++) {
      for (int i = -2; i <= 2; i++) {
        sum += cast<uint32_t>(in(x + i, y + j)) * (b[i + 2] * b[j + 2]);
      }
    }
    return cast<uint16_t>((sum + 128) >> 8);
  }

  void schedule_expert() {
    const int vec = natural_vector_size<uint16_t>();
    // Each stage is compute-bound (25 widening multiply-adds per pixel) and a whole
    // 16-bit stage (7.5 MB) stays in L3, so every stage is computed over the full image
    // in parallel row strips. Fusing stages with sliding windows over row strips, all 32
    // or in groups of 8, runs slower: the halo warm-up and folded-storage indexing cost
    // more than the memory traffic they save.
    // The last stage is inlined into the output rather than copied.
    for (size_t s = 0; s + 1 < chain.size(); s++) {
      schedule_strips(chain[s].compute_root(), vec);
    }
    schedule_strips(output, vec);
    // Clamping inside the first stage costs 25 clamped loads per pixel; a staged copy
    // per strip clamps each input pixel once.
    Func first = chain.size() > 1 ? chain[0] : output;
    clamped.compute_at(first, yo).vectorize(clamped.args()[0], vec);
  }

  void schedule_strips(Func f, int vec) {
    f.split(y, yo, yi, 64, TailStrategy::GuardWithIf).parallel(yo).vectorize(x, vec);
  }
};

}  // namespace
}  // namespace protuner_apps

HALIDE_REGISTER_GENERATOR(protuner_apps::StencilChain, stencil_chain)
