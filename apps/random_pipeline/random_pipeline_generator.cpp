// random_pipeline: a Halide pipeline drawn from a seed, built from the blocks of image
// processing and deep learning (random_pipeline_blocks.h), as training data for the learned
// cost models. Adams et al. 2019 train on such pipelines because real apps are too few to
// learn from; this one is our own.
//
// How it works: from the seed, a plan is drawn first (plain data: which blocks, on which
// earlier tensors, with which sizes and types), its compute-root time per input pixel is
// estimated, and the input size is chosen so a compute-root run takes about `target_ms`. generate()
// then turns the plan into Funcs. Every Func is defined on all of Z^3 (the input is clamped), so
// blocks may read any earlier tensor anywhere; a tensor no block consumed is averaged into the
// output, so every block is live.
//
// Deterministic per (seed, stages): splitmix64, no clock, no global RNG, no std
// distributions (their output differs between standard libraries).
#include "Halide.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "apps/random_pipeline/random_pipeline_blocks.h"

namespace protuner_random_pipeline {
namespace {

using namespace Halide;

// Every tunable of the generator. Changing one changes the pipeline of every seed.
struct Tunables {
  // Blocks per pipeline when the `stages` param is 0, drawn in [min_blocks, max_blocks].
  int min_blocks = 4;
  int max_blocks = 10;
  // The estimated time of one compute-root run, drawn log-uniformly in
  // [target_ms / spread, target_ms * spread] so runtimes span a range (README.md, Sizes).
  double target_ms = 1.5;
  double spread = 3.0;
  // The estimate: pure definitions cost ns_per_op per arithmetic operation or load (LLVM
  // vectorizes compute-root loops along x: about a tenth of a ns); an update step of a
  // reduction costs ns_per_step (a chain of dependent float adds or maxes, not vectorized
  // over the reduction: about 4 cycles).
  double ns_per_op = 0.1;
  double ns_per_step = 1.2;
  // Input sides are multiples of this, within [min_side, max_side].
  int side_multiple = 16;
  int min_side = 16;
  int max_side = 1536;
  // No block makes a dimension smaller than 1/max_shrink of the input's.
  double max_shrink = 8;
  // Convolution weights come from one float input of this many entries; one convolution
  // uses at most max_conv_weights of them (k * k * Cin * Cout).
  int weights_size = 8192;
  int max_conv_weights = 4096;
  // A block's main input is the newest tensor with this probability, else any tensor
  // (which makes a DAG, not a chain).
  double p_newest = 0.7;
  // A pointwise block is binary (reads a second tensor) with this probability.
  double p_binary = 0.5;
};

enum Kind {
  kPointwise,
  kStencil,
  kDownsample,
  kUpsample,
  kConv,
  kPool,
  kMatmul,
  kReduce,
  kTranspose,
  kLut,
  kCast,
  kScan,
  kNumKinds
};
static_assert(kNumKinds == kBlockKinds.size(), "Kind must list kBlockKinds in order");

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed ^ 0x5851F42D4C957F2Dull) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  int uniform(int lo, int hi) { return lo + static_cast<int>(next() % uint64_t(hi - lo + 1)); }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  bool chance(double p) { return unit() < p; }
  int pick(std::initializer_list<int> values) {
    return values.begin()[uniform(0, static_cast<int>(values.size()) - 1)];
  }

 private:
  uint64_t state_;
};

// Element types of tensors. Integer tensors hold values in [-1, 1] encoded as
// (value * scale + offset), so every block keeps values bounded (no overflow, no inf).
enum class Elem { kFloat, kU8, kU16, kI16 };

Type halide_type(Elem e) {
  switch (e) {
    case Elem::kU8:
      return UInt(8);
    case Elem::kU16:
      return UInt(16);
    case Elem::kI16:
      return Int(16);
    case Elem::kFloat:
      break;
  }
  return Float(32);
}
float encode_scale(Elem e) {
  return e == Elem::kU8 ? 127.5f : e == Elem::kU16 ? 32767.5f : e == Elem::kI16 ? 32767.0f : 1.0f;
}
float encode_offset(Elem e) { return e == Elem::kI16 ? 0.0f : encode_scale(e); }

