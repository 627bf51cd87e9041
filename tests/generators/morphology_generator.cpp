// Morphological open-close smoothing of a grayscale uint8 image with a square structuring
// element: erode, dilate (the opening), then dilate, erode (the closing), each as separable
// running min/max passes, with BoundaryConditions::mirror_interior at the edges. In the
// corpus for its long chain of cheap stencils on 8-bit data and a hand schedule that uses
// .in() wrappers (a per-consumer copy of the padded input, and of an intermediate).
#include "Halide.h"

namespace protuner_corpus {
namespace {

using namespace Halide;

class Morphology : public Generator<Morphology> {
 public:
  GeneratorParam<int> radius{"radius", 3, 1, 8};

  Input<Buffer<uint8_t>> input{"input", 2};
  Output<Buffer<uint8_t>> output{"output", 2};

  void generate() {
    padded = BoundaryConditions::mirror_interior(input);
    Func opened_h = pass(padded, true, false, "erode_x");
    Func eroded = pass(opened_h, false, false, "erode_y");
    Func dil_h = pass(eroded, true, true, "dilate_x");
    opened = pass(dil_h, false, true, "opened");
    Func dil2_h = pass(opened, true, true, "dilate2_x");
    Func dilated2 = pass(dil2_h, false, true, "dilate2_y");
    Func ero2_h = pass(dilated2, true, false, "erode2_x");
    Func closed = pass(ero2_h, false, false, "closed");
    output(x, y) = closed(x, y);

    input.set_estimates({{0, 2048}, {0, 2048}});
    output.set_estimates({{0, 2048}, {0, 2048}});

    if (!auto_schedule) {
      const int vec = natural_vector_size<uint8_t>();
      Var yo{"yo"}, yi{"yi"};
      // Strips of rows in parallel; every stage of the chain is computed per strip (with the
      // halo it needs), so the strip stays in L2. The mirrored input is read through a
      // wrapper that copies the strip once; the opening, read by the closing's first pass,
      // gets its own wrapper too.
      output.split(y, yo, yi, 64).parallel(yo).vectorize(x, vec);
      for (Func f : stages) {
        f.compute_at(output, yo).vectorize(x, vec);
      }
      padded.in(stages[0]).compute_at(output, yo).vectorize(_0, vec);
      opened.in(stages[4]).compute_at(output, yo).vectorize(x, vec);
    }
  }

 private:
  Var x{"x"}, y{"y"};
  Func padded, opened;
  std::vector<Func> stages;

  Func pass(Func in, bool horizontal, bool is_max, const std::string &name) {
    Func f(name);
    const int r = radius;
    Expr e = horizontal ? in(x - r, y) : in(x, y - r);
    for (int k = -r + 1; k <= r; k++) {
      Expr v = horizontal ? in(x + k, y) : in(x, y + k);
      e = is_max ? max(e, v) : min(e, v);
    }
    f(x, y) = e;
    stages.push_back(f);
    return f;
  }
};

}  // namespace
}  // namespace protuner_corpus

HALIDE_REGISTER_GENERATOR(protuner_corpus::Morphology, morphology)
