// nl_means: non-local means denoising of an RGB image. Each pixel becomes a weighted average
// of the pixels in a search window, weighted by how similar the patches around them are. It
// is in the suite for its 4-D intermediates (pixel x search offset) and nested reductions,
// whose loop order and fusion dominate the run time.
#include "Halide.h"

namespace protuner_apps {
namespace {

using namespace Halide;

class NlMeans : public Generator<NlMeans> {
 public:

  // Planar RGB: input(x, y, c).
  Input<Buffer<float>> input{"input", 3};
  // Side of the square patches that are compared, and of the square search window.
  Input<int> patch_size{"patch_size"};
  Input<int> search_area{"search_area"};
  // Patch distances are mean squared differences; sigma is their falloff scale.
  Input<float> sigma{"sigma"};
  Output<Buffer<float>> output{"output", 3};

  void generate() {
    clamped = BoundaryConditions::repeat_edge(input, {{input.dim(0).min(), input.dim(0).extent()},
                                                      {input.dim(1).min(), input.dim(1).extent()}});
    define_patch_distance();

    // Mean (not summed) squared differences, so sigma does not depend on the patch size.
    Expr samples = cast<float>(3 * patch_size * patch_size);
    Expr scale = 1.0f / (sigma * sigma * samples);
    weight(x, y, dx, dy) = exp(-blur_x(x, y, dx, dy) * scale);

    // The weighted sum of the three channels and the sum of weights, over the window.
    s = RDom(-(search_area / 2), search_area, -(search_area / 2), search_area, "s");
    Expr w = weight(x, y, s.x, s.y);
    acc(x, y) = Tuple(0.0f, 0.0f, 0.0f, 0.0f);
    acc(x, y) = Tuple(acc(x, y)[0] + w * clamped(x + s.x, y + s.y, 0),
                      acc(x, y)[1] + w * clamped(x + s.x, y + s.y, 1),
                      acc(x, y)[2] + w * clamped(x + s.x, y + s.y, 2), acc(x, y)[3] + w);
    output(x, y, c) = mux(c, {acc(x, y)[0], acc(x, y)[1], acc(x, y)[2]}) / acc(x, y)[3];
  }

  void schedule() {
    // 1536x2560 RGB, the image size of the Halide autoscheduler papers.
    input.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});
    patch_size.set_estimate(7);
    search_area.set_estimate(7);
    sigma.set_estimate(0.12f);
    output.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});
    if (!auto_schedule) {
      schedule_expert();
    }
  }

 private:
  Var x{"x"}, y{"y"}, c{"c"}, dx{"dx"}, dy{"dy"};
  Func clamped, diff{"diff"}, blur_y{"blur_y"}, blur_x{"blur_x"}, weight{"weight"}, acc{"acc"};
  RDom p, s;

  // blur_x(x, y, dx, dy): the summed squared difference between the patches at (x, y)
  // and at (x + dx, y + dy), as a box filter (rows, then columns) of pixel differences.
  void define_patch_distance() {
    Expr d0 = clamped(x, y, 0) - clamped(x + dx, y + dy, 0);
    Expr d1 = clamped(x, y, 1) - clamped(x + dx, y + dy, 1);
    Expr d2 = clamped(x, y, 2) - clamped(x + dx, y + dy, 2);
    diff(x, y, dx, dy) = d0 * d0 + d1 * d1 + d2 * d2;

    p = RDom(-(patch_size / 2), patch_size, "p");
    blur_y(x, y, dx, dy) = 0.0f;
    blur_y(x, y, dx, dy) += diff(x, y + p, dx, dy);
    blur_x(x, y, dx, dy) = 0.0f;
    blur_x(x, y, dx, dy) += blur_y(x + p, y, dx, dy);
  }

  void schedule_expert() {
    const int vec = natural_vector_size<float>();
    Var xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"}, t{"t"};
    // 256 x 32 tiles: one search offset's intermediates over a tile (~40 KB each) stay
    // in L2, and the patch halo adds only ~20% to the per-offset work.
    output.tile(x, y, xo, yo, xi, yi, 256, 32, TailStrategy::GuardWithIf)
        .reorder(xi, c, yi, xo, yo)
        .fuse(xo, yo, t)
        .parallel(t)
        .vectorize(xi, vec);
    // A staged copy of the tile's input neighbourhood keeps the boundary clamping out of
    // the per-offset loops.
    clamped.compute_at(output, t).vectorize(clamped.args()[0], vec);
    // The search loop runs outside the tile's pixels, so each offset's patch distances
    // are computed once per tile with a small halo. Per pixel the offsets are still
    // summed in the algorithm's order.
    acc.compute_at(output, t).vectorize(x, vec);
    acc.update().reorder(x, y, s.x, s.y).vectorize(x, vec);
    // Per-offset intermediates. The box sums keep the patch loop inside each vector of
    // pixels, so the running sum stays in a register.
    for (Func f : {blur_x, blur_y}) {
      f.compute_at(acc, s.x).vectorize(x, vec);
      f.update().reorder(p, x, y).vectorize(x, vec);
    }
    diff.compute_at(acc, s.x).vectorize(x, vec);
  }
};

}  // namespace
}  // namespace protuner_apps

HALIDE_REGISTER_GENERATOR(protuner_apps::NlMeans, nl_means)
