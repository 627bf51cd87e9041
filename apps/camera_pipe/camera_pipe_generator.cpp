// Camera pipeline: turns a 10-bit GRBG Bayer raw frame into an 8-bit RGB image (hot-pixel
// suppression, edge-aware demosaic, colour correction, tone curve, sharpening). It is in the
// suite because it is a long chain of cheap integer stencils with stride-2 deinterleaving
// and interleaving, where fusion and tiling decide performance.
#include "Halide.h"

namespace protuner_apps {
namespace {

using namespace Halide;

// The output lies this far inside the raw frame (even, to keep the Bayer phase), so no
// stencil of the pipeline reads outside the sensor: 2592x1968 raw -> 2560x1920 RGB.
constexpr int kOffsetX = 16;
constexpr int kOffsetY = 24;

Expr avg2(Expr a, Expr b) { return (a + b) >> 1; }

class CameraPipe : public Generator<CameraPipe> {
 public:

  Input<Buffer<uint16_t>> raw{"raw", 2};
  Input<float> color_temp{"color_temp"};
  // 4x3 colour matrices (column 3 is an offset in raw levels), calibrated at 3200K and 7000K.
  Input<Buffer<float>> matrix_3200{"matrix_3200", 2};
  Input<Buffer<float>> matrix_7000{"matrix_7000", 2};
  Input<float> gamma{"gamma"};
  Input<float> contrast{"contrast"};
  Input<int> black_level{"black_level"};
  Input<int> white_level{"white_level"};
  Input<float> sharpen_strength{"sharpen_strength"};
  Output<Buffer<uint8_t>> output{"output", 3};

  void generate() {
    suppress_hot_pixels();
    deinterleave();
    demosaic();
    color_correct();
    apply_curve();
    sharpen();
    set_all_estimates();
  }

  void schedule() {
    if (!auto_schedule) {
      const int vec = natural_vector_size<int16_t>();
      // The tone curve and the colour matrix are tiny and shared by every pixel.
      curve.compute_root().vectorize(x, vec);
      matrix.compute_root();
      // Everything else is fused into tiles of the output, sized so that the int16
      // intermediates of one tile stay in L2.
      Var xo("xo"), yo("yo"), xi("xi"), yi("yi");
      output.reorder(c, x, y).bound(c, 0, 3).unroll(c);
      output.tile(x, y, xo, yo, xi, yi, 256, 32).parallel(yo).vectorize(xi, vec);
      for (Func f : {denoised, gr, r, b, gb, g_at_r, g_at_b, rd, bd}) {
        f.compute_at(output, xo).vectorize(x, vec);
      }
      for (Func f : {demosaicked, curved}) {
        f.compute_at(output, xo).reorder(c, x, y).unroll(c).vectorize(x, vec);
      }
    }
  }

 private:
  Var x{"x"}, y{"y"}, c{"c"};
  Func denoised{"denoised"};
  // Half-resolution colour planes, one sample per 2x2 Bayer quad (GRBG order).
  Func gr{"gr"}, r{"r"}, b{"b"}, gb{"gb"};
  Func g_at_r{"g_at_r"}, g_at_b{"g_at_b"}, rd{"rd"}, bd{"bd"};
  Func demosaicked{"demosaicked"}, matrix{"matrix"}, corrected{"corrected"};
  Func curve{"curve"}, curved{"curved"};

  // Clamps each pixel into the range of its four nearest same-colour neighbours, removing
  // isolated hot and dead pixels.
  void suppress_hot_pixels() {
    Func shifted("shifted");
    shifted(x, y) = raw(x + kOffsetX, y + kOffsetY);
    Expr n = shifted(x, y - 2), s = shifted(x, y + 2);
    Expr w = shifted(x - 2, y), e = shifted(x + 2, y);
    denoised(x, y) = clamp(shifted(x, y), min(min(n, s), min(w, e)), max(max(n, s), max(w, e)));
  }

  // Black-subtracted int16 planes; negative values are kept so that noise averages out.
  void deinterleave() {
    Expr black = cast<int16_t>(black_level);
    auto plane = [&](int dx, int dy) {
      return cast<int16_t>(denoised(2 * x + dx, 2 * y + dy)) - black;
    };
    gr(x, y) = plane(0, 0);
    r(x, y) = plane(1, 0);
    b(x, y) = plane(0, 1);
    gb(x, y) = plane(1, 1);
  }

  // Averages two opposite neighbours along the direction with the smaller difference, so
  // that interpolation runs along edges rather than across them.
  static Expr directional(Expr h0, Expr h1, Expr v0, Expr v1) {
    Expr dh = absd(h0, h1), dv = absd(v0, v1);
    return select(dh < dv, avg2(h0, h1), dv < dh, avg2(v0, v1), avg2(avg2(h0, h1), avg2(v0, v1)));
  }

