// Lens blur: synthetic shallow depth of field from a rectified stereo pair. A disparity map
// is estimated by block matching over a cost volume, then every pixel of the left view is
// blurred with a disc whose radius grows with its distance from the focal plane, gathering
// only samples whose own blur covers it. It is in the suite because it joins a large
// reduction over a cost volume with a gather whose footprint depends on the data.
#include <cmath>

#include "Halide.h"

namespace protuner_apps {
namespace {

using namespace Halide;

// Half-width of the box filter applied to the matching cost.
constexpr int kCostRadius = 3;
// Cap on the blur radius in pixels; it bounds the gather's footprint for bounds inference.
constexpr int kMaxBlurRadius = 16;

class LensBlur : public Generator<LensBlur> {
 public:
  // Number of disparities tested.
  GeneratorParam<int> slices{"slices", 32};
  // Number of points in the aperture sampling pattern.
  GeneratorParam<int> samples{"samples", 32};

  // RGB views (planar, channel last); the output blurs the left one.
  Input<Buffer<uint8_t>> left{"left", 3};
  Input<Buffer<uint8_t>> right{"right", 3};
  // Disparity that stays sharp.
  Input<float> focus_depth{"focus_depth"};
  // Blur radius in pixels per unit of disparity away from the focal plane.
  Input<float> blur_radius_scale{"blur_radius_scale"};
  // Points of the pattern actually used per pixel (clamped to [1, samples]); fewer is
  // faster and noisier.
  Input<int> aperture_samples{"aperture_samples"};
  Output<Buffer<float>> output{"output", 3};

  void generate() {
    left_ext = BoundaryConditions::repeat_edge(left);
    right_ext = BoundaryConditions::repeat_edge(right);
    estimate_depth();
    blur_by_depth();
    set_all_estimates();
  }

  void schedule() {
    if (!auto_schedule) {
      const int vec = natural_vector_size<float>();
      Var yo("yo"), yi("yi");
      // The cost volume is never stored: for each strip of rows the disparities are tried
      // one after another, so the cost of one disparity is box-filtered while in cache.
      radius.compute_root().split(y, yo, yi, 16).parallel(yo).vectorize(x, vec);
      depth_search.compute_at(radius, yo).vectorize(x, vec);
      depth_search.update().reorder(x, y, rz).vectorize(x, vec);
      cost_x.compute_at(depth_search, rz).vectorize(x, natural_vector_size<uint16_t>());
      // Copying each strip of the views once saves the edge clamps on every cost load.
      for (Func view : {left_ext, right_ext}) {
        Func copy = view.in(cost);
        copy.compute_at(radius, yo).vectorize(copy.args()[0], natural_vector_size<uint8_t>());
      }
      // The gather reads at data-dependent offsets; it runs sample by sample over a row of
      // pixels, vectorized across the row. The taps stay inlined: recomputing them for each
      // sum is cheaper than storing and reloading them.
      output.reorder(c, x, y).bound(c, 0, 3).unroll(c);
      output.split(y, yo, yi, 8).parallel(yo).vectorize(x, vec);
      accum.compute_at(output, yi).vectorize(x, vec);
      accum.update().reorder(x, s).vectorize(x, vec);
    }
  }

 private:
  Var x{"x"}, y{"y"}, z{"z"}, c{"c"}, i{"i"};
  RDom rz, s;
  Func left_ext{"left_ext"}, right_ext{"right_ext"};
  Func color{"color"}, cost{"cost"}, cost_x{"cost_x"}, depth_search{"depth_search"},
      radius{"radius"}, tap{"tap"};
  Func accum{"accum"};