// A tensor as the plan sees it: its size relative to the input, channels, element type.
struct TensorInfo {
  double fx = 1, fy = 1;
  int channels = 1;
  Elem elem = Elem::kFloat;
  int uses = 0;  // blocks that read it
};

struct BlockPlan {
  Kind kind = kPointwise;
  int variant = 0;     // kind-specific (which operation, which pooling, ...)
  int a = 0, b = -1;   // input tensors; b: a second input or -1
  int kx = 0, ky = 0;  // kernel or window sizes; matmul: K in kx
  int stride = 1;
  int weights_offset = 0;
  std::vector<float> coeffs;  // stencil weights (kx * ky); lut: the gamma
  double ops = 0;             // pure arithmetic operations and loads per output point
  double steps = 0;           // reduction update steps per output point
};

struct Plan {
  TensorInfo input;
  std::vector<BlockPlan> blocks;
  std::vector<TensorInfo> tensors;  // 0: the input, i + 1: what block i makes
  int width = 0, height = 0;        // the input's
};

double decode_ops(const TensorInfo &t) { return t.elem == Elem::kFloat ? 0 : 2; }

// `scans`: the generator's param. Without it the kinds a block draws from are the kinds
// other than scans, in their fixed order, so every seed keeps the pipeline the training
// data (searcher/cost/learned/data/) measured for it.
bool allowed(Kind kind, const TensorInfo &t, bool scans, const Tunables &tun) {
  switch (kind) {
    case kScan:
      return scans;
    case kDownsample:
      return std::min(t.fx, t.fy) >= 2 / tun.max_shrink;
    case kUpsample:
      return std::max(t.fx, t.fy) <= 1;
    default:
      return true;
  }
}

// The blocks that move or resample data: sizes, variant and work; returns the tensor made.
TensorInfo plan_spatial_block(BlockPlan &p, const TensorInfo &a, Rng &rng, const Tunables &tun) {
  TensorInfo out = a;
  out.uses = 0;
  const double dec = decode_ops(a);
  switch (p.kind) {
    case kStencil: {
      p.kx = rng.pick({1, 3, 5, 7});
      p.ky = p.kx == 1 ? rng.pick({3, 5, 7}) : rng.pick({1, 3, 5, 7});
      const bool signed_weights = rng.chance(0.3);  // sharpening or edge filters
      double total = 0;
      for (int i = 0; i < p.kx * p.ky; ++i) {
        p.coeffs.push_back(
            static_cast<float>(signed_weights ? rng.unit() * 2 - 1 : rng.unit() + 0.1));
        total += std::abs(p.coeffs.back());
      }
      for (float &w : p.coeffs) w = static_cast<float>(w / total);
      p.ops = (2 + dec) * p.kx * p.ky;
      out.elem = Elem::kFloat;
      break;
    }
    case kDownsample:
      p.variant = rng.uniform(0, 1);  // 0: 2x2 box average, 1: subsampling
      out.fx /= 2, out.fy /= 2;
      out.elem = p.variant == 0 ? Elem::kFloat : a.elem;
      p.ops = p.variant == 0 ? 4 * (2 + dec) : 2;
      break;
    case kUpsample:
      p.variant = rng.uniform(0, 1);  // 0: nearest neighbour, 1: bilinear
      out.fx *= 2, out.fy *= 2;
      out.elem = p.variant == 0 ? a.elem : Elem::kFloat;
      p.ops = p.variant == 0 ? 2 : 4 * (3 + dec);
      break;
    case kPool: {
      p.variant = rng.uniform(0, 1);  // 0: max (in the input's type), 1: average
      p.kx = p.ky = rng.pick({2, 3});
      p.stride = allowed(kDownsample, a, false, tun) ? rng.pick({1, 2}) : 1;
      out.fx /= p.stride, out.fy /= p.stride;
      out.elem = p.variant == 0 ? a.elem : Elem::kFloat;
      p.steps = p.kx * p.ky;
      p.ops = p.steps * dec;
      break;
    }
    case kTranspose:
      std::swap(out.fx, out.fy);
      p.ops = 3;  // one strided load per point
      break;
    case kScan:
      // 0, 1: causal along x, y; 2, 3: causal then anti-causal along x, y (iir_blur's).
      p.variant = rng.uniform(0, 3);
      p.coeffs = {static_cast<float>(0.5 + rng.unit() * 0.45)};  // feedback in [0.5, 0.95]
      out.elem = Elem::kFloat;
      p.ops = 1 + dec;
      p.steps = p.variant >= 2 ? 2 : 1;
      break;
    default:
      break;
  }
  return out;
}

