// Per-image, per-channel statistics over a batch of uint8 RGB images stored (x, y, c, n):
// mean, variance, and the minimum and maximum. In the corpus for its reductions of a large
// domain (every pixel) to a tiny output (3 x 8 values), Tuple-valued reductions (sum with sum of
// squares, exact in integers; min with max), several outputs, a batch dimension outermost, and a
// constrained output dimension (extrema.dim(0).set_bounds(0, 2)). The hand schedule vectorizes
// the reductions with rfactor.
#include "Halide.h"

namespace protuner_corpus {
namespace {

using namespace Halide;

class ImageStats : public Generator<ImageStats> {
 public:
  Input<Buffer<uint8_t>> images{"images", 4};
  Output<Buffer<float>> mean{"mean", 2};
  Output<Buffer<float>> variance{"variance", 2};
  Output<Buffer<uint8_t>> extrema{"extrema", 3};

  void generate() {
    RDom r(images.dim(0).min(), images.dim(0).extent(), images.dim(1).min(),
           images.dim(1).extent(), "r");
    Expr v = images(r.x, r.y, c, n);
    moments(c, n) = Tuple(cast<uint32_t>(0), cast<uint64_t>(0));
    moments(c, n) = Tuple(moments(c, n)[0] + cast<uint32_t>(v),
                          moments(c, n)[1] + cast<uint64_t>(cast<uint32_t>(v) * cast<uint32_t>(v)));
    range(c, n) = Tuple(cast<uint8_t>(255), cast<uint8_t>(0));
    range(c, n) = Tuple(min(range(c, n)[0], v), max(range(c, n)[1], v));

    Expr count = cast<double>(images.dim(0).extent()) * cast<double>(images.dim(1).extent());
    Expr m = cast<double>(moments(c, n)[0]) / count;
    mean(c, n) = cast<float>(m);
    variance(c, n) = cast<float>(max(cast<double>(moments(c, n)[1]) / count - m * m, Expr(0.0)));
    extrema(k, c, n) = select(k == 0, range(c, n)[0], range(c, n)[1]);

    extrema.dim(0).set_bounds(0, 2);
    images.set_estimates({{0, 1024}, {0, 768}, {0, 3}, {0, 8}});
    mean.set_estimates({{0, 3}, {0, 8}});
    variance.set_estimates({{0, 3}, {0, 8}});
    extrema.set_estimates({{0, 2}, {0, 3}, {0, 8}});

    if (!auto_schedule) {
      const int lanes = natural_vector_size<uint8_t>();
      Var u{"u"}, cn{"cn"};
      // Each (channel, image) plane is reduced by one thread; inside, the rows are split
      // into vector-wide column groups that accumulate in parallel lanes (rfactor), then
      // the lanes are summed.
      for (Func f : {moments, range}) {
        RVar rxo{"rxo"}, rxi{"rxi"};
        Func lanes_f = f.update().split(r.x, rxo, rxi, lanes).rfactor(rxi, u);
        f.compute_root().update().fuse(c, n, cn).parallel(cn);
        lanes_f.compute_at(f, cn).vectorize(u);
        lanes_f.update().vectorize(u);
      }
    }
  }

 private:
  Var c{"c"}, n{"n"}, k{"k"};
  Func moments{"moments"}, range{"range"};
};

}  // namespace
}  // namespace protuner_corpus

HALIDE_REGISTER_GENERATOR(protuner_corpus::ImageStats, image_stats)
