// ResNet-50 v1 (He et al., "Deep Residual Learning for Image Recognition", 2016) as Halide
// layers, shared by every resnet50 generator: the stem, the residual-block shapes, the head
// and the whole network are built by this one code, so tuning a block tunes exactly the
// algorithm the whole network runs.
//
// Activations are [C, W, H] with the channel innermost, so convolutions vectorize over output
// channels. Batch norm is folded into a per-output-channel scale and shift (inference mode).
// As in the original v1 network, the stride-2 blocks downsample in their first 1x1
// convolution and in the projection shortcut, not in the 3x3.
//
// All learned parameters of a pipeline come packed in one 1-D buffer, layer after layer in
// network order: a conv layer is weights [C_out, C_in, k, k] (C_out fastest), then scale
// [C_out], then shift [C_out]; the fully connected layer is weights [1000, 2048] (class
// fastest), then bias [1000]. One buffer rather than one per layer because Halide's compile
// time grows with the number of inputs times the size of the pipeline: with 160 inputs the
// whole network takes minutes to compile, with one under half a minute.
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "Halide.h"

namespace protuner_apps {
namespace resnet50 {

// An activation f(c, x, y). f may be evaluated anywhere (reads outside the tensor are
// clamped or padded), but only [0, width) x [0, height) is meaningful.
struct Tensor {
  Halide::Func f;
  int channels;
  Halide::Expr width, height;
};

struct ConvShape {
  int in_channels, out_channels, kernel, stride;
};

// A conv layer's parameters: where they sit in the packed parameter buffer.
struct ConvParams {
  Halide::Func packed;
  int offset;
  ConvShape shape;

  int num_weights() const {
    return shape.out_channels * shape.in_channels * shape.kernel * shape.kernel;
  }
  int size() const { return num_weights() + 2 * shape.out_channels; }
  Halide::Expr weight(const Halide::Expr &co, const Halide::Expr &ci, const Halide::Expr &kx,
                      const Halide::Expr &ky) const {
    const ConvShape &s = shape;
    return packed(offset + co + s.out_channels * (ci + s.in_channels * (kx + s.kernel * ky)));
  }
  Halide::Expr scale(const Halide::Expr &co) const { return packed(offset + num_weights() + co); }
  Halide::Expr shift(const Halide::Expr &co) const {
    return packed(offset + num_weights() + shape.out_channels + co);
  }
};

// The fully connected layer's parameters in the packed buffer.
struct FcParams {
  Halide::Func packed;
  int offset, in_features, classes;

  int size() const { return (in_features + 1) * classes; }
  Halide::Expr weight(const Halide::Expr &o, const Halide::Expr &i) const {
    return packed(offset + o + classes * i);
  }
  Halide::Expr bias(const Halide::Expr &o) const {
    return packed(offset + classes * in_features + o);
  }
};

// Hands out the layers of a packed parameter buffer in order; size() is then the buffer's
// extent.
class ParamPack {
 public:
  explicit ParamPack(Halide::Func packed) : packed_(packed) {}

  ConvParams conv(const ConvShape &s) {
    ConvParams p{packed_, size_, s};
    size_ += p.size();
    return p;
  }
  FcParams fc(int in_features, int classes) {
    FcParams p{packed_, size_, in_features, classes};
    size_ += p.size();
    return p;
  }
  int size() const { return size_; }

 private:
  Halide::Func packed_;
  int size_ = 0;
};

// Shape of a bottleneck block of stage 2..5 (conv2_x .. conv5_x in the paper) at 224x224.
struct BlockShape {
  int stage;
  bool first;  // the first block of a stage projects its shortcut (and strides, from stage 3)

  constexpr int mid_channels() const { return 64 << (stage - 2); }
  constexpr int out_channels() const { return 4 * mid_channels(); }
  constexpr int in_channels() const {
    return !first ? out_channels() : stage == 2 ? 64 : 2 * mid_channels();
  }
  constexpr int stride() const { return first && stage > 2 ? 2 : 1; }
  constexpr int out_size() const { return 56 >> (stage - 2); }
  constexpr int in_size() const { return out_size() * stride(); }

