// Bilateral guided upsampling (Chen et al. 2016): an image operator applied at low resolution
// is transferred to full resolution by fitting, in each cell of a bilateral grid over the
// low-resolution input, the affine colour transform that maps input to output (regularized
// least squares, solved per cell), then slicing that grid of transforms with the
// full-resolution input. It is in the suite because it combines a wide scattering
// reduction, small dense linear algebra on every grid cell and a heavy per-pixel gather.
#include "Halide.h"

namespace protuner_apps {
namespace {

using namespace Halide;

// Per grid cell the fit accumulates the upper triangle of the 4x4 Gram matrix of the
// features (r, g, b, 1), then the 4x3 products of features with the output colours.
constexpr int kGramTerms = 10;
constexpr int kStatTerms = kGramTerms + 12;

Expr luminance(const std::vector<Expr> &rgb) {
  return 0.25f * rgb[0] + 0.5f * rgb[1] + 0.25f * rgb[2];
}

class Bgu : public Generator<Bgu> {
 public:
  // Ratio between the high- and low-resolution sizes, in each spatial dimension.
  GeneratorParam<int> upsample_factor{"upsample_factor", 8};
  // Spatial size of a grid cell, in low-resolution pixels.
  GeneratorParam<int> s_sigma{"s_sigma", 16};

  // RGB images (planar, channel last), nominally in [0, 1].
  Input<Buffer<float>> lowres_input{"lowres_input", 3};
  Input<Buffer<float>> lowres_output{"lowres_output", 3};
  Input<Buffer<float>> highres_input{"highres_input", 3};
  // Luminance extent of a grid cell.
  Input<float> r_sigma{"r_sigma"};
  // Weight of the prior that pulls every cell's transform towards the identity; it keeps
  // cells with few or uniform pixels well posed.
  Input<float> lambda{"lambda"};
  Output<Buffer<float>> output{"output", 3};

  void generate() {
    splat();
    blur_121(blurz, stats, 2);
    blur_121(blurx, blurz, 0);
    blur_121(blury, blurx, 1);
    factor_normal_equations();
    solve_normal_equations();
    slice();
    set_all_estimates();
  }

  void schedule() {
    if (!auto_schedule) {
      const int vec = natural_vector_size<float>();
      // The grid has only a few thousand cells at the estimated size, so each of its stages
      // is computed whole, parallel over whichever dimension is long enough.
      stats.compute_root().bound(k, 0, kStatTerms).parallel(y);
      // Unrolling the terms turns the mux into straight-line code; r stays inside the cell
      // loops so every cell keeps its summation order.
      stats.update().reorder(k, r.x, r.y, x, y).unroll(k).parallel(y);
      for (Func f : {blurz, blurx, blury}) {
        f.compute_root().parallel(k).vectorize(x, 8);
      }
      factor.compute_root().parallel(y).vectorize(x, 8);
      // Unrolled, the mux becomes one back substitution per coefficient.
      transform.compute_root().bound(k, 0, 12).unroll(k).parallel(z);
      // Slicing dominates. Vectorizing the interpolation across the 12 coefficients of a
      // cell turns what would be 96 gathers per pixel into 8 dense loads.
      Var yo("yo"), yi("yi");
      output.reorder(c, x, y).bound(c, 0, 3).unroll(c);
      output.split(y, yo, yi, 8).parallel(yo).vectorize(x, vec);
      interpolated.compute_at(output, yi).vectorize(k, 12);
    }
  }

 private:
  Var x{"x"}, y{"y"}, z{"z"}, c{"c"}, k{"k"};
  RDom r;
  Func stats{"stats"}, blurz{"blurz"}, blurx{"blurx"}, blury{"blury"};
  Func factor{"factor"}, transform{"transform"}, interpolated{"interpolated"};

  // Each low-resolution pixel adds its regression terms to the cell that contains it.
  void splat() {
    Func in = BoundaryConditions::repeat_edge(lowres_input);
    Func out = BoundaryConditions::repeat_edge(lowres_output);
    const int s = s_sigma;
    r = RDom(0, s, 0, s, "r");
    Expr px = x * s + r.x, py = y * s + r.y;
    std::vector<Expr> f = {in(px, py, 0), in(px, py, 1), in(px, py, 2), 1.f};
    Expr zi = cast<int>(clamp(luminance(f), 0.f, 1.f) / r_sigma);
    std::vector<Expr> terms;
    for (int i = 0; i < 4; i++) {
      for (int j = i; j < 4; j++) {
        terms.push_back(f[i] * f[j]);
      }
    }
    for (int i = 0; i < 4; i++) {
      for (int ch = 0; ch < 3; ch++) {
        terms.push_back(f[i] * out(px, py, ch));
      }
    }
    stats(x, y, z, k) = 0.f;
    stats(x, y, zi, k) += mux(k, terms);
  }

