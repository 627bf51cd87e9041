// Conversion of a planar uint8 RGB image to float HSV (hue, saturation, value in [0, 1)),
// with a saturation gain applied in HSV space. In the corpus for its buffer constraints: the
// channel dimension of the input and of the output is fixed by dim(2).set_bounds(0, 3), and the
// estimates agree with it, so a scheduler must take the constraint (not its own guess) as the
// extent. It also has a Tuple-valued intermediate (h, s, v) shared by the three output planes.
#include "Halide.h"

namespace protuner_corpus {
namespace {

using namespace Halide;

class RgbToHsv : public Generator<RgbToHsv> {
 public:
  Input<Buffer<uint8_t>> input{"input", 3};
  Input<float> saturation_gain{"saturation_gain"};
  Output<Buffer<float>> output{"output", 3};

  void generate() {
    Expr r = cast<float>(input(x, y, 0)) * (1.0f / 255.0f);
    Expr g = cast<float>(input(x, y, 1)) * (1.0f / 255.0f);
    Expr b = cast<float>(input(x, y, 2)) * (1.0f / 255.0f);
    Expr mx = max(r, g, b), mn = min(r, g, b);
    Expr delta = mx - mn;
    Expr safe = max(delta, 1e-6f);
    Expr sector = select(mx == r, (g - b) / safe,
                         mx == g, (b - r) / safe + 2.0f,
                         (r - g) / safe + 4.0f);
    Expr hue = select(delta <= 0.0f, 0.0f, sector * (1.0f / 6.0f));
    hue = select(hue < 0.0f, hue + 1.0f, hue);
    Expr sat = select(mx > 0.0f, delta / max(mx, 1e-6f), 0.0f);
    hsv(x, y) = Tuple(hue, clamp(sat * saturation_gain, 0.0f, 1.0f), mx);

    output(x, y, c) = mux(c, {hsv(x, y)[0], hsv(x, y)[1], hsv(x, y)[2]});

    input.dim(2).set_bounds(0, 3);
    output.dim(2).set_bounds(0, 3);
    input.set_estimates({{0, 1920}, {0, 1080}, {0, 3}});
    saturation_gain.set_estimate(1.25f);
    output.set_estimates({{0, 1920}, {0, 1080}, {0, 3}});

    if (!auto_schedule) {
      const int vec = natural_vector_size<float>();
      Var xo{"xo"}, xi{"xi"}, yo{"yo"}, yi{"yi"};
      // One vector of (h, s, v) per output vector, stored to the three planes in turn.
      output.split(x, xo, xi, vec)
          .reorder(xi, c, xo, y)
          .vectorize(xi)
          .unroll(c)
          .split(y, yo, yi, 32)
          .parallel(yo);
      hsv.compute_at(output, xo).vectorize(x);
    }
  }

 private:
  Var x{"x"}, y{"y"}, c{"c"};
  Func hsv{"hsv"};
};

}  // namespace
}  // namespace protuner_corpus

HALIDE_REGISTER_GENERATOR(protuner_corpus::RgbToHsv, rgb_to_hsv)