  // In parameter order: 1x1 reduce, 3x3, 1x1 expand, then the projection if any.
  std::vector<ConvShape> convs() const {
    std::vector<ConvShape> s = {{in_channels(), mid_channels(), 1, stride()},
                                {mid_channels(), mid_channels(), 3, 1},
                                {mid_channels(), out_channels(), 1, 1}};
    if (first) s.push_back({in_channels(), out_channels(), 1, stride()});
    return s;
  }
};

// The 16 blocks of ResNet-50 in order: 3, 4, 6 and 3 blocks in stages 2 to 5.
inline std::vector<BlockShape> all_blocks() {
  std::vector<BlockShape> blocks;
  const int count[] = {3, 4, 6, 3};
  for (int stage = 2; stage <= 5; ++stage) {
    for (int i = 0; i < count[stage - 2]; ++i) blocks.push_back({stage, i == 0});
  }
  return blocks;
}

constexpr ConvShape kStemConv = {3, 64, 7, 2};
constexpr int kImageSize = 224;
constexpr int kStemSize = 56;  // spatial size after the stem, at 224x224
constexpr int kFeatures = 2048;
constexpr int kClasses = 1000;
constexpr int kHeadSize = 7;  // spatial size of the last stage, at 224x224

inline Halide::Region spatial_bounds(const Tensor &t) {
  return {{Halide::Expr(), Halide::Expr()}, {0, t.width}, {0, t.height}};
}

// With "same" padding (k / 2 on each side, k odd) every layer's output is ceil(in / stride).
inline Halide::Expr output_size(const Halide::Expr &in, int stride) {
  return stride == 1 ? in : (in + stride - 1) / stride;
}

// A convolution: `src` is its input as it reads it (zero-padded if the kernel is wider than 1),
// `sum` the reduction (the part worth scheduling), `out` the batch-normalized (and possibly
// rectified) result.
struct Conv {
  Halide::Func src, sum;
  Halide::RDom r;
  Tensor out;
};

// Convolution with "same" zero padding, then batch norm, then optionally ReLU.
inline Conv conv_bn(const Tensor &in, const ConvParams &p, bool relu, const std::string &name) {
  using namespace Halide;
  Var c("c"), x("x"), y("y");
  const ConvShape &s = p.shape;
  const int pad = s.kernel / 2;
  Func src = in.f;
  if (pad) {
    src = Func(name + "_padded");
    src(c, x, y) = BoundaryConditions::constant_exterior(in.f, 0.f, spatial_bounds(in))(c, x, y);
  }
  Conv conv{src,
            Func(name + "_sum"),
            RDom(0, s.in_channels, 0, s.kernel, 0, s.kernel, name + "_r"),
            {Func(name), s.out_channels, output_size(in.width, s.stride),
             output_size(in.height, s.stride)}};
  const RDom &r = conv.r;
  conv.sum(c, x, y) = 0.f;
  conv.sum(c, x, y) +=
      p.weight(c, r.x, r.y, r.z) * src(r.x, x * s.stride + r.y - pad, y * s.stride + r.z - pad);
  Expr bn = conv.sum(c, x, y) * p.scale(c) + p.shift(c);
  conv.out.f(c, x, y) = relu ? max(bn, 0.f) : bn;
  return conv;
}

struct Stem {
  Conv conv;
  Tensor out;
};

// 7x7/2 conv + bn + relu, then 3x3/2 max pool with padding 1: 224x224x3 -> 56x56x64.
inline Stem stem(const Tensor &image, ParamPack &params) {
  using namespace Halide;
  Var c("c"), x("x"), y("y");
  Stem s{conv_bn(image, params.conv(kStemConv), true, "conv1"), {}};
  const Tensor &conv = s.conv.out;
  // Padding with the lowest float leaves the maximum of the positions inside.
  Func padded = BoundaryConditions::constant_exterior(conv.f, std::numeric_limits<float>::lowest(),
                                                      spatial_bounds(conv));
  Expr m = padded(c, 2 * x - 1, 2 * y - 1);
  for (int ky = 0; ky < 3; ++ky) {
    for (int kx = ky == 0 ? 1 : 0; kx < 3; ++kx) {
      m = max(m, padded(c, 2 * x + kx - 1, 2 * y + ky - 1));
    }
  }
  s.out = {Func("pool1"), conv.channels, output_size(conv.width, 2), output_size(conv.height, 2)};
  s.out.f(c, x, y) = m;
  return s;
}

struct Block {
  Conv reduce, spatial, expand;
  std::optional<Conv> projection;
  Tensor out;
};

// Bottleneck residual block: relu(bn(conv1x1(relu(bn(conv3x3(relu(bn(conv1x1(in))))))))
// + shortcut), the shortcut being the input or, in a stage's first block, a 1x1 projection.
inline Block bottleneck(const Tensor &in, const BlockShape &shape, ParamPack &params,
                        const std::string &name) {
  using namespace Halide;
  Var c("c"), x("x"), y("y");
  // Clamped, so that rounding tiles up past the edge never reads outside the input.
  const Tensor input{BoundaryConditions::repeat_edge(in.f, spatial_bounds(in)), in.channels,
                     in.width, in.height};
  const std::vector<ConvShape> s = shape.convs();
  Block b{conv_bn(input, params.conv(s[0]), true, name + "_conv1"), {}, {}, std::nullopt, {}};
  b.spatial = conv_bn(b.reduce.out, params.conv(s[1]), true, name + "_conv2");
  b.expand = conv_bn(b.spatial.out, params.conv(s[2]), false, name + "_conv3");
  Func shortcut = input.f;
  if (shape.first) {
    b.projection = conv_bn(input, params.conv(s[3]), false, name + "_proj");
    shortcut = b.projection->out.f;
  }
  b.out = {Func(name), shape.out_channels(), b.expand.out.width, b.expand.out.height};
  b.out.f(c, x, y) = max(b.expand.out.f(c, x, y) + shortcut(c, x, y), 0.f);
  return b;
}

struct Head {
  Halide::Func sum, fc;
  Halide::RDom fc_r;
};

// Global average pool over the whole feature map, then fully connected 2048 -> 1000.
// The caller defines its output from fc(o).
inline Head head(const Tensor &in, ParamPack &params) {
  using namespace Halide;
  Var c("c"), o("o");
  const FcParams p = params.fc(in.channels, kClasses);
  Head h{Func("pool5_sum"), Func("fc1000"), RDom(0, in.channels, "fc1000_r")};
  RDom r(0, in.width, 0, in.height, "pool5_r");
  h.sum(c) = 0.f;
  h.sum(c) += in.f(c, r.x, r.y);
  Func avg("pool5");
  avg(c) = h.sum(c) / cast<float>(in.width * in.height);
  h.fc(o) = p.bias(o);
  h.fc(o) += p.weight(o, h.fc_r) * avg(h.fc_r);
  return h;
}

// ---- Expert schedules -------------------------------------------------------------------

// Pipeline outputs must not write outside the requested region; internal Funcs may round
// their region up to whole tiles (every tensor is clamped or padded, so that is safe).
enum class Placement { Internal, Output };

// ResNet's spatial sizes are 7 * 2^k, so 7-wide tiles have no tails at full size. A tile of
// 2 vectors of channels x 7 columns keeps 14 accumulators in registers.
constexpr int kTileWidth = 7;

// Computes `f` (a conv's output, or a block's) in tiles of 2 vectors of output channels x 7
// columns x 1 row, with each conv sum it needs computed per tile and its whole reduction
// inside the register tile. Tasks are rows of one channel block, rows innermost, so that
// consecutive tasks reuse the block's weights: in the late stages they outweigh the
// activations many times over.
inline void schedule_conv_tiles(Halide::Func f, const std::vector<Conv> &sums, Placement where,
                                int vec) {
  using namespace Halide;
  Var c = f.args()[0], x = f.args()[1], y = f.args()[2];
  Var co("co"), ci("ci"), xo("xo"), xi("xi"), task("task");
  const bool out = where == Placement::Output;
  f.compute_root()
      .split(x, xo, xi, kTileWidth, out ? TailStrategy::GuardWithIf : TailStrategy::RoundUp)
      .split(c, co, ci, 2 * vec, out ? TailStrategy::ShiftInwards : TailStrategy::RoundUp)
      .reorder(ci, xi, xo, y, co)
      .vectorize(ci, vec)
      .unroll(ci)
      .unroll(xi)
      .fuse(y, co, task)
      .parallel(task);
  for (Conv conv : sums) {  // copies: Funcs are handles, and scheduling them is not const
    Var sc = conv.sum.args()[0], sx = conv.sum.args()[1], sy = conv.sum.args()[2];
    // Past the right edge of an output the tile keeps its constant width: the columns past
    // the edge read clamped or padded values and are thrown away.
    conv.sum.compute_at(f, xo)
        .bound_extent(sx, kTileWidth)
        .vectorize(sc, vec)
        .unroll(sc)
        .unroll(sx);
    conv.sum.update()
        .reorder(sc, sx, sy, conv.r.x, conv.r.y, conv.r.z)
        .vectorize(sc, vec)
        .unroll(sc)
        .unroll(sx);
  }
}

inline void schedule_stem(const Stem &s, Halide::Func out, int vec) {
  schedule_conv_tiles(s.conv.out.f, {s.conv}, Placement::Internal, vec);
  out.compute_root().vectorize(out.args()[0], vec).parallel(out.args()[2]);
}

// `out` is the Func that holds the block's result: b.out.f itself, or an output defined
// from it.
inline void schedule_block(const Block &b, Halide::Func out, Placement where, int vec) {
  schedule_conv_tiles(b.reduce.out.f, {b.reduce}, Placement::Internal, vec);
  // A zero-padded copy of the 3x3's input costs little and keeps the border tests out of its
  // inner loop.
  Halide::Func padded = b.spatial.src;
  padded.compute_root().vectorize(padded.args()[0], vec).parallel(padded.args()[2]);
  schedule_conv_tiles(b.spatial.out.f, {b.spatial}, Placement::Internal, vec);
  std::vector<Conv> in_tiles = {b.expand};
  if (b.projection) in_tiles.push_back(*b.projection);
  schedule_conv_tiles(out, in_tiles, where, vec);
}

// `out` is the output defined from h.fc: it is computed in 2-vector strips of classes with
// the 2048-long dot products inside.
inline void schedule_head(Head h, Halide::Func out, int vec) {
  using namespace Halide;
  Var c = h.sum.args()[0], o = out.args()[0], fo = h.fc.args()[0], oo("oo"), oi("oi");
  h.sum.compute_root().vectorize(c, vec);
  h.sum.update().vectorize(c, vec);
  out.split(o, oo, oi, 2 * vec, TailStrategy::ShiftInwards)
      .vectorize(oi, vec)
      .unroll(oi)
      .parallel(oo);
  h.fc.compute_at(out, oo).vectorize(fo, vec).unroll(fo);
  h.fc.update().reorder(fo, h.fc_r.x).vectorize(fo, vec).unroll(fo);
}

}  // namespace resnet50
}  // namespace protuner_apps