// A block's sizes, variant, second input and work; returns the tensor it makes.
TensorInfo plan_block(BlockPlan &p, Plan &plan, Rng &rng, const Tunables &tun) {
  const TensorInfo &a = plan.tensors[p.a];
  TensorInfo out = a;
  out.uses = 0;
  out.elem = Elem::kFloat;
  const double dec = decode_ops(a);
  switch (p.kind) {
    case kPointwise: {
      const int n = static_cast<int>(plan.tensors.size());
      if (n > 1 && rng.chance(tun.p_binary)) {
        p.b = rng.uniform(0, n - 2);
        if (p.b >= p.a) ++p.b;
        p.variant = rng.uniform(0, 5);
      } else {
        p.variant = rng.uniform(0, 4);
      }
      p.ops = 3 + dec + (p.b >= 0 ? 1 + decode_ops(plan.tensors[p.b]) : 0);
      break;
    }
    case kConv: {
      p.kx = p.ky = rng.pick({1, 3, 5});
      out.channels = rng.pick({4, 8, 16});
      while (p.kx * p.kx * a.channels * out.channels > tun.max_conv_weights) {
        if (p.kx > 1) {
          p.kx = p.ky = p.kx - 2;
        } else {
          out.channels /= 2;
        }
      }
      const int used = p.kx * p.kx * a.channels * out.channels;
      p.weights_offset = rng.uniform(0, tun.weights_size - used);
      p.steps = p.kx * p.kx * a.channels;
      p.ops = p.steps * dec;
      break;
    }
    case kMatmul: {
      p.kx = rng.pick({16, 32, 64});
      p.b = rng.uniform(0, static_cast<int>(plan.tensors.size()) - 1);
      out.fx = plan.tensors[p.b].fx;
      p.steps = p.kx;
      p.ops = p.steps * (dec + decode_ops(plan.tensors[p.b]));
      break;
    }
    case kReduce:
      // 0: softmax over channels, 1: channel mean removed, 2: max along a column window.
      p.variant = a.channels >= 2 ? rng.uniform(0, 2) : 2;
      p.kx = p.variant == 2 ? rng.pick({8, 16}) : a.channels;
      if (p.variant == 2) out.elem = a.elem;
      // Softmax: two steps and an exp per channel (the exp twice), mean: one step.
      p.steps = p.variant == 0 ? 2 : p.variant == 1 ? 1 : p.kx;
      p.ops = p.variant == 0 ? 40 : 4 + 2 * dec;
      break;
    case kLut:
      p.coeffs = {static_cast<float>(0.4 + rng.unit() * 2.1)};  // gamma in [0.4, 2.5]
      p.ops = 5 + dec;
      break;
    case kCast:
      switch (a.elem) {
        case Elem::kFloat:
          out.elem = rng.chance(0.5) ? Elem::kU8 : rng.chance(0.5) ? Elem::kU16 : Elem::kI16;
          break;
        case Elem::kU8:
          out.elem = rng.chance(0.5) ? Elem::kFloat : Elem::kU16;
          break;
        case Elem::kU16:
          out.elem = rng.chance(0.5) ? Elem::kFloat : Elem::kU8;
          break;
        case Elem::kI16:
          out.elem = Elem::kFloat;
          break;
      }
      p.ops = 4;
      break;
    default:
      return plan_spatial_block(p, a, rng, tun);
  }
  return out;
}

// The input size that makes the estimated compute-root time about the drawn target.
void choose_size(Plan &plan, Rng &rng, const Tunables &tun) {
  double ns_per_pixel = 0;
  for (size_t i = 0; i < plan.blocks.size(); ++i) {
    const TensorInfo &t = plan.tensors[i + 1];
    const BlockPlan &b = plan.blocks[i];
    ns_per_pixel += (b.ops * tun.ns_per_op + b.steps * tun.ns_per_step) * t.fx * t.fy * t.channels;
  }
  const TensorInfo &last = plan.tensors.back();
  ns_per_pixel += 3 * tun.ns_per_op * last.fx * last.fy * last.channels;  // the output
  const double target_ns = 1e6 * tun.target_ms * std::pow(tun.spread, rng.unit() * 2 - 1);
  const double area = target_ns / ns_per_pixel;
  const double aspect = std::pow(2.0, rng.unit() * 2 - 1);  // width / height in [0.5, 2]
  auto side = [&](double s) {
    const int m = tun.side_multiple;
    return std::clamp(static_cast<int>(std::lround(s / m)) * m, tun.min_side, tun.max_side);
  };
  plan.width = side(std::sqrt(area * aspect));
  plan.height = side(std::sqrt(area / aspect));
}

