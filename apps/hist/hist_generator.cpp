// Histogram equalization of the luma of an RGB image. It is in the suite because it mixes a
// whole-image reduction (the histogram), a serial scan (the CDF) and a data-dependent
// lookup, so a good schedule has to parallelize a reduction, which needs rfactor.
#include "Halide.h"

namespace protuner_apps {
namespace {

using namespace Halide;

class Hist : public Generator<Hist> {
 public:

  Input<Buffer<uint8_t>> input{"input", 3};
  Output<Buffer<uint8_t>> output{"output", 3};

  void generate() {
    Expr r = cast<float>(input(x, y, 0));
    Expr g = cast<float>(input(x, y, 1));
    Expr b = cast<float>(input(x, y, 2));
    // Full-range BT.601 YCbCr.
    Y(x, y) = 0.299f * r + 0.587f * g + 0.114f * b;
    U(x, y) = -0.168736f * r - 0.331264f * g + 0.5f * b;
    V(x, y) = 0.5f * r - 0.418688f * g - 0.081312f * b;
    bin(x, y) = cast<uint8_t>(clamp(Y(x, y) + 0.5f, 0.0f, 255.0f));

    // The histogram always covers the whole input, whatever output region is asked for.
    pixels = RDom(0, input.width(), 0, input.height());
    hist(i) = 0;
    hist(bin(pixels.x, pixels.y)) += 1;

    RDom bins(1, 255);
    cdf(i) = hist(0);
    cdf(bins) = cdf(bins - 1) + hist(bins);

    Expr pixel_count = cast<float>(input.width() * input.height());
    Expr equalized_y = cast<float>(cdf(bin(x, y))) * 255.0f / pixel_count;
    Expr u = U(x, y), v = V(x, y);
    Expr rgb = mux(c, {equalized_y + 1.402f * v, equalized_y - 0.344136f * u - 0.714136f * v,
                       equalized_y + 1.772f * u});
    output(x, y, c) = cast<uint8_t>(clamp(rgb + 0.5f, 0.0f, 255.0f));

    // 1536x2560 as in the Halide autoscheduler papers (Adams 2019, Anderson 2021).
    input.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});
    output.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});
  }

  void schedule() {
    if (!auto_schedule) {
      schedule_histogram();
      cdf.compute_root();
      // The colour conversion reads all three channels of a pixel, so the channel
      // loop goes innermost and is unrolled to share the loads.
      const int vec = natural_vector_size<float>();
      Var yo{"yo"}, yi{"yi"};
      output.reorder(c, x, y)
          .bound(c, 0, 3)
          .unroll(c)
          .split(y, yo, yi, 32)
          .parallel(yo)
          .vectorize(x, vec);
    }
  }

 private:
  Var x{"x"}, y{"y"}, c{"c"}, i{"i"};
  Func Y{"Y"}, U{"U"}, V{"V"}, bin{"bin"};
  Func hist{"hist"}, cdf{"cdf"};
  RDom pixels;

  // Each band of rows counts into its own histogram (the counts are integers, so the
  // merge is exact); the bands run in parallel and the merge is vectorized over bins.
  // The bins of a row are computed vectorized before the scalar scatter into the counts.
  void schedule_histogram() {
    const int vec = natural_vector_size<int>();
    RVar ry_outer{"ry_outer"}, ry_inner{"ry_inner"};
    Var band{"band"};
    Func partial = hist.update().split(pixels.y, ry_outer, ry_inner, 64).rfactor(ry_outer, band);
    partial.compute_root().vectorize(i, vec);
    partial.update().parallel(band);
    bin.in(partial).compute_at(partial, ry_inner).vectorize(x, natural_vector_size<float>());
    hist.compute_root().vectorize(i, vec);
    hist.update().vectorize(i, vec);
  }
};

}  // namespace
}  // namespace protuner_apps

HALIDE_REGISTER_GENERATOR(protuner_apps::Hist, hist)
