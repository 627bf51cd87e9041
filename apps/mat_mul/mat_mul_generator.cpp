// mat_mul: single-precision GEMM, C = A x B, on 2048x2048 matrices. It is in the suite as the
// canonical dense reduction: a fast schedule needs a register-blocked accumulator tile with
// the reduction loop inside it, which tree searches over loop nests find hard to reach.
#include "Halide.h"

namespace protuner_apps {
namespace {

using namespace Halide;

class MatMul : public Generator<MatMul> {
 public:

  // Row-major matrices: dimension 0 is the column, dimension 1 the row.
  Input<Buffer<float>> a{"a", 2};
  Input<Buffer<float>> b{"b", 2};
  Output<Buffer<float>> c{"c", 2};

  void generate() {
    // The shared dimension comes from A, so a cropped output still sums the full rows.
    k = RDom(0, a.dim(0).extent(), "k");
    prod(x, y) = 0.0f;
    prod(x, y) += a(k, y) * b(x, k);
    c(x, y) = prod(x, y);
  }

  void schedule() {
    // 2048x2048, the SGEMM size of the Halide autoscheduler papers.
    const int n = 2048;
    a.set_estimates({{0, n}, {0, n}});
    b.set_estimates({{0, n}, {0, n}});
    c.set_estimates({{0, n}, {0, n}});
    if (!auto_schedule) {
      schedule_expert();
    }
  }

 private:
  Var x{"x"}, y{"y"};
  Func prod{"prod"};
  RDom k;

  void schedule_expert() {
    const int vec = natural_vector_size<float>();
    // A register block of 3 vectors x 8 rows keeps 24 accumulators in the 32 vector
    // registers, leaving room for the three B loads and the A broadcast per k.
    const int block_w = 3 * vec, block_h = 8;
    // A tile of 16 register blocks down one column panel shares one staged B panel
    // (48 x 2048 floats, fits in L2). ShiftInwards keeps every block full-sized so the
    // accumulator is a constant-size array LLVM can hold in registers; it needs an
    // output of at least 48 x 128, and taller tiles gain only ~10%.
    const int tile_h = 16 * block_h;
    Var xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"}, yii{"yii"}, t{"t"};
    c.tile(x, y, xo, yo, xi, yi, block_w, tile_h, TailStrategy::ShiftInwards)
        .fuse(xo, yo, t)
        .parallel(t)
        .split(yi, yi, yii, block_h, TailStrategy::ShiftInwards)
        .vectorize(xi, vec)
        .unroll(xi)
        .unroll(yii);
    prod.compute_at(c, yi)
        .vectorize(x, vec)
        .unroll(x)
        .unroll(y)
        .update()
        .reorder(x, y, k)
        .vectorize(x, vec)
        .unroll(x)
        .unroll(y);
    // Copying the B panel into a dense block removes the 8 KB row stride from the
    // innermost loads (cache-set and TLB conflicts) at the cost of one pass over it.
    Func b_panel = b.in();
    b_panel.compute_at(c, t).vectorize(b_panel.args()[0], vec);
  }
};

}  // namespace
}  // namespace protuner_apps

HALIDE_REGISTER_GENERATOR(protuner_apps::MatMul, mat_mul)
