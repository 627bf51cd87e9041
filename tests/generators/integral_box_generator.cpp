// A box filter of a grayscale uint8 image through its integral image: two scans (an RDom over
// x for the row prefix sums, then over y for the column sums), then four lookups per output
// pixel. In the corpus for its scan update stages whose RDoms span the input, a radius
// GeneratorParam, and estimates with NON-ZERO mins and no boundary condition: the output
// starts radius + 1 pixels inside the input, so every corner lookup stays inside.
#include "Halide.h"

namespace protuner_corpus {
namespace {

using namespace Halide;

class IntegralBox : public Generator<IntegralBox> {
 public:
  GeneratorParam<int> radius{"radius", 7, 1, 64};

  Input<Buffer<uint8_t>> input{"input", 2};
  Output<Buffer<uint8_t>> output{"output", 2};

  void generate() {
    Expr x0 = input.dim(0).min(), y0 = input.dim(1).min();
    RDom rx(x0 + 1, input.dim(0).extent() - 1, "rx");
    RDom ry(y0 + 1, input.dim(1).extent() - 1, "ry");
    row_sum(x, y) = cast<int32_t>(input(x, y));
    row_sum(rx, y) += row_sum(rx - 1, y);
    integral(x, y) = row_sum(x, y);
    integral(x, ry) += integral(x, ry - 1);

    const int r = radius;
    Expr total = integral(x + r, y + r) - integral(x - r - 1, y + r) -
                 integral(x + r, y - r - 1) + integral(x - r - 1, y - r - 1);
    const int area = (2 * r + 1) * (2 * r + 1);
    output(x, y) = cast<uint8_t>((total + area / 2) / area);

    const int W = 1536, H = 1536;
    input.set_estimates({{0, W}, {0, H}});
    output.set_estimates({{r + 1, W - 2 * r - 1}, {r + 1, H - 2 * r - 1}});

    if (!auto_schedule) {
      const int vec = natural_vector_size<int32_t>();
      Var xo{"xo"}, xi{"xi"}, yo{"yo"}, yi{"yi"};
      // Row scan: one row at a time into a small scratch buffer (the widening copy is
      // vectorized, the scan serial along x), rows in parallel, each copied into the
      // integral image; only one full-size buffer is allocated.
      row_sum.compute_at(integral, y).vectorize(x, vec);
      row_sum.update().unscheduled();
      // Column scan: vectors of columns, serial along y, column blocks in parallel.
      integral.compute_root().parallel(y).vectorize(x, vec);
      integral.update()
          .split(x, xo, xi, vec * 8, TailStrategy::GuardWithIf)
          .parallel(xo)
          .vectorize(xi, vec);
      output.split(y, yo, yi, 64).parallel(yo).vectorize(x, vec);
    }
  }

 private:
  Var x{"x"}, y{"y"};
  Func row_sum{"row_sum"}, integral{"integral"};
};

}  // namespace
}  // namespace protuner_corpus

HALIDE_REGISTER_GENERATOR(protuner_corpus::IntegralBox, integral_box)