Plan make_plan(uint32_t seed, int stages, bool scans, const Tunables &tun) {
  Rng rng(seed);
  Plan plan;
  plan.input.channels = rng.pick({1, 3, 4});
  plan.input.elem = rng.chance(0.5) ? Elem::kFloat : rng.chance(0.5) ? Elem::kU8 : Elem::kU16;
  plan.tensors.push_back(plan.input);
  const int blocks = stages > 0 ? stages : rng.uniform(tun.min_blocks, tun.max_blocks);
  // With scans, one block drawn from the seed is a scan whatever the draw of its kind, so
  // every such pipeline has one (about half would have none by chance).
  const int scan_block = scans ? rng.uniform(0, blocks - 1) : -1;
  for (int i = 0; i < blocks; ++i) {
    BlockPlan p;
    const int newest = static_cast<int>(plan.tensors.size()) - 1;
    p.a = rng.chance(tun.p_newest) ? newest : rng.uniform(0, newest);
    std::vector<Kind> kinds;
    for (int k = 0; k < kNumKinds; ++k) {
      if (allowed(Kind(k), plan.tensors[p.a], scans, tun)) kinds.push_back(Kind(k));
    }
    p.kind = kinds[rng.uniform(0, static_cast<int>(kinds.size()) - 1)];
    if (i == scan_block) p.kind = kScan;
    const TensorInfo out = plan_block(p, plan, rng, tun);
    plan.tensors[p.a].uses++;
    if (p.b >= 0) plan.tensors[p.b].uses++;
    plan.blocks.push_back(p);
    plan.tensors.push_back(out);
  }
  choose_size(plan, rng, tun);
  return plan;
}

class RandomPipeline : public Generator<RandomPipeline> {
 public:
  GeneratorParam<uint32_t> seed{"seed", 0};
  // Number of blocks; 0 draws it from the seed (Tunables::min_blocks..max_blocks).
  GeneratorParam<int> stages{"stages", 0, 0, 64};
  // Also draw scan blocks (recursive filters), at least one per pipeline. Off by default: a
  // new kind changes what every seed draws, and the seeds the training data measured must
  // keep their pipelines.
  GeneratorParam<bool> scans{"scans", false};

  // The image, input(x, y, c). Its type is drawn from the seed, so there is one Input per
  // type and a pipeline reads exactly one of them (common/app.h builds pipelines without
  // Halide's configure() phase, which could add just the one).
  Input<Buffer<float>> input{"input", 3};
  Input<Buffer<uint8_t>> input_u8{"input_u8", 3};
  Input<Buffer<uint16_t>> input_u16{"input_u16", 3};
  // Convolution weights, read only by pipelines with a conv block.
  Input<Buffer<float>> weights{"weights", 1};
  Output<Buffer<float>> output{"output", 3};

  void generate() {
    plan_ = make_plan(seed, stages, scans, tunables_);
    tensors_.push_back({clamped_input(), plan_.input.elem, plan_.input.channels});
    for (size_t b = 0; b < plan_.blocks.size(); ++b) {
      tensors_.push_back(build_block(plan_.blocks[b], static_cast<int>(b)));
    }
    define_output();
  }

  void schedule() {
    const Region image = {{0, plan_.width}, {0, plan_.height}, {0, plan_.input.channels}};
    input.set_estimates(image);
    input_u8.set_estimates(image);
    input_u16.set_estimates(image);
    weights.set_estimates({{0, tunables_.weights_size}});
    const TensorInfo &last = plan_.tensors.back();
    output.set_estimates({{0, extent(last.fx * plan_.width)},
                          {0, extent(last.fy * plan_.height)},
                          {0, last.channels}});
    if (!auto_schedule) schedule_expert();
  }

 private:
  struct Tensor {
    Func f;
    Elem elem;
    int channels;
  };

