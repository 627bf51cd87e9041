// Harris corner detection: the classic stencil chain (gray, Sobel gradients, structure
// tensor, 3x3 box sums, corner response). It is in the suite because its short chain of
// small stencils makes the tile size and which stages to fuse the main scheduling decisions.
#include "Halide.h"

namespace protuner_apps {
namespace {

using namespace Halide;

class Harris : public Generator<Harris> {
 public:
  // Harris' sensitivity constant: larger values report fewer, stronger corners.
  GeneratorParam<float> k{"k", 0.04f};

  Input<Buffer<float>> input{"input", 3};
  Output<Buffer<float>> output{"output", 2};

  void generate() {
    // The Sobel and box stencils reach 2 pixels past each output pixel.
    Func clamped = BoundaryConditions::repeat_edge(input);
    gray(x, y) = 0.299f * clamped(x, y, 0) + 0.587f * clamped(x, y, 1) + 0.114f * clamped(x, y, 2);

    Ix(x, y) = (gray(x + 1, y - 1) + 2.0f * gray(x + 1, y) + gray(x + 1, y + 1) -
                gray(x - 1, y - 1) - 2.0f * gray(x - 1, y) - gray(x - 1, y + 1)) /
               12.0f;
    Iy(x, y) = (gray(x - 1, y + 1) + 2.0f * gray(x, y + 1) + gray(x + 1, y + 1) -
                gray(x - 1, y - 1) - 2.0f * gray(x, y - 1) - gray(x + 1, y - 1)) /
               12.0f;

    Ixx(x, y) = Ix(x, y) * Ix(x, y);
    Iyy(x, y) = Iy(x, y) * Iy(x, y);
    Ixy(x, y) = Ix(x, y) * Iy(x, y);

    Sxx(x, y) = box3x3(Ixx);
    Syy(x, y) = box3x3(Iyy);
    Sxy(x, y) = box3x3(Ixy);

    Expr det = Sxx(x, y) * Syy(x, y) - Sxy(x, y) * Sxy(x, y);
    Expr trace = Sxx(x, y) + Syy(x, y);
    output(x, y) = det - k * trace * trace;

    // 1536x2560 as in the Halide autoscheduler papers (Adams 2019, Anderson 2021).
    input.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});
    output.set_estimates({{0, 1536}, {0, 2560}});
  }

  void schedule() {
    if (!auto_schedule) {
      // Strips of 16 full-width rows: the gray and gradient rows of a strip (about
      // 350 KB) stay in L2, and 160 strips balance well over the cores.
      const int vec = natural_vector_size<float>();
      Var yo{"yo"}, yi{"yi"};
      output.split(y, yo, yi, 16).parallel(yo).vectorize(x, vec);
      // The box sums read each product nine times, but a product is a single multiply
      // of stored gradients, so recomputing it is cheaper than storing it.
      for (Func f : {Ix, Iy, gray}) {
        f.compute_at(output, yo).vectorize(x, vec);
      }
    }
  }

 private:
  Var x{"x"}, y{"y"};
  Func gray{"gray"}, Ix{"Ix"}, Iy{"Iy"};
  Func Ixx{"Ixx"}, Iyy{"Iyy"}, Ixy{"Ixy"};
  Func Sxx{"Sxx"}, Syy{"Syy"}, Sxy{"Sxy"};

  Expr box3x3(Func f) {
    Expr sum;
    for (int dy = -1; dy <= 1; dy++) {
      for (int dx = -1; dx <= 1; dx++) {
        Expr term = f(x + dx, y + dy);
        sum = sum.defined() ? sum + term : term;
      }
    }
    return sum;
  }
};

}  // namespace
}  // namespace protuner_apps

HALIDE_REGISTER_GENERATOR(protuner_apps::Harris, harris)
