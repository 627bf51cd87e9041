// Local Laplacian filter (Paris, Hasinoff and Kautz 2011), in its fast form that remaps
// the image at a few sampled intensity levels and interpolates between them. It is in the
// suite because it is the deepest pipeline of the set: a Gaussian pyramid per intensity
// level, Laplacian pyramids, a data-dependent blend and a collapse, with stages whose sizes
// span three orders of magnitude.
#include "Halide.h"

#include <string>
#include <vector>

namespace protuner_apps {
namespace {

using namespace Halide;

class LocalLaplacian : public Generator<LocalLaplacian> {
 public:
  GeneratorParam<int> pyramid_levels{"pyramid_levels", 8, 2, 12};

  Input<Buffer<uint16_t>> input{"input", 3};
  // Number of sampled intensity levels; at least 2.
  Input<int> levels{"levels"};
  // Detail exponent: below 1 enhances detail, above 1 smooths it.
  Input<float> alpha{"alpha"};
  // Edge slope: below 1 compresses large-scale contrast, above 1 expands it.
  Input<float> beta{"beta"};
  Output<Buffer<uint16_t>> output{"output", 3};

  void generate() {
    const int J = pyramid_levels;
    Func clamped = BoundaryConditions::repeat_edge(input);
    colour(x, y, c) = cast<float>(clamped(x, y, c)) / 65535.0f;
    gray(x, y) = 0.299f * colour(x, y, 0) + 0.587f * colour(x, y, 1) + 0.114f * colour(x, y, 2);

    define_remap();
    // The intensity levels are 1 / (levels - 1) apart; gray is quantized to 1/256 of that.
    Expr gray_index = cast<int>(gray(x, y) * cast<float>(levels - 1) * 256.0f + 0.5f);
    Expr offset = clamp(gray_index - k * 256, -max_offset(), max_offset());
    Expr level_spacing = 1.0f / cast<float>(levels - 1);
    remapped(x, y, k) = (cast<float>(k) + remap(offset)) * level_spacing;

    // Gaussian pyramids of the remapped images and of the input, Laplacian pyramids of
    // the remapped images.
    g_pyramid = make_levels("g_pyramid", J);
    g_down_x = make_levels("g_down_x", J);
    g_pyramid[0] = remapped;
    in_pyramid = make_levels("in_pyramid", J);
    in_down_x = make_levels("in_down_x", J);
    in_pyramid[0] = gray;
    for (int j = 1; j < J; j++) {
      g_pyramid[j](x, y, k) = downsample(g_pyramid[j - 1], g_down_x[j], j - 1, k);
      in_pyramid[j](x, y) = downsample(in_pyramid[j - 1], in_down_x[j], j - 1, Expr());
    }
    l_pyramid = make_levels("l_pyramid", J);
    g_up_x = make_levels("g_up_x", J);
    l_pyramid[J - 1] = g_pyramid[J - 1];
    for (int j = 0; j < J - 1; j++) {
      l_pyramid[j](x, y, k) =
          g_pyramid[j](x, y, k) - upsample(g_pyramid[j + 1], g_up_x[j], j + 1, k);
    }

    // Each output coefficient comes from the remapped images whose level brackets the
    // input's own pyramid value there; then the output pyramid collapses.
    out_l_pyramid = make_levels("out_l_pyramid", J);
    for (int j = 0; j < J; j++) {
      Expr level = in_pyramid[j](x, y) * cast<float>(levels - 1);
      Expr li = clamp(cast<int>(level), 0, levels - 2);
      Expr lf = level - cast<float>(li);
      out_l_pyramid[j](x, y) =
          (1.0f - lf) * l_pyramid[j](x, y, li) + lf * l_pyramid[j](x, y, li + 1);
    }
    out_g_pyramid = make_levels("out_g_pyramid", J);
    out_up_x = make_levels("out_up_x", J);
    out_g_pyramid[J - 1] = out_l_pyramid[J - 1];
    for (int j = J - 2; j >= 0; j--) {
      out_g_pyramid[j](x, y) =
          upsample(out_g_pyramid[j + 1], out_up_x[j], j + 1, Expr()) + out_l_pyramid[j](x, y);
    }

    // Scale the colour by the change in gray; the offset keeps dark pixels stable.
    const float eps = 0.01f;
    Expr ratio = (out_g_pyramid[0](x, y) + eps) / (gray(x, y) + eps);
    Expr result = clamp((colour(x, y, c) + eps) * ratio - eps, 0.0f, 1.0f);
    output(x, y, c) = cast<uint16_t>(result * 65535.0f + 0.5f);

    input.set_estimates({{0, width_estimate}, {0, height_estimate}, {0, 3}});
    levels.set_estimate(8);
    alpha.set_estimate(1.0f);
    beta.set_estimate(1.0f);
    output.set_estimates({{0, width_estimate}, {0, height_estimate}, {0, 3}});
  }