  // Winner-takes-all block matching: the disparity z minimizing the box-filtered sum of
  // absolute colour differences between left(x) and right(x - z).
  void estimate_depth() {
    Expr diff = cast<uint16_t>(0);
    for (int ch = 0; ch < 3; ch++) {
      diff += cast<uint16_t>(absd(left_ext(x, y, ch), right_ext(x - z, y, ch)));
    }
    cost(x, y, z) = diff;
    // At most 3 * 255 * (2 * kCostRadius + 1)^2 = 37485, so uint16 sums do not overflow.
    Expr row_sum = cost(x - kCostRadius, y, z);
    for (int d = 1 - kCostRadius; d <= kCostRadius; d++) row_sum += cost(x + d, y, z);
    cost_x(x, y, z) = row_sum;
    Expr box_sum = cost_x(x, y - kCostRadius, z);
    for (int d = 1 - kCostRadius; d <= kCostRadius; d++) box_sum += cost_x(x, y + d, z);

    rz = RDom(0, slices, "rz");
    Expr cost_box = substitute(z.name(), rz, box_sum);
    depth_search(x, y) = Tuple(0, cast<uint16_t>(65535));
    Expr best_z = depth_search(x, y)[0], best_cost = depth_search(x, y)[1];
    Expr better = cost_box < best_cost;
    depth_search(x, y) = Tuple(select(better, rz, best_z), select(better, cost_box, best_cost));

    Expr disparity = cast<float>(depth_search(x, y)[0]);
    radius(x, y) = clamp(abs(disparity - focus_depth) * blur_radius_scale, 0.f,
                         static_cast<float>(kMaxBlurRadius));
  }

  // Clamps a gather position to the largest possible blur disc around pos. The clamp is a
  // no-op on valid positions; it tells bounds inference how far the gather can reach.
  static Expr within_reach(Expr pos, Expr q) {
    return clamp(q, pos - kMaxBlurRadius, pos + kMaxBlurRadius);
  }

  // Unit directions of a golden-angle spiral: any prefix of it covers the disc evenly.
  Buffer<float> spiral_directions() {
    const int n = samples;
    const double golden_angle = 3.14159265358979323846 * (3.0 - std::sqrt(5.0));
    Buffer<float> dirs({n, 2}, "spiral_directions");
    for (int i = 0; i < n; i++) {
      dirs(i, 0) = static_cast<float>(std::cos(i * golden_angle));
      dirs(i, 1) = static_cast<float>(std::sin(i * golden_angle));
    }
    return dirs;
  }

  // Gathers the first n spiral points, spaced at equal-area radii over this pixel's disc. A
  // sample counts only if its own blur disc reaches this pixel (so sharp foreground does
  // not smear), weighted by the inverse area of that disc so that energy is conserved.
  void blur_by_depth() {
    color(x, y, c) = cast<float>(left_ext(x, y, c)) / 255.f;

    // Tap i of pixel (x, y): its weight and the position it reads.
    Buffer<float> dirs = spiral_directions();
    Expr n = clamp(aperture_samples, 1, static_cast<int>(samples));
    Expr rp = radius(x, y);
    Expr dist = sqrt((cast<float>(i) + 0.5f) / cast<float>(n)) * rp;
    auto offset = [&](Expr pos, int axis) {
      return within_reach(pos, pos + cast<int>(round(dirs(i, Expr(axis)) * dist)));
    };
    Expr qx = offset(x, 0), qy = offset(y, 1);
    Expr rq = radius(qx, qy);
    tap(x, y, i) = Tuple(select(rq >= dist, 1.f / (1.f + rq * rq), 0.f), qx, qy);

    Expr w_center = 1.f / (1.f + rp * rp);
    std::vector<Expr> init, update;
    for (int ch = 0; ch < 3; ch++) init.push_back(w_center * color(x, y, ch));
    init.push_back(w_center);
    accum(x, y) = Tuple(init);
    s = RDom(0, samples, "s");
    s.where(s < n);
    Expr w = tap(x, y, s)[0];
    Expr tx = within_reach(x, tap(x, y, s)[1]), ty = within_reach(y, tap(x, y, s)[2]);
    for (int ch = 0; ch < 3; ch++) update.push_back(accum(x, y)[ch] + w * color(tx, ty, ch));
    update.push_back(accum(x, y)[3] + w);
    accum(x, y) = Tuple(update);

    output(x, y, c) = mux(c, {accum(x, y)[0], accum(x, y)[1], accum(x, y)[2]}) / accum(x, y)[3];
  }

  void set_all_estimates() {
    left.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});
    right.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});
    focus_depth.set_estimate(13.f);
    blur_radius_scale.set_estimate(0.5f);
    aperture_samples.set_estimate(32);
    output.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});
  }
};

}  // namespace
}  // namespace protuner_apps

HALIDE_REGISTER_GENERATOR(protuner_apps::LensBlur, lens_blur)
