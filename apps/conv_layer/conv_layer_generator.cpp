// conv_layer: one 3x3 convolution layer of a CNN with bias and ReLU. It is in the suite as
// the deep-learning reduction: most of the time is a 3x3xCI reduction per output, and fast
// schedules need register blocking over output channels and pixels with the reduction inside.
#include "Halide.h"

namespace protuner_apps {
namespace {

using namespace Halide;

class ConvLayer : public Generator<ConvLayer> {
 public:

  // Channels are innermost so a vector spans output channels.
  // input(ci, x, y, n) is pre-padded by one pixel on each side: [CI, W + 2, H + 2, N].
  Input<Buffer<float>> input{"input", 4};
  // filter(co, ci, dx, dy): [CO, CI, 3, 3].
  Input<Buffer<float>> filter{"filter", 4};
  Input<Buffer<float>> bias{"bias", 1};
  // relu(co, x, y, n): [CO, W, H, N].
  Output<Buffer<float>> relu{"relu", 4};

  void generate() {
    r = RDom(0, input.dim(0).extent(), 0, 3, 0, 3, "r");
    conv(co, x, y, n) = bias(co);
    conv(co, x, y, n) += filter(co, r.x, r.y, r.z) * input(r.x, x + r.y, y + r.z, n);
    relu(co, x, y, n) = max(0.0f, conv(co, x, y, n));
  }

  void schedule() {
    // The conv_layer sizes of the Halide autoscheduler papers (Adams et al. 2019).
    const int N = 5, CI = 128, CO = 128, W = 100, H = 80;
    input.set_estimates({{0, CI}, {0, W + 2}, {0, H + 2}, {0, N}});
    filter.set_estimates({{0, CO}, {0, CI}, {0, 3}, {0, 3}});
    bias.set_estimates({{0, CO}});
    relu.set_estimates({{0, CO}, {0, W}, {0, H}, {0, N}});
    if (!auto_schedule) {
      schedule_expert();
    }
  }

 private:
  Var co{"co"}, x{"x"}, y{"y"}, n{"n"};
  Func conv{"conv"};
  RDom r;

  void schedule_expert() {
    const int vec = natural_vector_size<float>();
    // 4 vectors of output channels x 5 pixels = 20 accumulators, which fit in the 32
    // vector registers next to the 4 filter loads and one input broadcast per step;
    // 5 divides W = 100, so no block overlaps its neighbour.
    const int block_c = 4 * vec, block_x = 5;
    Var coo{"coo"}, coi{"coi"}, xo{"xo"}, xi{"xi"}, t{"t"};
    // ShiftInwards keeps every block full-sized, so the accumulator block has a constant
    // size and lives in registers.
    relu.split(co, coo, coi, block_c, TailStrategy::ShiftInwards)
        .split(x, xo, xi, block_x, TailStrategy::ShiftInwards)
        .reorder(coi, xi, coo, xo, y, n)
        .fuse(y, n, t)
        .parallel(t)
        .vectorize(coi, vec)
        .unroll(coi)
        .unroll(xi);
    // The reduction runs inside the block in the algorithm's own order (ci innermost),
    // so results match the unscheduled pipeline bit for bit.
    conv.compute_at(relu, coo)
        .vectorize(co, vec)
        .unroll(co)
        .unroll(x)
        .update()
        .reorder(co, x, r.x, r.y, r.z, y, n)
        .vectorize(co, vec)
        .unroll(co)
        .unroll(x);
  }
};

}  // namespace
}  // namespace protuner_apps

HALIDE_REGISTER_GENERATOR(protuner_apps::ConvLayer, conv_layer)