  void schedule() {
    if (!auto_schedule) {
      schedule_expert();
    }
  }

 private:
  // 1536x2560 as in the Halide autoscheduler papers (Adams 2019, Anderson 2021).
  static constexpr int width_estimate = 1536, height_estimate = 2560;

  Var x{"x"}, y{"y"}, c{"c"}, k{"k"}, i{"i"};
  Var yo{"yo"}, yi{"yi"}, task{"task"};
  Func colour{"colour"}, gray{"gray"}, remap{"remap"}, remapped{"remapped"};
  std::vector<Func> g_pyramid, in_pyramid, l_pyramid, out_l_pyramid, out_g_pyramid;
  // The horizontal passes of the resampling filters that produce level j.
  std::vector<Func> g_down_x, in_down_x, g_up_x, out_up_x;

  static std::vector<Func> make_levels(const std::string &name, int count) {
    std::vector<Func> funcs;
    for (int j = 0; j < count; j++) {
      funcs.emplace_back(name + "_" + std::to_string(j));
    }
    return funcs;
  }

  // Offsets between gray and a level span +-(levels - 1) level spacings.
  Expr max_offset() { return (levels - 1) * 256; }

  // Paris et al.'s remapping curve as a lookup table over the offset from a level, in
  // units of the level spacing: offsets within one spacing are detail, raised to alpha;
  // larger ones are edges, whose excess is scaled by beta.
  void define_remap() {
    Expr t = abs(cast<float>(i)) / 256.0f;
    Expr magnitude = select(t <= 1.0f, pow(t, alpha), beta * (t - 1.0f) + 1.0f);
    remap(i) = select(i < 0, -magnitude, magnitude);
  }

  // Reads of pyramid level j clamp to its size, (input size) / 2^j rounded up, so that the
  // filter margins do not grow from level to level.
  Expr at_level(Func f, int j, Expr px, Expr py, Expr pk) {
    Expr width = (input.width() + (1 << j) - 1) >> j;
    Expr height = (input.height() + (1 << j) - 1) >> j;
    px = clamp(px, 0, width - 1);
    py = clamp(py, 0, height - 1);
    return pk.defined() ? f(px, py, pk) : f(px, py);
  }

  // The pyramids of remapped images have a third dimension, the intensity level k.
  std::vector<Var> args_with(Expr pk) {
    if (pk.defined()) {
      return {x, y, k};
    }
    return {x, y};
  }

  // Level j + 1 from level j with Burt and Adelson's [1 4 6 4 1] / 16 filter, centred on
  // every other pixel. `h` receives the horizontal pass.
  Expr downsample(Func f, Func h, int j, Expr pk) {
    auto tap_x = [&](int dx) { return at_level(f, j, 2 * x + dx, y, pk); };
    h(args_with(pk)) =
        (tap_x(-2) + 4.0f * tap_x(-1) + 6.0f * tap_x(0) + 4.0f * tap_x(1) + tap_x(2)) / 16.0f;
    auto tap_y = [&](int dy) { return pk.defined() ? h(x, 2 * y + dy, k) : h(x, 2 * y + dy); };
    return (tap_y(-2) + 4.0f * tap_y(-1) + 6.0f * tap_y(0) + 4.0f * tap_y(1) + tap_y(2)) / 16.0f;
  }

