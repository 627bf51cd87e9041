// Canny-style thin edges on a grayscale uint8 image: separable Sobel gradients, an L1
// gradient magnitude, non-maximum suppression along one of four quantized directions and a
// threshold. In the corpus because it has NO boundary condition: the input is estimated at
// min 0 and the output at min 2, inside it, so the 5x5 footprint stays in the input; it also
// mixes int16 stencils with data-dependent selects and a scalar input.
#include "Halide.h"

namespace protuner_corpus {
namespace {

using namespace Halide;

class EdgeNms : public Generator<EdgeNms> {
 public:
  Input<Buffer<uint8_t>> input{"input", 2};
  Input<uint16_t> threshold{"threshold"};
  Output<Buffer<uint8_t>> output{"output", 2};

  void generate() {
    in16(x, y) = cast<int16_t>(input(x, y));

    // Sobel, separated: a difference across x smoothed over y, and vice versa.
    diff_x(x, y) = in16(x + 1, y) - in16(x - 1, y);
    smooth_x(x, y) = in16(x - 1, y) + 2 * in16(x, y) + in16(x + 1, y);
    grad(x, y) = {diff_x(x, y - 1) + 2 * diff_x(x, y) + diff_x(x, y + 1),
                  smooth_x(x, y + 1) - smooth_x(x, y - 1)};

    Expr gx = grad(x, y)[0], gy = grad(x, y)[1];
    Expr ax = cast<uint16_t>(abs(gx)), ay = cast<uint16_t>(abs(gy));
    mag(x, y) = ax + ay;
    // 0: gradient along x, 1: along y, 2: along the main diagonal, 3: the anti-diagonal.
    dir(x, y) = cast<uint8_t>(select(ay * 5 < ax * 2, 0,
                                     ax * 5 < ay * 2, 1,
                                     (gx > 0) == (gy > 0), 2, 3));

    Expr d = dir(x, y);
    Expr m = mag(x, y);
    Expr before = select(d == 0, mag(x - 1, y), d == 1, mag(x, y - 1),
                         d == 2, mag(x - 1, y - 1), mag(x + 1, y - 1));
    Expr after = select(d == 0, mag(x + 1, y), d == 1, mag(x, y + 1),
                        d == 2, mag(x + 1, y + 1), mag(x - 1, y + 1));
    Expr keep = m > threshold && m >= before && m > after;
    output(x, y) = select(keep, cast<uint8_t>(min(m / 8, 255)), cast<uint8_t>(0));

    input.set_estimates({{0, 1536}, {0, 2560}});
    threshold.set_estimate(96);
    output.set_estimates({{2, 1532}, {2, 2556}});

    if (!auto_schedule) {
      const int vec = natural_vector_size<int16_t>();
      Var xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"}, tile{"tile"};
      // Tiles in parallel, small enough that each producer's scratch stays in L1/L2. The
      // magnitude and its producers are computed per tile (a one- or two-pixel halo); the
      // direction is computed per output row of the tile.
      output.tile(x, y, xo, yo, xi, yi, 256, 32)
          .fuse(xo, yo, tile)
          .parallel(tile)
          .vectorize(xi, vec);
      mag.compute_at(output, tile).vectorize(x, vec);
      dir.compute_at(output, yi).vectorize(x, vec);
      grad.compute_at(output, tile).vectorize(x, vec);
      diff_x.compute_at(output, tile).vectorize(x, vec);
      smooth_x.compute_at(output, tile).vectorize(x, vec);
    }
  }

 private:
  Var x{"x"}, y{"y"};
  Func in16{"in16"}, diff_x{"diff_x"}, smooth_x{"smooth_x"}, grad{"grad"}, mag{"mag"},
      dir{"dir"};
};

}  // namespace
}  // namespace protuner_corpus

HALIDE_REGISTER_GENERATOR(protuner_corpus::EdgeNms, edge_nms)
