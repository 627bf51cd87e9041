// A four-level Gaussian pyramid of a float image: each level is the previous one blurred with
// a separable 5-tap binomial kernel and decimated 2x, with edges repeated at every level. In
// the corpus for its several outputs (one Output per level, each consumed by the next), the
// 2x downsample chain with stride-2 reads, and BoundaryConditions::repeat_edge on a Func
// with symbolic bounds.
#include "Halide.h"

namespace protuner_corpus {
namespace {

using namespace Halide;

class GaussianPyramid : public Generator<GaussianPyramid> {
 public:
  Input<Buffer<float>> input{"input", 2};
  Output<Buffer<float>> level1{"level1", 2};
  Output<Buffer<float>> level2{"level2", 2};
  Output<Buffer<float>> level3{"level3", 2};
  Output<Buffer<float>> level4{"level4", 2};

  void generate() {
    Expr w = input.dim(0).extent(), h = input.dim(1).extent();
    Func padded0 = BoundaryConditions::repeat_edge(input);
    downsample(padded0, level1, 0);
    Func padded1 = BoundaryConditions::repeat_edge(level1, {{0, w / 2}, {0, h / 2}});
    downsample(padded1, level2, 1);
    Func padded2 = BoundaryConditions::repeat_edge(level2, {{0, w / 4}, {0, h / 4}});
    downsample(padded2, level3, 2);
    Func padded3 = BoundaryConditions::repeat_edge(level3, {{0, w / 8}, {0, h / 8}});
    downsample(padded3, level4, 3);

    const int W = 2048, H = 2048;
    input.set_estimates({{0, W}, {0, H}});
    level1.set_estimates({{0, W / 2}, {0, H / 2}});
    level2.set_estimates({{0, W / 4}, {0, H / 4}});
    level3.set_estimates({{0, W / 8}, {0, H / 8}});
    level4.set_estimates({{0, W / 16}, {0, H / 16}});

    if (!auto_schedule) {
      const int vec = natural_vector_size<float>();
      Func levels[4] = {level1, level2, level3, level4};
      const int rows[4] = {16, 16, 8, 8};
      for (int k = 0; k < 4; k++) {
        // Bands of output rows in parallel; the horizontal pass for a band (its rows at
        // full resolution plus the halo) is computed inside the band.
        Var yo{"yo"}, yi{"yi"};
        levels[k].split(y, yo, yi, rows[k]).parallel(yo).vectorize(x, vec);
        blur_x[k].compute_at(levels[k], yo).vectorize(x, vec);
      }
    }
  }

 private:
  Var x{"x"}, y{"y"};
  Func blur_x[4];

  void downsample(Func in, Func out, int k) {
    blur_x[k] = Func("blur_x_" + std::to_string(k + 1));
    blur_x[k](x, y) = (in(2 * x - 2, y) + 4.0f * in(2 * x - 1, y) + 6.0f * in(2 * x, y) +
                       4.0f * in(2 * x + 1, y) + in(2 * x + 2, y)) * (1.0f / 16.0f);
    out(x, y) = (blur_x[k](x, 2 * y - 2) + 4.0f * blur_x[k](x, 2 * y - 1) +
                 6.0f * blur_x[k](x, 2 * y) + 4.0f * blur_x[k](x, 2 * y + 1) +
                 blur_x[k](x, 2 * y + 2)) * (1.0f / 16.0f);
  }
};

}  // namespace
}  // namespace protuner_corpus

HALIDE_REGISTER_GENERATOR(protuner_corpus::GaussianPyramid, gaussian_pyramid)