  // A normalized [1 2 1] blur along dimension dim: it lets neighbouring cells share data,
  // which makes the fitted transforms vary smoothly across the grid.
  void blur_121(Func &dst, const Func &src, int dim) {
    std::vector<Expr> lo = {x, y, z, k}, hi = lo;
    lo[dim] -= 1;
    hi[dim] += 1;
    dst(x, y, z, k) = (src(lo) + 2.f * src(x, y, z, k) + src(hi)) * 0.25f;
  }

  // Entry (i, j) of the regularized Gram matrix of the cell at (x, y, z).
  Expr gram(int i, int j) {
    if (i > j) std::swap(i, j);
    const int index = i * 4 - i * (i - 1) / 2 + (j - i);
    return blury(x, y, z, index) + (i == j ? Expr(lambda) : Expr(0.f));
  }

  // Cholesky factor L (lower triangle, row-major in a tuple) of the Gram matrix.
  void factor_normal_equations() {
    Expr l[4][4];
    for (int j = 0; j < 4; j++) {
      Expr diag = gram(j, j);
      for (int m = 0; m < j; m++) diag -= l[j][m] * l[j][m];
      l[j][j] = sqrt(diag);
      for (int i = j + 1; i < 4; i++) {
        Expr v = gram(i, j);
        for (int m = 0; m < j; m++) v -= l[i][m] * l[j][m];
        l[i][j] = v / l[j][j];
      }
    }
    std::vector<Expr> lower;
    for (int i = 0; i < 4; i++) {
      for (int j = 0; j <= i; j++) lower.push_back(l[i][j]);
    }
    factor(x, y, z) = Tuple(lower);
  }

  // Solves L L^T a = b for each output channel; the right-hand side includes the prior's
  // pull towards the identity. transform(k, ...) with k = ch * 4 + i is the coefficient of
  // feature i in output channel ch; k comes first so a cell's coefficients can be contiguous.
  void solve_normal_equations() {
    auto l = [&](int i, int j) { return factor(x, y, z)[i * (i + 1) / 2 + j]; };
    std::vector<Expr> coefficients;
    for (int ch = 0; ch < 3; ch++) {
      Expr w[4], a[4];
      for (int i = 0; i < 4; i++) {
        w[i] = blury(x, y, z, kGramTerms + i * 3 + ch) + (i == ch ? Expr(lambda) : Expr(0.f));
        for (int m = 0; m < i; m++) w[i] -= l(i, m) * w[m];
        w[i] /= l(i, i);
      }
      for (int i = 3; i >= 0; i--) {
        a[i] = w[i];
        for (int m = i + 1; m < 4; m++) a[i] -= l(m, i) * a[m];
        a[i] /= l(i, i);
      }
      coefficients.insert(coefficients.end(), a, a + 4);
    }
    transform(k, x, y, z) = mux(k, coefficients);
  }

  // Trilinearly interpolates the transforms of the eight cells around each full-resolution
  // pixel, placed by its position and luminance, and applies the result to its colour.
  void slice() {
    const float cell = static_cast<float>(int(s_sigma) * int(upsample_factor));
    std::vector<Expr> f = {highres_input(x, y, 0), highres_input(x, y, 1), highres_input(x, y, 2),
                           1.f};
    Expr gx = (cast<float>(x) + 0.5f) / cell - 0.5f;
    Expr gy = (cast<float>(y) + 0.5f) / cell - 0.5f;
    Expr gz = clamp(luminance(f), 0.f, 1.f) / r_sigma - 0.5f;
    Expr xi = cast<int>(floor(gx)), yi = cast<int>(floor(gy)), zi = cast<int>(floor(gz));
    Expr xf = gx - xi, yf = gy - yi, zf = gz - zi;
    auto at = [&](int dx, int dy, int dz) { return transform(k, xi + dx, yi + dy, zi + dz); };
    auto along_z = [&](int dx, int dy) { return lerp(at(dx, dy, 0), at(dx, dy, 1), zf); };
    auto along_x = [&](int dy) { return lerp(along_z(0, dy), along_z(1, dy), xf); };
    interpolated(k, x, y) = lerp(along_x(0), along_x(1), yf);

    Expr sum = interpolated(c * 4 + 3, x, y);
    for (int i = 0; i < 3; i++) sum += interpolated(c * 4 + i, x, y) * f[i];
    output(x, y, c) = sum;
  }

  void set_all_estimates() {
    lowres_input.set_estimates({{0, 192}, {0, 320}, {0, 3}});
    lowres_output.set_estimates({{0, 192}, {0, 320}, {0, 3}});
    highres_input.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});
    r_sigma.set_estimate(0.125f);
    lambda.set_estimate(0.01f);
    output.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});
  }
};

}  // namespace
}  // namespace protuner_apps

HALIDE_REGISTER_GENERATOR(protuner_apps::Bgu, bgu)
