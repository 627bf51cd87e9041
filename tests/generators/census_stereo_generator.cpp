// Stereo disparity by census-transform block matching: a 5x5 census signature per pixel of
// each image, Hamming costs per candidate disparity, a 5x5 box aggregation, and a winner-take-
// all argmin over disparities kept in a Tuple (best disparity, best cost). In the corpus for
// the Tuple-valued reduction over an RDom, popcount on bit strings, and estimates with NON-ZERO
// mins and no boundary condition: the output starts max_disparity + 4 pixels inside the inputs.
#include "Halide.h"

namespace protuner_corpus {
namespace {

using namespace Halide;

class CensusStereo : public Generator<CensusStereo> {
 public:
  GeneratorParam<int> max_disparity{"max_disparity", 32, 1, 64};

  Input<Buffer<uint8_t>> left{"left", 2};
  Input<Buffer<uint8_t>> right{"right", 2};
  Output<Buffer<uint8_t>> disparity{"disparity", 2};

  void generate() {
    census_l = census(left, "census_l");
    census_r = census(right, "census_r");

    // Hamming distance of the signatures, left pixel x against right pixel x - d.
    cost(x, y, d) = cast<uint16_t>(popcount(census_l(x, y) ^ census_r(x - d, y)));
    cost_x(x, y, d) = cost(x - 2, y, d) + cost(x - 1, y, d) + cost(x, y, d) +
                      cost(x + 1, y, d) + cost(x + 2, y, d);
    cost_box(x, y, d) = cost_x(x, y - 2, d) + cost_x(x, y - 1, d) + cost_x(x, y, d) +
                        cost_x(x, y + 1, d) + cost_x(x, y + 2, d);

    RDom r(0, max_disparity, "r");
    best(x, y) = Tuple(cast<uint8_t>(0), cast<uint16_t>(65535));
    Expr c = cost_box(x, y, r);
    best(x, y) = Tuple(select(c < best(x, y)[1], cast<uint8_t>(r), best(x, y)[0]),
                       min(c, best(x, y)[1]));
    disparity(x, y) = best(x, y)[0];

    const int margin = 4;  // two for the census window, two for the aggregation window
    left.set_estimates({{0, 640}, {0, 480}});
    right.set_estimates({{0, 640}, {0, 480}});
    disparity.set_estimates({{margin + max_disparity - 1, 640 - 2 * margin - max_disparity + 1},
                             {margin, 480 - 2 * margin}});

    if (!auto_schedule) {
      const int vec = natural_vector_size<uint16_t>();
      Var xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"}, tile{"tile"};
      // Tiles of the disparity map in parallel. Per tile: both census images (with halo), and
      // the Hamming costs and their x aggregation; the y aggregation and the argmin run per vector of
      // output pixels, disparities serial inside, so the running Tuple stays in registers.
      disparity.tile(x, y, xo, yo, xi, yi, 128, 16)
          .fuse(xo, yo, tile)
          .parallel(tile)
          .vectorize(xi, vec);
      best.compute_at(disparity, xi).vectorize(x);
      best.update().vectorize(x);
      cost_x.compute_at(disparity, tile).reorder(x, d, y).vectorize(x, vec);
      cost.compute_at(disparity, tile).reorder(x, d, y).vectorize(x, vec);
      census_l.compute_at(disparity, tile).vectorize(x, vec);
      census_r.compute_at(disparity, tile).vectorize(x, vec);
    }
  }

 private:
  Var x{"x"}, y{"y"}, d{"d"};
  Func census_l, census_r;
  Func cost{"cost"}, cost_x{"cost_x"}, cost_box{"cost_box"}, best{"best"};

  // 24 bits: is each neighbour in the 5x5 window brighter than the centre?
  Func census(Input<Buffer<uint8_t>> &img, const std::string &name) {
    Func f(name);
    Expr bits = cast<uint32_t>(0);
    int bit = 0;
    for (int j = -2; j <= 2; j++) {
      for (int i = -2; i <= 2; i++) {
        if (i == 0 && j == 0) continue;
        bits = bits | select(img(x + i, y + j) > img(x, y), cast<uint32_t>(1) << bit, cast<uint32_t>(0));
        bit++;
      }
    }
    f(x, y) = bits;
    return f;
  }
};

}  // namespace
}  // namespace protuner_corpus

HALIDE_REGISTER_GENERATOR(protuner_corpus::CensusStereo, census_stereo)