  Tunables tunables_;
  Plan plan_;
  std::vector<Tensor> tensors_;  // like plan_.tensors
  std::vector<Func> funcs_;      // every Func the blocks made, for the expert schedule
  Var x{"x"}, y{"y"}, c{"c"}, i{"i"};

  // The input of the plan's type, clamped: every Func downstream is defined everywhere.
  Func clamped_input() {
    Func f("input_clamped");
    auto define = [&](auto &image) {
      f(x, y, c) =
          image(clamp(x, 0, image.dim(0).extent() - 1), clamp(y, 0, image.dim(1).extent() - 1),
                clamp(c, 0, image.dim(2).extent() - 1));
    };
    switch (plan_.input.elem) {
      case Elem::kU8:
        define(input_u8);
        break;
      case Elem::kU16:
        define(input_u16);
        break;
      default:
        define(input);
        break;
    }
    return f;
  }

  static int extent(double size) { return std::max(1, static_cast<int>(std::lround(size))); }

  Func make_func(const std::string &name) {
    funcs_.emplace_back(name);
    return funcs_.back();
  }

  // Which channel of `t` a consumer with `channels` channels reads at its channel `ch`: the
  // same, a broadcast of a single channel, or wrapped around.
  static Expr channel_in(const Tensor &t, int channels, Expr ch) {
    if (t.channels == channels) return ch;
    if (t.channels == 1) return 0;
    return ch % t.channels;
  }

  // t's value at (px, py, ch) as a float in about [-1, 1].
  static Expr value(const Tensor &t, Expr px, Expr py, Expr ch) {
    Expr v = t.f(px, py, ch);
    if (t.elem == Elem::kFloat) return v;
    return (cast<float>(v) - encode_offset(t.elem)) * (1.0f / encode_scale(t.elem));
  }

  Tensor build_block(const BlockPlan &p, int index) {
    const std::string name = std::string(kBlockKinds[p.kind]) + "_" + std::to_string(index);
    const Tensor &a = tensors_[p.a];
    const TensorInfo &info = plan_.tensors[index + 1];
    Func f = make_func(name);
    switch (p.kind) {
      case kPointwise:
        define_pointwise(f, p, a);
        break;
      case kStencil:
        define_stencil(f, p, a);
        break;
      case kDownsample:
        define_downsample(f, p, a);
        break;
      case kUpsample:
        define_upsample(f, p, a);
        break;
      case kConv:
        define_conv(f, p, a, info.channels);
        break;
      case kPool:
        define_pool(f, p, a);
        break;
      case kMatmul:
        define_matmul(f, p, a);
        break;
      case kReduce:
        define_reduce(f, p, a, name);
        break;
      case kTranspose:
        f(x, y, c) = a.f(y, x, c);
        break;
      case kLut:
        define_lut(f, p, a, name);
        break;
      case kCast:
        define_cast(f, a, info.elem);
        break;
      case kScan:
        define_scan(f, p, a, info);
        break;
      case kNumKinds:
        break;
    }
    return {f, info.elem, info.channels};
  }

  void define_pointwise(Func f, const BlockPlan &p, const Tensor &a) {
    Expr va = value(a, x, y, c);
    if (p.b < 0) {
      const Expr unary[] = {max(va, 0.0f), va * va, sqrt(abs(va)), va / (1.0f + abs(va)),
                            exp(-va * va)};
      f(x, y, c) = unary[p.variant];
      return;
    }
    const Tensor &b = tensors_[p.b];
    Expr vb = value(b, x, y, channel_in(b, a.channels, c));
    const Expr binary[] = {0.5f * (va + vb),    va * vb,
                           0.5f * abs(va - vb), min(va, vb),
                           max(va, vb),         select(va > vb, va - 0.5f * vb, 0.5f * vb)};
    f(x, y, c) = binary[p.variant];
  }

  void define_stencil(Func f, const BlockPlan &p, const Tensor &a) {
    Expr sum = 0.0f;
    for (int dy = 0; dy < p.ky; ++dy) {
      for (int dx = 0; dx < p.kx; ++dx) {
        sum += p.coeffs[dy * p.kx + dx] * value(a, x + dx - p.kx / 2, y + dy - p.ky / 2, c);
      }
    }
    f(x, y, c) = sum;
  }

