// A two-band analysis filter bank over a 1-D float signal of 4M samples: a low-pass FIR whose
// taps are an input buffer, its quadrature-mirror high-pass, each decimated by two. In the corpus
// as the 1-D signal pipeline: two outputs, update stages with an RDom over the taps input, a
// constrained tap count (taps.dim(0).set_bounds), and estimates with NON-ZERO mins and no
// boundary condition (each output starts half a filter length into the signal).
#include "Halide.h"

namespace protuner_corpus {
namespace {

using namespace Halide;

class FirDecimate : public Generator<FirDecimate> {
 public:
  GeneratorParam<int> num_taps{"num_taps", 16, 2, 64};

  Input<Buffer<float>> signal{"signal", 1};
  Input<Buffer<float>> taps{"taps", 1};
  Output<Buffer<float>> low{"low", 1};
  Output<Buffer<float>> high{"high", 1};

  void generate() {
    const int n = num_taps;
    RDom r(0, n, "r");
    // y[i] = sum_k h[k] * s[2i - k]
    low_acc(i) = 0.0f;
    low_acc(i) += taps(r) * signal(2 * i - r);
    // Quadrature mirror: g[k] = (-1)^k h[n - 1 - k].
    high_acc(i) = 0.0f;
    high_acc(i) += select(r % 2 == 0, 1.0f, -1.0f) * taps(n - 1 - r) * signal(2 * i - r);
    low(i) = low_acc(i);
    high(i) = high_acc(i);

    taps.dim(0).set_bounds(0, n);
    const int len = 1 << 22;
    signal.set_estimates({{0, len}});
    taps.set_estimates({{0, n}});
    low.set_estimates({{n / 2, len / 2 - n / 2}});
    high.set_estimates({{n / 2, len / 2 - n / 2}});

    if (!auto_schedule) {
      const int vec = natural_vector_size<float>();
      Var io{"io"}, ii{"ii"}, iv{"iv"}, ib{"ib"};
      // Chunks of 8192 outputs in parallel. Per chunk: accumulate one vector of outputs over
      // all taps in a register (taps unrolled), then move to the next vector.
      low.split(i, io, ii, 8192).parallel(io).vectorize(ii, vec);
      high.split(i, io, ii, 8192).parallel(io).vectorize(ii, vec);
      low_acc.compute_at(low, io).vectorize(i, vec);
      low_acc.update().split(i, ib, iv, vec).reorder(iv, r, ib).vectorize(iv).unroll(r);
      high_acc.compute_at(high, io).vectorize(i, vec);
      high_acc.update().split(i, ib, iv, vec).reorder(iv, r, ib).vectorize(iv).unroll(r);
    }
  }

 private:
  Var i{"i"};
  Func low_acc{"low_acc"}, high_acc{"high_acc"};
};

}  // namespace
}  // namespace protuner_corpus

HALIDE_REGISTER_GENERATOR(protuner_corpus::FirDecimate, fir_decimate)