  // Level j doubled, bilinearly: coarse pixel i sits on fine pixel 2i, so even fine pixels
  // copy it and odd ones average their two coarse neighbours. `h` receives the horizontal
  // pass.
  Expr upsample(Func f, Func h, int j, Expr pk) {
    h(args_with(pk)) = 0.5f * (at_level(f, j, x / 2, y, pk) + at_level(f, j, (x + 1) / 2, y, pk));
    auto tap_y = [&](Expr py) { return pk.defined() ? h(x, py, k) : h(x, py); };
    return 0.5f * (tap_y(y / 2) + tap_y((y + 1) / 2));
  }

  void schedule_expert();
  void schedule_level(Func f, Func h, int j, bool has_k);
};

// Every pyramid level is computed once, at root, and the blend reads the Laplacian pyramids
// inline: it needs them at only two of the intensity levels per pixel, so storing all of
// them would be wasted work.
void LocalLaplacian::schedule_expert() {
  const int vec = natural_vector_size<float>();
  const int J = pyramid_levels;
  remap.compute_root().vectorize(i, vec);
  schedule_level(gray, Func(), 0, false);
  for (int j = 1; j < J; j++) {
    schedule_level(g_pyramid[j], g_down_x[j], j, true);
    schedule_level(in_pyramid[j], in_down_x[j], j, false);
  }
  // The first downsampling reads each remapped pixel five times; staging the remapped
  // rows of a task once (its own copy, as the blend also reads remapped) is cheaper.
  remapped.in(g_down_x[1]).compute_at(g_pyramid[1], task).vectorize(x, vec);
  for (int j = J - 2; j >= 1; j--) {
    schedule_level(out_g_pyramid[j], out_up_x[j], j, false);
  }
  output.bound(c, 0, 3).reorder(c, x, y).unroll(c);
  output.split(y, yo, yi, 8).parallel(yo).vectorize(x, vec);
  out_g_pyramid[0].compute_at(output, yo).vectorize(x, vec);
  out_up_x[0].compute_at(output, yo).vectorize(x, vec);
}

// Level j of a pyramid, `f`, is computed in strips of rows (and, for the remapped pyramids,
// per intensity level), with its horizontal filter pass `h` computed per strip. Coarse
// levels get no threads over rows, and levels narrower than a vector stay scalar, since
// vectorizing them would widen them to a whole vector and grow every finer level that
// feeds them.
void LocalLaplacian::schedule_level(Func f, Func h, int j, bool has_k) {
  const int vec = natural_vector_size<float>();
  const bool vectorized = (width_estimate >> j) >= vec;
  const bool threaded_rows = (height_estimate >> j) >= 64;
  f.compute_root();
  LoopLevel strip = LoopLevel(f, y);
  if (threaded_rows) {
    f.split(y, yo, yi, 8);
    strip = LoopLevel(f, yo);
  }
  if (has_k && threaded_rows) {
    f.reorder(x, yi, yo, k).fuse(yo, k, task).parallel(task);
    strip = LoopLevel(f, task);
  } else if (has_k) {
    // At coarse levels the intensity levels are the only parallelism.
    f.reorder(x, y, k).parallel(k);
  } else if (threaded_rows) {
    f.parallel(yo);
  }
  if (vectorized) {
    f.vectorize(x, vec);
  }
  if (h.defined()) {
    h.compute_at(strip);
    if (vectorized) {
      h.vectorize(x, vec);
    }
  }
}

}  // namespace
}  // namespace protuner_apps

HALIDE_REGISTER_GENERATOR(protuner_apps::LocalLaplacian, local_laplacian)
