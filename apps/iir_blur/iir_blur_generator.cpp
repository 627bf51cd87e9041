// First-order recursive (IIR) blur, run forwards and backwards down the columns, then the
// same along the rows by blurring the columns of the transposed image. It is in the suite
// because its stages are serial scans: parallelism and vectors must come from the
// dimension that is not scanned, and the transposes make memory layout matter.
#include "Halide.h"

namespace protuner_apps {
namespace {

using namespace Halide;

class IirBlur : public Generator<IirBlur> {
 public:

  Input<Buffer<float>> input{"input", 3};
  // Weight of the new sample in each step; smaller values blur more.
  Input<float> alpha{"alpha"};
  Output<Buffer<float>> output{"output", 3};

  void generate() {
    // Every stage scans whole columns, so the results are exact for any output crop.
    blur_cols(input, input.height(), blurred_cols);
    transposed(x, y, c) = blurred_cols(y, x, c);
    blur_cols(transposed, input.width(), blurred_rows);
    output(x, y, c) = blurred_rows(y, x, c);

    // 1536x2560 as in the Halide autoscheduler papers (Adams 2019, Anderson 2021).
    input.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});
    alpha.set_estimate(0.1f);
    output.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});
  }

  void schedule() {
    if (!auto_schedule) {
      schedule_pass(transposed, blurred_cols);
      schedule_pass(output, blurred_rows);
    }
  }

 private:
  Var x{"x"}, y{"y"}, c{"c"};
  Func blurred_cols{"blurred_cols"}, transposed{"transposed"}, blurred_rows{"blurred_rows"};

  // Blurs each column of `in` (rows 0 .. height-1) down, then blurs the result up in
  // place: the upward step at row y reads row y + 1, already final, and row y, still
  // holding the downward result.
  void blur_cols(Func in, Expr height, Func blurred) {
    RDom down(1, height - 1);
    RDom up(1, height - 1);
    Expr y_up = height - 1 - up;
    blurred(x, y, c) = in(x, y, c);
    blurred(x, down, c) = (1.0f - alpha) * blurred(x, down - 1, c) + alpha * in(x, down, c);
    blurred(x, y_up, c) = (1.0f - alpha) * blurred(x, y_up + 1, c) + alpha * blurred(x, y_up, c);
  }

  // One pass = blur a band of 32 columns, then write it transposed as 32 rows of the
  // consumer. The band (32 x 2560 floats, 320 KB) stays in L2 between the two scans and
  // the transpose; bands and channels are the parallel loop. The scans vectorize across
  // adjacent columns. The transpose works in blocks of one vector square: each vector it
  // stores gathers from as many rows of the band, and the unrolled neighbouring vectors
  // gather from the same cache lines.
  void schedule_pass(Func consumer, Func blurred) {
    const int vec = natural_vector_size<float>();
    Var yo{"yo"}, yi{"yi"}, band{"band"};
    Var xo{"xo"}, xi{"xi"}, yio{"yio"}, yii{"yii"};
    consumer.compute_root()
        .reorder(x, y, c)
        .split(y, yo, yi, 32)
        .fuse(yo, c, band)
        .parallel(band)
        .tile(x, yi, xo, yio, xi, yii, vec, vec)
        .vectorize(xi)
        .unroll(yii);
    blurred.compute_at(consumer, band).vectorize(x, vec);
    for (int s = 0; s < 2; s++) {
      blurred.update(s).vectorize(x, vec);
    }
  }
};

}  // namespace
}  // namespace protuner_apps

HALIDE_REGISTER_GENERATOR(protuner_apps::IirBlur, iir_blur)
