// Tone mapping of a high-bit-depth planar RGB image to 8 bits through per-channel lookup
// tables: exposure gain, a gamma curve and a filmic shoulder, tabulated for every code value of
// the input type and indexed by pixel value. In the corpus for its type-changing
// GeneratorParam (pixel_type sets the input's element type in configure(), and with it the LUT
// size), the LUT whose domain is data dependent (Func::set_estimate on it), and channel
// constraints (dim(2).set_bounds(0, 3)) on the input and the output.
#include "Halide.h"

namespace protuner_corpus {
namespace {

using namespace Halide;

class ToneCurve : public Generator<ToneCurve> {
 public:
  GeneratorParam<Type> pixel_type{"pixel_type", UInt(16)};

  Input<Buffer<>> input{"input", 3};
  Input<float> exposure{"exposure"};
  Input<float> gamma{"gamma"};
  Output<Buffer<uint8_t>> output{"output", 3};

  void configure() {
    Type t = pixel_type;
    if (!(t.is_uint() && t.bits() <= 16)) {
      throw CompileError("tone_curve: pixel_type must be uint8 or uint16");
    }
    input.set_type(t);
  }

  void generate() {
    Type t = pixel_type;
    const int levels = 1 << t.bits();
    // Slightly different white balance per channel, as a camera profile would have.
    Expr gain = exposure * mux(c, {1.08f, 1.0f, 0.93f});
    Expr v = cast<float>(i) * (gain / float(levels - 1));
    Expr curved = pow(max(v, 0.0f), 1.0f / gamma);
    Expr shoulder = curved / (1.0f + 0.25f * curved) * 1.25f;
    lut(i, c) = cast<uint8_t>(clamp(shoulder * 255.0f + 0.5f, 0.0f, 255.0f));

    output(x, y, c) = lut(clamp(cast<int>(input(x, y, c)), 0, levels - 1), c);

    input.dim(2).set_bounds(0, 3);
    output.dim(2).set_bounds(0, 3);
    input.set_estimates({{0, 2048}, {0, 1536}, {0, 3}});
    exposure.set_estimate(1.5f);
    gamma.set_estimate(2.2f);
    output.set_estimates({{0, 2048}, {0, 1536}, {0, 3}});
    lut.set_estimate(i, 0, levels).set_estimate(c, 0, 3);

    if (!auto_schedule) {
      const int vec = natural_vector_size<float>();
      // The table is computed once per run (levels x 3 pow calls), in parallel chunks.
      Var io{"io"}, ii{"ii"};
      lut.compute_root()
          .split(i, io, ii, std::min(levels, 4096))
          .parallel(io)
          .vectorize(ii, vec);
      // The mapping is a gather per pixel: bands of rows, all channels, in parallel.
      Var yo{"yo"}, yi{"yi"}, band{"band"};
      output.split(y, yo, yi, 64)
          .reorder(x, yi, yo, c)
          .fuse(yo, c, band)
          .parallel(band)
          .vectorize(x, vec);
    }
  }

 private:
  Var x{"x"}, y{"y"}, c{"c"}, i{"i"};
  Func lut{"lut"};
};

}  // namespace
}  // namespace protuner_corpus

HALIDE_REGISTER_GENERATOR(protuner_corpus::ToneCurve, tone_curve)
