// Separable Lanczos-3 resize of a planar float RGB image by a runtime scale factor. The
// source coordinates and the normalized six-tap weights of every output column and row come
// from lookup Funcs (src_x, weight_x, src_y, weight_y) evaluated from the scalar input, so
// the pixels read are data dependent and clamped into the input. In the corpus for the
// resampling through LUT Funcs, Func::set_estimate on those LUTs (their domain is the output
// size, which the scheduler cannot infer from a scalar), and a float scalar input.
#include "Halide.h"

namespace protuner_corpus {
namespace {

using namespace Halide;

class LanczosResize : public Generator<LanczosResize> {
 public:
  Input<Buffer<float>> input{"input", 3};
  Input<float> scale{"scale"};
  Output<Buffer<float>> output{"output", 3};

  void generate() {
    const int taps = 6;
    make_lut(src_x, weight_x, x);
    make_lut(src_y, weight_y, y);

    Expr last_x = input.dim(0).max(), last_y = input.dim(1).max();
    Expr first_x = input.dim(0).min(), first_y = input.dim(1).min();
    // Vertical pass first, at the input's width: its rows are data dependent but its columns
    // are not, so a band of output rows needs exactly the input columns.
    Expr sum_y = 0.0f;
    for (int k = 0; k < taps; k++) {
      sum_y += weight_y(y, k) * input(x, clamp(src_y(y) + k, first_y, last_y), c);
    }
    resized_y(x, y, c) = sum_y;
    Expr sum_x = 0.0f;
    for (int k = 0; k < taps; k++) {
      sum_x += weight_x(x, k) * resized_y(clamp(src_x(x) + k, first_x, last_x), y, c);
    }
    output(x, y, c) = sum_x;

    input.set_estimates({{0, 800}, {0, 450}, {0, 3}});
    scale.set_estimate(1.5f);
    output.set_estimates({{0, 1200}, {0, 675}, {0, 3}});
    src_x.set_estimate(x, 0, 1200);
    weight_x.set_estimate(x, 0, 1200).set_estimate(k, 0, taps);
    src_y.set_estimate(y, 0, 675);
    weight_y.set_estimate(y, 0, 675).set_estimate(k, 0, taps);

    if (!auto_schedule) {
      const int vec = natural_vector_size<float>();
      // The LUTs are computed once per run; the weights are stored tap-major per column so
      // a vector of columns loads its weights densely.
      src_x.compute_root().vectorize(x, vec);
      src_y.compute_root();
      weight_x.compute_root().reorder(k, x).unroll(k).vectorize(x, vec);
      weight_y.compute_root();
      // Bands of 32 output rows (per channel) in parallel; the vertical pass for a band
      // covers its rows at the input's width.
      Var yo{"yo"}, yi{"yi"}, band{"band"};
      output.split(y, yo, yi, 32)
          .reorder(x, yi, yo, c)
          .fuse(yo, c, band)
          .parallel(band)
          .vectorize(x, vec);
      resized_y.compute_at(output, band).vectorize(x, vec);
    }
  }

 private:
  Var x{"x"}, y{"y"}, c{"c"}, k{"k"};
  Func src_x{"src_x"}, weight_x{"weight_x"}, src_y{"src_y"}, weight_y{"weight_y"};
  Func resized_y{"resized_y"};

  static Expr lanczos3(Expr t) {
    const float pi = 3.14159265358979f;
    Expr pt = pi * t;
    Expr v = 3.0f * sin(pt) * sin(pt * (1.0f / 3.0f)) / max(pt * pt, 1e-12f);
    return select(abs(t) < 1e-4f, 1.0f, abs(t) < 3.0f, v, 0.0f);
  }

  // For output coordinate v: the first of six source taps, and the normalized weights.
  void make_lut(Func &src, Func &weight, Var v) {
    Expr centre = (cast<float>(v) + 0.5f) / scale - 0.5f;
    Expr first = cast<int>(floor(centre)) - 2;
    src(v) = first;
    Func raw("raw_" + weight.name());
    raw(v, k) = lanczos3(centre - cast<float>(first + k));
    Expr total = 0.0f;
    for (int j = 0; j < 6; j++) total += raw(v, j);
    weight(v, k) = raw(v, k) / total;
  }
};

}  // namespace
}  // namespace protuner_corpus

HALIDE_REGISTER_GENERATOR(protuner_corpus::LanczosResize, lanczos_resize)
