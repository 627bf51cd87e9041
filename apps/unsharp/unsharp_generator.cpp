// unsharp: unsharp masking of an RGB image. The luminance is sharpened against its Gaussian
// blur and the colour is scaled by the same ratio. It is in the suite as a short, cheap
// stencil pipeline where the gain comes from fusing the blur into the pointwise stages.
#include "Halide.h"

#include <cmath>
#include <vector>

namespace protuner_apps {
namespace {

using namespace Halide;

class Unsharp : public Generator<Unsharp> {
 public:
  GeneratorParam<float> sigma{"sigma", 1.5f};

  // Planar RGB: input(x, y, c).
  Input<Buffer<float>> input{"input", 3};
  // How much of the detail layer (gray - blur) is added back.
  Input<float> strength{"strength"};
  Output<Buffer<float>> output{"output", 3};

  void generate() {
    Func clamped = BoundaryConditions::repeat_edge(
        input,
        {{input.dim(0).min(), input.dim(0).extent()}, {input.dim(1).min(), input.dim(1).extent()}});
    gray(x, y) = 0.299f * clamped(x, y, 0) + 0.587f * clamped(x, y, 1) + 0.114f * clamped(x, y, 2);

    const std::vector<float> w = gaussian_weights();
    const int radius = (int)w.size() / 2;
    Expr sum_y = 0.0f;
    for (int i = -radius; i <= radius; i++) {
      sum_y += w[i + radius] * gray(x, y + i);
    }
    blur_y(x, y) = sum_y;
    Expr sum_x = 0.0f;
    for (int i = -radius; i <= radius; i++) {
      sum_x += w[i + radius] * blur_y(x + i, y);
    }
    blur_x(x, y) = sum_x;

    Expr sharpened = gray(x, y) + (gray(x, y) - blur_x(x, y)) * strength;
    // The floor keeps black pixels finite; they stay black whatever the ratio.
    ratio(x, y) = sharpened / max(gray(x, y), 1e-6f);
    output(x, y, c) = ratio(x, y) * input(x, y, c);
  }

  void schedule() {
    // 1536x2560 RGB, the image size of the Halide autoscheduler papers.
    input.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});
    strength.set_estimate(1.0f);
    output.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});
    if (!auto_schedule) {
      schedule_expert();
    }
  }

 private:
  Var x{"x"}, y{"y"}, c{"c"};
  Func gray{"gray"}, blur_y{"blur_y"}, blur_x{"blur_x"}, ratio{"ratio"};

  // A normalized 9-tap Gaussian: +-4 pixels covers +-2.7 sigma at the default sigma.
  std::vector<float> gaussian_weights() const {
    const int radius = 4;
    const float s = sigma;
    std::vector<float> w(2 * radius + 1);
    float total = 0.0f;
    for (int i = -radius; i <= radius; i++) {
      w[i + radius] = std::exp(-(float)(i * i) / (2.0f * s * s));
      total += w[i + radius];
    }
    for (float &v : w) {
      v /= total;
    }
    return w;
  }

  void schedule_expert() {
    const int vec = natural_vector_size<float>();
    Var yo{"yo"}, yi{"yi"};
    // Strips of 16 rows keep the strip's intermediates (~0.3 MB) in L2; the 8-row blur
    // halo recomputes half of gray, which is cheaper than sliding-window row ordering
    // or taller strips here.
    output.split(y, yo, yi, 16, TailStrategy::GuardWithIf)
        .reorder(x, yi, c, yo)
        .parallel(yo)
        .vectorize(x, vec);
    gray.compute_at(output, yo).vectorize(x, vec);
    blur_y.compute_at(output, yo).vectorize(x, vec);
    ratio.compute_at(output, yo).vectorize(x, vec);
  }
};

}  // namespace
}  // namespace protuner_apps

HALIDE_REGISTER_GENERATOR(protuner_apps::Unsharp, unsharp)
