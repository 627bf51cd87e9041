// Color quantization of a planar float RGB image to a palette of K colors: for every pixel
// the nearest palette entry (squared RGB distance), found by a Tuple-valued argmin reduction
// over an RDom on the palette, written as an index map, plus the recolored image read back
// from the palette through that index. In the corpus for the Tuple argmin, an output computed
// from another output with a data-dependent (clamped) lookup, and constrained dimensions on the
// inputs and the recolored output (set_bounds(0, 3) on channels, (0, K) on the palette).
#include "Halide.h"

namespace protuner_corpus {
namespace {

using namespace Halide;

class PaletteQuantize : public Generator<PaletteQuantize> {
 public:
  GeneratorParam<int> palette_size{"palette_size", 16, 2, 256};

  Input<Buffer<float>> input{"input", 3};
  Input<Buffer<float>> palette{"palette", 2};  // (channel, entry)
  Output<Buffer<uint8_t>> index{"index", 2};
  Output<Buffer<float>> recolored{"recolored", 3};

  void generate() {
    const int K = palette_size;
    RDom k(0, K, "k");
    Expr dr = input(x, y, 0) - palette(0, k);
    Expr dg = input(x, y, 1) - palette(1, k);
    Expr db = input(x, y, 2) - palette(2, k);
    Expr dist = dr * dr + dg * dg + db * db;
    nearest(x, y) = Tuple(cast<uint8_t>(0), Float(32).max());
    nearest(x, y) = Tuple(select(dist < nearest(x, y)[1], cast<uint8_t>(k), nearest(x, y)[0]),
                          min(dist, nearest(x, y)[1]));
    index(x, y) = nearest(x, y)[0];
    recolored(x, y, c) = palette(c, clamp(cast<int>(index(x, y)), 0, K - 1));

    input.dim(2).set_bounds(0, 3);
    palette.dim(0).set_bounds(0, 3);
    palette.dim(1).set_bounds(0, K);
    recolored.dim(2).set_bounds(0, 3);
    input.set_estimates({{0, 1920}, {0, 1080}, {0, 3}});
    palette.set_estimates({{0, 3}, {0, K}});
    index.set_estimates({{0, 1920}, {0, 1080}});
    recolored.set_estimates({{0, 1920}, {0, 1080}, {0, 3}});

    if (!auto_schedule) {
      const int vec = natural_vector_size<float>();
      Var xo{"xo"}, xi{"xi"}, yo{"yo"}, yi{"yi"};
      // The argmin runs per vector of pixels with the palette loop inside, so the running
      // (index, distance) pair stays in registers.
      index.split(y, yo, yi, 16).parallel(yo).split(x, xo, xi, vec).vectorize(xi);
      nearest.compute_at(index, xo).vectorize(x);
      nearest.update().vectorize(x);
      // The recolored planes are a small gather from the palette per pixel.
      recolored.reorder(x, y, c).split(y, yo, yi, 32).parallel(yo).vectorize(x, vec);
    }
  }

 private:
  Var x{"x"}, y{"y"}, c{"c"};
  Func nearest{"nearest"};
};

}  // namespace
}  // namespace protuner_corpus

HALIDE_REGISTER_GENERATOR(protuner_corpus::PaletteQuantize, palette_quantize)
