// Contrast-limited global histogram equalization of a grayscale uint8 image: a 256-bin
// histogram (an update over an RDom spanning the input), bins clipped at a limit with the
// excess spread evenly, a cumulative-sum scan, and a LUT indexed by pixel value. In the corpus
// for the scatter histogram, the serial scan, a data-dependent LUT lookup, Func::set_estimate
// on the histogram/CDF/LUT, a float scalar input, and a hand schedule that parallelizes the
// histogram with rfactor.
#include "Halide.h"

namespace protuner_corpus {
namespace {

using namespace Halide;

class HistEqualize : public Generator<HistEqualize> {
 public:
  Input<Buffer<uint8_t>> input{"input", 2};
  Input<float> clip_limit{"clip_limit"};  // as a multiple of the mean bin count
  Output<Buffer<uint8_t>> output{"output", 2};

  void generate() {
    RDom r(0, input.dim(0).extent(), 0, input.dim(1).extent(), "r");
    Expr px = input(r.x + input.dim(0).min(), r.y + input.dim(1).min());
    hist(i) = 0;
    hist(clamp(cast<int>(px), 0, 255)) += 1;

    Expr pixels = input.dim(0).extent() * input.dim(1).extent();
    Expr limit = max(1, cast<int>(clip_limit * cast<float>(pixels) / 256.0f));
    RDom b(0, 256, "b");
    excess() = 0;
    excess() += max(hist(b) - limit, 0);
    clipped(i) = cast<float>(min(hist(i), limit)) + cast<float>(excess()) / 256.0f;

    RDom s(1, 255, "s");
    cdf(i) = clipped(i);
    cdf(s) = cdf(s - 1) + clipped(s);

    lut(i) = cast<uint8_t>(clamp(cdf(i) * (255.0f / max(cdf(255), 1.0f)) + 0.5f, 0.0f, 255.0f));
    output(x, y) = lut(cast<int>(input(x, y)));

    input.set_estimates({{0, 2048}, {0, 2048}});
    clip_limit.set_estimate(3.0f);
    output.set_estimates({{0, 2048}, {0, 2048}});
    hist.set_estimate(i, 0, 256);
    cdf.set_estimate(i, 0, 256);
    lut.set_estimate(i, 0, 256);

    if (!auto_schedule) {
      const int vec = natural_vector_size<uint8_t>();
      // Histogram: one partial histogram per band of 64 rows, bands in parallel, then a
      // vectorized sum of the partials.
      RVar ryo{"ryo"}, ryi{"ryi"};
      Var band{"band"};
      Func partial = hist.update().split(r.y, ryo, ryi, 64).rfactor(ryo, band);
      partial.compute_root().vectorize(i, 16);
      partial.update().parallel(band);
      hist.compute_root().vectorize(i, 16);
      hist.update(0).vectorize(i, 16);
      // The 256-entry tail of the pipeline is tiny: compute it once, serially.
      excess.compute_root();
      cdf.compute_root();
      lut.compute_root().vectorize(i, 16);
      Var yo{"yo"}, yi{"yi"};
      output.split(y, yo, yi, 64).parallel(yo).vectorize(x, vec);
    }
  }

 private:
  Var x{"x"}, y{"y"}, i{"i"};
  Func hist{"hist"}, excess{"excess"}, clipped{"clipped"}, cdf{"cdf"}, lut{"lut"};
};

}  // namespace
}  // namespace protuner_corpus

HALIDE_REGISTER_GENERATOR(protuner_corpus::HistEqualize, hist_equalize)