  void define_downsample(Func f, const BlockPlan &p, const Tensor &a) {
    if (p.variant == 1) {
      f(x, y, c) = a.f(2 * x, 2 * y, c);
      return;
    }
    f(x, y, c) = 0.25f * (value(a, 2 * x, 2 * y, c) + value(a, 2 * x + 1, 2 * y, c) +
                          value(a, 2 * x, 2 * y + 1, c) + value(a, 2 * x + 1, 2 * y + 1, c));
  }

  void define_upsample(Func f, const BlockPlan &p, const Tensor &a) {
    if (p.variant == 0) {
      f(x, y, c) = a.f(x / 2, y / 2, c);
      return;
    }
    // Linear in each dimension: 3/4 of the nearer source pixel, 1/4 of the other one.
    Expr x_far = x / 2 + 2 * (x % 2) - 1, y_far = y / 2 + 2 * (y % 2) - 1;
    f(x, y, c) = 0.5625f * value(a, x / 2, y / 2, c) + 0.1875f * value(a, x_far, y / 2, c) +
                 0.1875f * value(a, x / 2, y_far, c) + 0.0625f * value(a, x_far, y_far, c);
  }

  void define_conv(Func f, const BlockPlan &p, const Tensor &a, int out_channels) {
    const int k = p.kx;
    RDom r(0, k, 0, k, 0, a.channels, "r");
    // Weights centred on zero, scaled so a sum stays within the range of its inputs. The
    // wrapped output channel keeps the index inside this convolution's slice of weights.
    Expr index =
        p.weights_offset + ((r.y * k + r.x) * a.channels + r.z) * out_channels + c % out_channels;
    Expr w = (weights(index) - 0.5f) * (2.0f / static_cast<float>(k * k * a.channels));
    f(x, y, c) = 0.0f;
    f(x, y, c) += w * value(a, x + r.x - k / 2, y + r.y - k / 2, r.z);
  }

  void define_pool(Func f, const BlockPlan &p, const Tensor &a) {
    RDom r(0, p.kx, 0, p.ky, "r");
    Expr px = p.stride * x + r.x, py = p.stride * y + r.y;
    if (p.variant == 0) {
      f(x, y, c) = halide_type(a.elem).min();
      f(x, y, c) = max(f(x, y, c), a.f(px, py, c));
      return;
    }
    f(x, y, c) = 0.0f;
    f(x, y, c) += value(a, px, py, c) * (1.0f / static_cast<float>(p.kx * p.ky));
  }

  void define_matmul(Func f, const BlockPlan &p, const Tensor &a) {
    const Tensor &b = tensors_[p.b];
    RDom r(0, p.kx, "r");
    f(x, y, c) = 0.0f;
    f(x, y, c) += value(a, r, y, c) * value(b, x, r, channel_in(b, a.channels, c)) *
                  (1.0f / static_cast<float>(p.kx));
  }

  void define_reduce(Func f, const BlockPlan &p, const Tensor &a, const std::string &name) {
    if (p.variant == 2) {  // max over a window of rows
      RDom r(0, p.kx, "r");
      f(x, y, c) = halide_type(a.elem).min();
      f(x, y, c) = max(f(x, y, c), a.f(x, y + r - p.kx / 2, c));
      return;
    }
    RDom r(0, a.channels, "r");
    if (p.variant == 1) {  // the mean over channels removed
      Func mean = make_func(name + "_mean");
      mean(x, y) = 0.0f;
      mean(x, y) += value(a, x, y, r) * (1.0f / static_cast<float>(a.channels));
      f(x, y, c) = 0.5f * (value(a, x, y, c) - mean(x, y));
      return;
    }
    Func hi = make_func(name + "_max"), total = make_func(name + "_sum");  // softmax
    hi(x, y) = Float(32).min();
    hi(x, y) = max(hi(x, y), value(a, x, y, r));
    total(x, y) = 0.0f;
    total(x, y) += exp(value(a, x, y, r) - hi(x, y));
    f(x, y, c) = exp(value(a, x, y, c) - hi(x, y)) / total(x, y);
  }

