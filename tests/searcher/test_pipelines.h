// Small pipelines for searcher tests, one per shape of computation the space must handle:
// a stencil chain, a bilateral grid (scatter histogram + blur + slice), a convolution with
// a reduction, a matrix multiply, a pyramid, a histogram equalization (lookup tables) and
// a two-pass recursive filter (scans over input-sized domains) and a weighted sum over a
// window of per-offset patch distances (4-D intermediates). Each call builds fresh
// Funcs, so a test can schedule one instance and compare it with another. Header-only:
// tests that compile emitted schedule source build the same pipelines from it.
#pragma once

#include "Halide.h"

namespace protuner::testing {

inline Halide::Pipeline blur_chain_pipeline(int width = 128, int height = 96) {
  using namespace Halide;
  ImageParam in(Float(32), 2, "in");
  Var x("x"), y("y");
  Func clamped = BoundaryConditions::repeat_edge(in);
  Func blur_x("blur_x"), blur_y("blur_y"), sharp("sharp");
  blur_x(x, y) = (clamped(x - 1, y) + clamped(x, y) * 2.0f + clamped(x + 1, y)) * 0.25f;
  blur_y(x, y) = (blur_x(x, y - 1) + blur_x(x, y) * 2.0f + blur_x(x, y + 1)) * 0.25f;
  sharp(x, y) = clamped(x, y) * 2.0f - blur_y(x, y);
  in.set_estimates({{0, width}, {0, height}});
  sharp.set_estimates({{0, width}, {0, height}});
  return Pipeline(sharp);
}

inline Halide::Pipeline bilateral_grid_pipeline(int width = 96, int height = 64) {
  using namespace Halide;
  constexpr int s = 4;        // spatial cell size
  constexpr float r = 0.25f;  // range cell size: 5 intensity levels over [0, 1)
  ImageParam in(Float(32), 2, "in");
  Var x("x"), y("y"), z("z"), c("c");
  Func clamped = BoundaryConditions::repeat_edge(in);
  RDom cell(0, s, 0, s, "cell");
  Expr v = clamp(clamped(x * s + cell.x - s / 2, y * s + cell.y - s / 2), 0.0f, 1.0f);
  Expr zi = cast<int>(v / r + 0.5f);
  Func grid("grid"), blur_z("blur_z"), blur_gx("blur_gx"), blur_gy("blur_gy"), out("out");
  grid(x, y, z, c) = 0.0f;
  grid(x, y, zi, c) += select(c == 0, v, 1.0f);
  blur_z(x, y, z, c) = grid(x, y, z - 1, c) + grid(x, y, z, c) * 2.0f + grid(x, y, z + 1, c);
  blur_gx(x, y, z, c) = blur_z(x - 1, y, z, c) + blur_z(x, y, z, c) * 2.0f + blur_z(x + 1, y, z, c);
  blur_gy(x, y, z, c) =
      blur_gx(x, y - 1, z, c) + blur_gx(x, y, z, c) * 2.0f + blur_gx(x, y + 1, z, c);
  Expr val = clamp(clamped(x, y), 0.0f, 1.0f) / r;
  Expr zf = clamp(cast<int>(val), 0, 4);
  Expr zw = val - zf;
  Expr xs = x / s, ys = y / s;
  Func interp("interp");
  interp(x, y, c) = lerp(blur_gy(xs, ys, zf, c), blur_gy(xs, ys, zf + 1, c), zw);
  out(x, y) = interp(x, y, 0) / (interp(x, y, 1) + 1e-6f);
  in.set_estimates({{0, width}, {0, height}});
  out.set_estimates({{0, width}, {0, height}});
  return Pipeline(out);
}

inline Halide::Pipeline conv_relu_pipeline(int channels_in = 8, int channels_out = 16,
                                           int width = 24, int height = 16) {
  using namespace Halide;
  ImageParam in(Float(32), 3, "in"), weights(Float(32), 4, "weights"), bias(Float(32), 1, "bias");
  Var co("co"), x("x"), y("y");
  RDom r(0, channels_in, 0, 3, 0, 3, "r");
  Func padded = BoundaryConditions::constant_exterior(in, 0.0f);
  Func conv("conv"), relu("relu");
  conv(co, x, y) = bias(co);
  conv(co, x, y) += weights(co, r.x, r.y, r.z) * padded(r.x, x + r.y - 1, y + r.z - 1);
  relu(co, x, y) = max(conv(co, x, y), 0.0f);
  in.set_estimates({{0, channels_in}, {0, width}, {0, height}});
  weights.set_estimates({{0, channels_out}, {0, channels_in}, {0, 3}, {0, 3}});
  bias.set_estimates({{0, channels_out}});
  relu.set_estimates({{0, channels_out}, {0, width}, {0, height}});
  return Pipeline(relu);
}

// Two 3x3 convolution layers with ReLUs, the second reading the first through zero
// padding: resnet50's shape in small, where a Func other than the output maps a reduction
// pointwise.
inline Halide::Pipeline conv_stack_pipeline(int channels = 32, int width = 28, int height = 8) {
  using namespace Halide;
  ImageParam in(Float(32), 3, "in"), w1(Float(32), 4, "w1"), w2(Float(32), 4, "w2");
  Var c("c"), x("x"), y("y");
  const int channels_in = 8;
  RDom r1(0, channels_in, 0, 3, 0, 3, "r1"), r2(0, channels, 0, 3, 0, 3, "r2");
  Func padded_in = BoundaryConditions::constant_exterior(in, 0.0f);
  Func conv1("conv1"), relu1("relu1"), conv2("conv2"), relu2("relu2");
  conv1(c, x, y) = 0.0f;
  conv1(c, x, y) += w1(c, r1.x, r1.y, r1.z) * padded_in(r1.x, x + r1.y - 1, y + r1.z - 1);
  relu1(c, x, y) = max(conv1(c, x, y), 0.0f);
  Func padded1 =
      BoundaryConditions::constant_exterior(relu1, 0.0f, {{0, channels}, {0, width}, {0, height}});
  conv2(c, x, y) = 0.0f;
  conv2(c, x, y) += w2(c, r2.x, r2.y, r2.z) * padded1(r2.x, x + r2.y - 1, y + r2.z - 1);
  relu2(c, x, y) = max(conv2(c, x, y), 0.0f);
  in.set_estimates({{0, channels_in}, {0, width}, {0, height}});
  w1.set_estimates({{0, channels}, {0, channels_in}, {0, 3}, {0, 3}});
  w2.set_estimates({{0, channels}, {0, channels}, {0, 3}, {0, 3}});
  relu2.set_estimates({{0, channels}, {0, width}, {0, height}});
  return Pipeline(relu2);
}

// f(x, y) = in(x, y) * 2 over n x n floats: one pass through memory, nothing reused.
inline Halide::Pipeline scale_pipeline(int n = 1024) {
  using namespace Halide;
  ImageParam in(Float(32), 2, "in");
  Var x("x"), y("y");
  Func f("f");
  f(x, y) = in(x, y) * 2.0f;
  in.set_estimates({{0, n}, {0, n}});
  f.set_estimates({{0, n}, {0, n}});
  return Pipeline(f);
}

inline Halide::Pipeline matmul_pipeline(int n = 64) {
  using namespace Halide;
  ImageParam a(Float(32), 2, "a"), b(Float(32), 2, "b");
  Var x("x"), y("y");
  RDom k(0, n, "k");
  Func c("c");
  c(x, y) = 0.0f;
  c(x, y) += a(k, y) * b(x, k);
  a.set_estimates({{0, n}, {0, n}});
  b.set_estimates({{0, n}, {0, n}});
  c.set_estimates({{0, n}, {0, n}});
  return Pipeline(c);
}

// mat_mul's shape: the product accumulates in prod and the output copies it,
// c(x, y) = prod(x, y), prod(x, y) += a(k, y) * b(x, k). The inputs' own Funcs (a_im and
// b_im, Halide's names) are what a schedule may copy.
inline Halide::Pipeline matmul_copy_pipeline(int n = 128) {
  using namespace Halide;
  ImageParam a(Float(32), 2, "a"), b(Float(32), 2, "b");
  Var x("x"), y("y");
  RDom k(0, n, "k");
  Func prod("prod"), c("c");
  prod(x, y) = 0.0f;
  prod(x, y) += a(k, y) * b(x, k);
  c(x, y) = prod(x, y);
  a.set_estimates({{0, n}, {0, n}});
  b.set_estimates({{0, n}, {0, n}});
  c.set_estimates({{0, n}, {0, n}});
  return Pipeline(c);
}

// c = g x h over k, with g and h computed from one input; with `same`, h is g itself
// (c(x, y) += g(k, y) * g(x, k): one Func read at two index shapes).
inline Halide::Pipeline product_pipeline(bool same, int n = 64) {
  using namespace Halide;
  ImageParam a(Float(32), 2, "a");
  Var x("x"), y("y");
  RDom k(0, n, "k");
  Func in_im("in_im"), g("g"), h("h"), c("c");
  in_im(x, y) = a(x, y);
  g(x, y) = in_im(x, y) * 2.0f;
  h(x, y) = in_im(x, y) + 1.0f;
  Func rhs = same ? g : h;
  c(x, y) = 0.0f;
  c(x, y) += g(k, y) * rhs(x, k);
  a.set_estimates({{0, n}, {0, n}});
  c.set_estimates({{0, n}, {0, n}});
  return Pipeline(c);
}

inline Halide::Pipeline pyramid_pipeline(int width = 64, int height = 48, int levels = 3) {
  using namespace Halide;
  ImageParam in(Float(32), 2, "in");
  Var x("x"), y("y");
  std::vector<Func> down{BoundaryConditions::repeat_edge(in)};
  for (int l = 1; l <= levels; ++l) {
    Func dx("down_x" + std::to_string(l)), d("down" + std::to_string(l));
    const Func &p = down.back();
    dx(x, y) = (p(2 * x - 1, y) + p(2 * x, y) * 2.0f + p(2 * x + 1, y)) * 0.25f;
    d(x, y) = (dx(x, 2 * y - 1) + dx(x, 2 * y) * 2.0f + dx(x, 2 * y + 1)) * 0.25f;
    down.push_back(d);
  }
  Func up = down.back();
  for (int l = levels - 1; l >= 0; --l) {
    Func u("up" + std::to_string(l));
    u(x, y) = (up(x / 2, y / 2) + up((x + 1) / 2, (y + 1) / 2)) * 0.5f + down[l](x, y);
    up = u;
  }
  Func out("out");
  out(x, y) = up(x, y);
  in.set_estimates({{0, width}, {0, height}});
  out.set_estimates({{0, width}, {0, height}});
  return Pipeline(out);
}

// Two outputs, the second read from the first as a Gaussian pyramid's levels are: each
// level is decimated 2x in x from the previous one, read through a copy of it (what
// BoundaryConditions makes of a generator's Output) clamped to its bounds. The first
// output is computed over its buffer only, so a schedule that computes the copy past those
// bounds fails Halide's bounds check.
inline Halide::Pipeline chained_outputs_pipeline(int width = 64, int height = 48) {
  using namespace Halide;
  ImageParam in(Float(32), 2, "in");
  Var x("x"), y("y");
  Func half("half"), half_copy("half_copy"), quarter("quarter");
  Func padded = BoundaryConditions::repeat_edge(in);
  half(x, y) = (padded(2 * x - 1, y) + padded(2 * x, y) * 2.0f + padded(2 * x + 1, y)) * 0.25f;
  half_copy(x, y) = half(x, y);
  Func half_padded =
      BoundaryConditions::repeat_edge(half_copy, {{0, in.width() / 2}, {0, in.height()}});
  quarter(x, y) =
      (half_padded(2 * x - 1, y) + half_padded(2 * x, y) * 2.0f + half_padded(2 * x + 1, y)) *
      0.25f;
  in.set_estimates({{0, width}, {0, height}});
  half.set_estimates({{0, width / 2}, {0, height}});
  quarter.set_estimates({{0, width / 4}, {0, height}});
  return Pipeline({half, quarter});
}

// Histogram equalization of an 8-bit image: a histogram whose update has no pure variable,
// a serial scan (the CDF) and a lookup. The tables' regions are compile-time constants
// (0..255, from the uint8 index), which Halide simplifies differently from regions that
// depend on buffer sizes.
inline Halide::Pipeline equalize_pipeline(int width = 64, int height = 48) {
  using namespace Halide;
  ImageParam in(UInt(8), 2, "in");
  Var x("x"), y("y"), i("i");
  Func hist("hist"), cdf("cdf"), out("out");
  RDom pixels(0, width, 0, height, "pixels");
  hist(i) = 0;
  hist(in(pixels.x, pixels.y)) += 1;
  RDom bins(1, 255, "bins");
  cdf(i) = hist(0);
  cdf(bins) = cdf(bins - 1) + hist(bins);
  out(x, y) = cast<uint8_t>(cdf(in(x, y)) * 255 / (width * height));
  in.set_estimates({{0, width}, {0, height}});
  out.set_estimates({{0, width}, {0, height}});
  return Pipeline(out);
}

// A first-order recursive filter down the columns and back up, transposed, filtered the
// same way and transposed back: the shape of iir_blur. The scans' reduction domains span
// the input's own extents, so the second pass bounds the first's region by input.width(),
// an expression rather than the output's extents. `cols_out` receives the first pass.
inline Halide::Pipeline two_pass_scan_pipeline(int width = 64, int height = 48,
                                               Halide::Func *cols_out = nullptr) {
  using namespace Halide;
  ImageParam in(Float(32), 3, "in");
  Var x("x"), y("y"), c("c");
  auto scan = [&](Func src, Expr extent, Func blurred) {
    RDom down(1, extent - 1, "down"), up(1, extent - 1, "up");
    Expr y_up = extent - 1 - up;
    blurred(x, y, c) = src(x, y, c);
    blurred(x, down, c) = 0.75f * blurred(x, down - 1, c) + 0.25f * src(x, down, c);
    blurred(x, y_up, c) = 0.75f * blurred(x, y_up + 1, c) + 0.25f * blurred(x, y_up, c);
  };
  Func input("input"), cols("cols"), transposed("transposed"), rows("rows"), out("out");
  if (cols_out) *cols_out = cols;
  input(x, y, c) = in(x, y, c);
  scan(input, in.height(), cols);
  transposed(x, y, c) = cols(y, x, c);
  scan(transposed, in.width(), rows);
  out(x, y, c) = rows(y, x, c);
  in.set_estimates({{0, width}, {0, height}, {0, 3}});
  out.set_estimates({{0, width}, {0, height}, {0, 3}});
  return Pipeline(out);
}

// The shape of nl_means: per pixel, a weighted sum over a search window of offsets, each
// weight from the distance between the patch around the pixel and the patch around the
// offset pixel, a box sum (columns, then rows) of squared RGB differences. The distances
// are 4-D Funcs of pixel and offset.
inline Halide::Pipeline patch_window_pipeline(int width = 512, int height = 64) {
  using namespace Halide;
  ImageParam in(Float(32), 3, "in");
  Var x("x"), y("y"), dx("dx"), dy("dy");
  Func clamped = BoundaryConditions::repeat_edge(in);
  Func diff("diff"), blur_y("blur_y"), blur_x("blur_x"), weight("weight"), acc("acc"), out("out");
  Expr d = 0.0f;
  for (int c = 0; c < 3; ++c) {
    Expr dc = clamped(x, y, c) - clamped(x + dx, y + dy, c);
    d += dc * dc;
  }
  diff(x, y, dx, dy) = d;
  RDom p(-1, 3, "p");
  blur_y(x, y, dx, dy) = 0.0f;
  blur_y(x, y, dx, dy) += diff(x, y + p, dx, dy);
  blur_x(x, y, dx, dy) = 0.0f;
  blur_x(x, y, dx, dy) += blur_y(x + p, y, dx, dy);
  weight(x, y, dx, dy) = exp(-blur_x(x, y, dx, dy));
  RDom s(-2, 5, -2, 5, "s");
  Expr w = weight(x, y, s.x, s.y);
  Expr luma =
      clamped(x + s.x, y + s.y, 0) + clamped(x + s.x, y + s.y, 1) + clamped(x + s.x, y + s.y, 2);
  acc(x, y) = Tuple(0.0f, 0.0f);
  acc(x, y) = Tuple(acc(x, y)[0] + w * luma, acc(x, y)[1] + w);
  out(x, y) = acc(x, y)[0] / acc(x, y)[1];
  in.set_estimates({{0, width}, {0, height}, {0, 3}});
  out.set_estimates({{0, width}, {0, height}});
  return Pipeline(out);
}

// image_stats' shape in small: per-plane statistics of a uint8 image (x, y, c), a Tuple of
// exact integer sums (sum, sum of squares) and a Tuple of extrema per channel, each an
// associative reduction of a whole plane into one point of c: what a reduction in vector
// lanes (StageTiling::reduction_lanes) is for.
inline Halide::Pipeline plane_stats_pipeline(int width = 256, int height = 24) {
  using namespace Halide;
  ImageParam in(UInt(8), 3, "in");
  Var c("c");
  RDom r(0, width, 0, height, "r");
  Func sums("sums"), extrema("extrema"), out("out");
  Expr v = cast<uint32_t>(in(r.x, r.y, c));
  sums(c) = Tuple(cast<uint32_t>(0), cast<uint64_t>(0));
  sums(c) = Tuple(sums(c)[0] + v, sums(c)[1] + cast<uint64_t>(v * v));
  extrema(c) = Tuple(cast<uint8_t>(255), cast<uint8_t>(0));
  extrema(c) = Tuple(min(extrema(c)[0], in(r.x, r.y, c)), max(extrema(c)[1], in(r.x, r.y, c)));
  out(c) = cast<float>(sums(c)[0]) + cast<float>(sums(c)[1]) * 1e-3f +
           cast<float>(extrema(c)[0]) - cast<float>(extrema(c)[1]);
  in.set_estimates({{0, width}, {0, height}, {0, 3}});
  out.set_estimates({{0, 3}});
  return Pipeline(out);
}

}  // namespace protuner::testing
