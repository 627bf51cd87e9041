// Bilateral grid (Chen, Paris & Durand 2007): an edge-preserving blur computed by splatting
// pixels into a coarse (x, y, intensity) grid, blurring the grid and slicing it back at full
// resolution. It is in the suite because it mixes a scattering histogram reduction, cheap
// separable stencils on a small 3D grid and a data-dependent trilinear gather per pixel.
#include "Halide.h"

namespace protuner_apps {
namespace {

using namespace Halide;

class BilateralGrid : public Generator<BilateralGrid> {
 public:
  // Spatial size of a grid cell, in pixels.
  GeneratorParam<int> s_sigma{"s_sigma", 8};

  // Grayscale intensities, nominally in [0, 1].
  Input<Buffer<float>> input{"input", 2};
  // Intensity extent of a grid cell.
  Input<float> r_sigma{"r_sigma"};
  Output<Buffer<float>> output{"output", 2};

  void generate() {
    const int s = s_sigma;
    Func clamped = BoundaryConditions::repeat_edge(input);
    value(x, y) = clamp(clamped(x, y), 0.f, 1.f);

    // Each cell accumulates the s x s block of pixels centred on its sample position; the
    // tuple holds (sum of intensities, pixel count) so that slicing can normalize.
    r = RDom(0, s, 0, s, "r");
    Expr v = value(x * s + r.x - s / 2, y * s + r.y - s / 2);
    Expr zi = cast<int>(v / r_sigma + 0.5f);
    histogram(x, y, z) = Tuple(0.f, 0.f);
    histogram(x, y, zi) = Tuple(histogram(x, y, zi)[0] + v, histogram(x, y, zi)[1] + 1.f);

    blur_5tap(blurz, histogram, 2);
    blur_5tap(blurx, blurz, 0);
    blur_5tap(blury, blurx, 1);

    output(x, y) = slice(0) / slice(1);

    input.set_estimates({{0, 1536}, {0, 2560}});
    r_sigma.set_estimate(0.1f);
    output.set_estimates({{0, 1536}, {0, 2560}});
  }

  void schedule() {
    if (!auto_schedule) {
      const int vec = natural_vector_size<float>();
      // The grid has 1/s^2 as many cells as the image has pixels, so its stages are
      // computed whole. The histogram is built one grid row at a time, right before the
      // z blur consumes it, so the scattered sums stay in cache.
      blurz.compute_root().reorder(x, z, y).parallel(y).vectorize(x, vec);
      histogram.compute_at(blurz, y).vectorize(x, vec);
      // Cells are independent; keeping r innermost keeps each cell's summation order.
      histogram.update().reorder(r.x, r.y, x, y);
      // Both spatial blurs work on one intensity slice, which fits in L2.
      blury.compute_root().parallel(z).vectorize(x, vec);
      blurx.compute_at(blury, z).vectorize(x, vec);
      Var yo("yo"), yi("yi");
      output.split(y, yo, yi, 16).parallel(yo).vectorize(x, vec);
    }
  }

 private:
  Var x{"x"}, y{"y"}, z{"z"};
  RDom r;
  Func value{"value"}, histogram{"histogram"};
  Func blurz{"blurz"}, blurx{"blurx"}, blury{"blury"};

  // A [1 4 6 4 1] blur of both tuple elements along dimension dim; the weights need no
  // normalization because slicing divides one element by the other.
  void blur_5tap(Func &dst, const Func &src, int dim) {
    const float weights[5] = {1.f, 4.f, 6.f, 4.f, 1.f};
    std::vector<Expr> sums(2);
    for (int k = 0; k < 5; k++) {
      std::vector<Expr> args = {x, y, z};
      args[dim] += k - 2;
      for (int i = 0; i < 2; i++) {
        Expr term = weights[k] * src(args)[i];
        sums[i] = k == 0 ? term : sums[i] + term;
      }
    }
    dst(x, y, z) = Tuple(sums);
  }

  // Trilinear interpolation of tuple element i of the blurred grid at this pixel's
  // position: (x, y) scaled down by s, z given by its intensity.
  Expr slice(int i) {
    const int s = s_sigma;
    Expr zv = value(x, y) / r_sigma;
    Expr zi = cast<int>(zv);
    Expr zf = zv - zi;
    Expr xi = x / s, yi = y / s;
    Expr xf = cast<float>(x % s) / s, yf = cast<float>(y % s) / s;
    auto at = [&](int dx, int dy, int dz) { return blury(xi + dx, yi + dy, zi + dz)[i]; };
    auto along_z = [&](int dx, int dy) { return lerp(at(dx, dy, 0), at(dx, dy, 1), zf); };
    auto along_x = [&](int dy) { return lerp(along_z(0, dy), along_z(1, dy), xf); };
    return lerp(along_x(0), along_x(1), yf);
  }
};

}  // namespace
}  // namespace protuner_apps

HALIDE_REGISTER_GENERATOR(protuner_apps::BilateralGrid, bilateral_grid)
