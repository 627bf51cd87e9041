// Multi-scale interpolation (push-pull hole filling): pixels with alpha 0 are unknown and
// get filled from coarser levels of an alpha-weighted pyramid. It is in the suite because
// its many small pyramid levels reward different schedules per level (parallel and
// vectorized at fine levels, cheap and serial at coarse ones).
#include "Halide.h"

#include <string>
#include <vector>

namespace protuner_apps {
namespace {

using namespace Halide;

class Interpolate : public Generator<Interpolate> {
 public:
  // Number of pyramid levels, including the full-resolution one.
  GeneratorParam<int> levels{"levels", 10, 2, 16};

  // RGBA, channel 3 is alpha: how much each pixel's colour is known.
  Input<Buffer<float>> input{"input", 3};
  Output<Buffer<float>> output{"output", 3};

  void generate() {
    downsampled = make_levels("downsampled");
    downsampled_x = make_levels("downsampled_x");
    filled = make_levels("filled");
    upsampled_x = make_levels("upsampled_x");

    downsampled[0](x, y, c) = select(c < 3, input(x, y, c) * input(x, y, 3), input(x, y, 3));
    for (int l = 1; l < levels; l++) {
      downsampled[l](x, y, c) = downsample(l);
    }

    // Going back up, each level keeps what it knows (weighted by its alpha) and takes
    // the rest from the filled level below it.
    filled[levels - 1] = downsampled[levels - 1];
    for (int l = levels - 2; l >= 0; l--) {
      Expr alpha = downsampled[l](x, y, 3);
      filled[l](x, y, c) = downsampled[l](x, y, c) + (1.0f - alpha) * upsample(l);
    }

    output(x, y, c) = filled[0](x, y, c) / filled[0](x, y, 3);

    input.set_estimates({{0, width_estimate}, {0, height_estimate}, {0, 4}});
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

  Var x{"x"}, y{"y"}, c{"c"}, yo{"yo"}, yi{"yi"};
  // Level l of each; the _x Funcs are the horizontal passes that produce level l.
  std::vector<Func> downsampled, downsampled_x, filled, upsampled_x;

  std::vector<Func> make_levels(const std::string &name) {
    std::vector<Func> funcs;
    for (int l = 0; l < levels; l++) {
      funcs.emplace_back(name + "_" + std::to_string(l));
    }
    return funcs;
  }

  // Reads of level l clamp to its size, (input size) / 2^l rounded up. Without this the
  // margins that each filter tap adds would double at every level on the way down, and
  // the coarse levels would make the fine ones compute far outside the image.
  Func clamp_to_level(Func f, int l) {
    Expr width = (input.width() + (1 << l) - 1) >> l;
    Expr height = (input.height() + (1 << l) - 1) >> l;
    Func clamped{"clamped_" + f.name()};
    clamped(x, y, c) = f(clamp(x, 0, width - 1), clamp(y, 0, height - 1), c);
    return clamped;
  }

  // Level l from level l - 1: a separable [1 2 1] / 4 filter centred on every other pixel.
  Expr downsample(int l) {
    Func in = clamp_to_level(downsampled[l - 1], l - 1);
    Func h = downsampled_x[l];
    h(x, y, c) = (in(2 * x - 1, y, c) + 2.0f * in(2 * x, y, c) + in(2 * x + 1, y, c)) * 0.25f;
    return (h(x, 2 * y - 1, c) + 2.0f * h(x, 2 * y, c) + h(x, 2 * y + 1, c)) * 0.25f;
  }

  // Filled level l + 1 doubled to the size of level l, bilinearly. Coarse pixel i sits on
  // fine pixel 2i (the downsampling filter is centred there), so even fine pixels copy
  // it and odd ones average their two coarse neighbours.
  Expr upsample(int l) {
    Func in = clamp_to_level(filled[l + 1], l + 1);
    Func h = upsampled_x[l];
    h(x, y, c) = 0.5f * (in(x / 2, y, c) + in((x + 1) / 2, y, c));
    return 0.5f * (h(x, y / 2, c) + h(x, (y + 1) / 2, c));
  }

  void schedule_expert();
  void schedule_level(Func f, Func h, int l);
  void all_channels(Func f, int l);
};

// Every level is computed once, at root, except the finest, which the output computes per
// strip of rows as it normalizes it.
void Interpolate::schedule_expert() {
  for (int l = 1; l < levels; l++) {
    schedule_level(downsampled[l], downsampled_x[l], l);
  }
  // The coarsest filled level is the coarsest downsampled one, already scheduled.
  for (int l = levels - 2; l >= 1; l--) {
    schedule_level(filled[l], upsampled_x[l], l);
  }
  output.bound(c, 0, 3).reorder(c, x, y).unroll(c);
  output.split(y, yo, yi, 8).parallel(yo).vectorize(x, natural_vector_size<float>());
  for (Func f : {filled[0], upsampled_x[0]}) {
    all_channels(f, 0);
    f.compute_at(output, yo);
  }
}

// Level l, `f`, is computed in strips of rows, each with its horizontal pass `h`. Levels
// of fewer than 64 rows are too small to be worth threads.
void Interpolate::schedule_level(Func f, Func h, int l) {
  all_channels(f, l);
  all_channels(h, l);
  f.compute_root();
  if ((height_estimate >> l) >= 64) {
    f.split(y, yo, yi, 8).parallel(yo);
    h.compute_at(f, yo);
  } else {
    h.compute_at(f, y);
  }
}

// All four channels of a pixel are computed together, as they read the same taps. Levels
// narrower than a vector stay scalar: vectorizing them would widen them to a whole vector,
// and that widening would grow every finer level that feeds them.
void Interpolate::all_channels(Func f, int l) {
  const int vec = natural_vector_size<float>();
  f.bound(c, 0, 4).reorder(c, x, y).unroll(c);
  if ((width_estimate >> l) >= vec) {
    f.vectorize(x, vec);
  }
}

}  // namespace
}  // namespace protuner_apps

HALIDE_REGISTER_GENERATOR(protuner_apps::Interpolate, interpolate)