  // Green is interpolated edge-aware; red and blue are interpolated as differences from
  // green, which are smooth even where the colours themselves are not.
  void demosaic() {
    g_at_r(x, y) = directional(gr(x, y), gr(x + 1, y), gb(x, y - 1), gb(x, y));
    g_at_b(x, y) = directional(gb(x - 1, y), gb(x, y), gr(x, y), gr(x, y + 1));
    rd(x, y) = r(x, y) - g_at_r(x, y);
    bd(x, y) = b(x, y) - g_at_b(x, y);

    Expr r_at_gr = gr(x, y) + avg2(rd(x - 1, y), rd(x, y));
    Expr r_at_gb = gb(x, y) + avg2(rd(x, y), rd(x, y + 1));
    Expr r_at_b =
        g_at_b(x, y) + avg2(avg2(rd(x - 1, y), rd(x, y)), avg2(rd(x - 1, y + 1), rd(x, y + 1)));
    Expr b_at_gr = gr(x, y) + avg2(bd(x, y - 1), bd(x, y));
    Expr b_at_gb = gb(x, y) + avg2(bd(x, y), bd(x + 1, y));
    Expr b_at_r =
        g_at_r(x, y) + avg2(avg2(bd(x, y - 1), bd(x + 1, y - 1)), avg2(bd(x, y), bd(x + 1, y)));

    // Back to full resolution: pick the value for this pixel's position in its quad.
    Func red("red"), green("green"), blue("blue");
    red(x, y) = interleave(r_at_gr, r(x, y), r_at_b, r_at_gb);
    green(x, y) = interleave(gr(x, y), g_at_r(x, y), g_at_b(x, y), gb(x, y));
    blue(x, y) = interleave(b_at_gr, b_at_r, b(x, y), b_at_gb);
    demosaicked(x, y, c) = mux(c, {red(x, y), green(x, y), blue(x, y)});
  }

  // Builds a full-resolution value from the four per-quad values (given as expressions of
  // quad coordinates x, y) in GRBG order.
  Expr interleave(Expr top_left, Expr top_right, Expr bottom_left, Expr bottom_right) {
    auto at_quad = [&](Expr e) { return substitute({{x.name(), x / 2}, {y.name(), y / 2}}, e); };
    Expr even_x = x % 2 == 0;
    return select(y % 2 == 0, select(even_x, at_quad(top_left), at_quad(top_right)),
                  select(even_x, at_quad(bottom_left), at_quad(bottom_right)));
  }

  // The sensor's colour matrix, interpolated in inverse colour temperature between the two
  // calibrations, in 8.8 fixed point.
  void color_correct() {
    Expr alpha = (1.f / color_temp - 1.f / 3200) / (1.f / 7000 - 1.f / 3200);
    Expr m = matrix_3200(x, y) + (matrix_7000(x, y) - matrix_3200(x, y)) * alpha;
    matrix(x, y) = cast<int32_t>(round(m * 256.f));

    Expr sum = matrix(3, c);
    for (int k = 0; k < 3; k++) {
      sum += matrix(k, c) * cast<int32_t>(demosaicked(x, y, k));
    }
    corrected(x, y, c) = cast<int16_t>(clamp((sum + 128) >> 8, -32768, 32767));
  }

  // Gamma followed by an S-shaped contrast curve, tabulated over every linear level between
  // black and white so the per-pixel cost is one lookup.
  void apply_curve() {
    Expr range = max(white_level - black_level, 1);
    Expr v = clamp(cast<float>(x) / cast<float>(range), 0.f, 1.f);
    Expr g = pow(v, 1.f / gamma);
    Expr s_curve = g * g * (3.f - 2.f * g);
    Expr k = clamp(contrast / 100.f, 0.f, 1.f);
    Expr toned = g + (s_curve - g) * k;
    curve(x) = cast<uint8_t>(clamp(toned * 255.f + 0.5f, 0.f, 255.f));

    Expr index = clamp(cast<int32_t>(corrected(x, y, c)), 0, range);
    curved(x, y, c) = cast<int16_t>(curve(index));
  }

  // Unsharp mask: adds back the difference from a [1 2 1]^2 blur, scaled by the strength
  // in 4 fractional bits (capped so the product fits in int16).
  void sharpen() {
    Func blur_x("blur_x"), blur_y("blur_y");
    blur_x(x, y, c) = curved(x - 1, y, c) + 2 * curved(x, y, c) + curved(x + 1, y, c);
    blur_y(x, y, c) = (blur_x(x, y - 1, c) + 2 * blur_x(x, y, c) + blur_x(x, y + 1, c) + 8) >> 4;
    Expr strength = cast<int16_t>(clamp(round(sharpen_strength * 16.f), 0.f, 127.f));
    Expr detail = curved(x, y, c) - blur_y(x, y, c);
    output(x, y, c) = saturating_cast<uint8_t>(curved(x, y, c) + ((detail * strength) >> 4));
  }

  void set_all_estimates() {
    raw.set_estimates({{0, 2592}, {0, 1968}});
    matrix_3200.set_estimates({{0, 4}, {0, 3}});
    matrix_7000.set_estimates({{0, 4}, {0, 3}});
    color_temp.set_estimate(3700.f);
    gamma.set_estimate(2.0f);
    contrast.set_estimate(50.f);
    black_level.set_estimate(25);
    white_level.set_estimate(1023);
    sharpen_strength.set_estimate(1.0f);
    output.set_estimates({{0, 2560}, {0, 1920}, {0, 3}});
  }
};

}  // namespace
}  // namespace protuner_apps

HALIDE_REGISTER_GENERATOR(protuner_apps::CameraPipe, camera_pipe)