  void define_lut(Func f, const BlockPlan &p, const Tensor &a, const std::string &name) {
    Func table = make_func(name + "_table");
    table(i) = 2.0f * pow(cast<float>(i) * (1.0f / 255.0f), p.coeffs[0]) - 1.0f;
    Expr index = a.elem == Elem::kU8
                     ? cast<int>(a.f(x, y, c))
                     : clamp(cast<int>((value(a, x, y, c) + 1.0f) * 127.5f), 0, 255);
    f(x, y, c) = table(index);
  }

  void define_cast(Func f, const Tensor &a, Elem to) {
    if (to == Elem::kFloat) {
      f(x, y, c) = value(a, x, y, c);
    } else if (a.elem == Elem::kU8 && to == Elem::kU16) {
      f(x, y, c) = cast<uint16_t>(a.f(x, y, c)) * cast<uint16_t>(257);
    } else if (a.elem == Elem::kU16 && to == Elem::kU8) {
      f(x, y, c) = cast<uint8_t>(a.f(x, y, c) / 257);
    } else {
      f(x, y, c) = saturating_cast(halide_type(to),
                                   value(a, x, y, c) * encode_scale(to) + encode_offset(to));
    }
  }

  // A first-order recursive filter over the tensor's extent along x or y: each point
  // becomes a blend of itself and its already filtered neighbour, a serial dependence
  // along the scanned dimension (iir_blur's, and the cumulative sums of histograms).
  // Outside the extent the tensor is its input, so consumers may still read anywhere.
  void define_scan(Func f, const BlockPlan &p, const Tensor &a, const TensorInfo &info) {
    const bool along_x = p.variant % 2 == 0;
    const int n = along_x ? extent(info.fx * plan_.width) : extent(info.fy * plan_.height);
    const float keep = 1.0f - p.coeffs[0], feedback = p.coeffs[0];
    f(x, y, c) = value(a, x, y, c);
    if (n < 2) return;
    RDom r(1, n - 1, "r");
    auto at = [&](Expr i) { return along_x ? f(i, y, c) : f(x, i, c); };
    if (along_x) {
      f(r, y, c) = keep * at(r) + feedback * at(r - 1);
    } else {
      f(x, r, c) = keep * at(r) + feedback * at(r - 1);
    }
    if (p.variant < 2) return;
    Expr back = n - 1 - r;  // from the far end inwards
    if (along_x) {
      f(back, y, c) = keep * at(back) + feedback * at(back + 1);
    } else {
      f(x, back, c) = keep * at(back) + feedback * at(back + 1);
    }
  }

  // The mean of every tensor no block read (the newest one among them), so every block is
  // live.
  void define_output() {
    const int channels = tensors_.back().channels;
    std::vector<Expr> terms;
    for (size_t t = 1; t < tensors_.size(); ++t) {
      if (plan_.tensors[t].uses > 0) continue;
      const Tensor &tensor = tensors_[t];
      terms.push_back(value(tensor, x, y, channel_in(tensor, channels, c)));
    }
    Expr sum = terms[0];
    for (size_t t = 1; t < terms.size(); ++t) sum += terms[t];
    output(x, y, c) = sum * (1.0f / static_cast<float>(terms.size()));
  }

  // Everything at root, rows in parallel, vectorized along x: simple, never wrong, and a
  // fair human baseline for pipelines nobody hand-tunes.
  void schedule_expert() {
    const int vec = natural_vector_size<float>();
    auto schedule_stage = [&](Stage s, const std::vector<Var> &args) {
      if (!args.empty()) s.vectorize(args[0], vec, TailStrategy::GuardWithIf);
      if (args.size() > 1) s.parallel(args[1]);
    };
    for (Func &f : funcs_) {
      f.compute_root();
      schedule_stage(f, f.args());
      for (int u = 0; u < f.num_update_definitions(); ++u) {
        // A scan's update replaces x or y by its RDom: only the pure variables it keeps
        // can be vectorized or parallel.
        std::vector<Var> pure;
        for (const Expr &e : f.update_args(u)) {
          const auto *v = e.as<Internal::Variable>();
          if (v && !v->reduction_domain.defined()) pure.emplace_back(v->name);
        }
        schedule_stage(f.update(u), pure);
      }
    }
    output.vectorize(x, vec, TailStrategy::GuardWithIf).parallel(y);
  }
};

}  // namespace
}  // namespace protuner_random_pipeline

HALIDE_REGISTER_GENERATOR(protuner_random_pipeline::RandomPipeline, random_pipeline)
