// ResNet-50 v1 inference, batch 1: the suite's deep-learning app. As in ProTuner, the
// network is tuned block by block, so this library has one generator per distinct part
// (resnet50_stem, resnet50_block_<stage>[_first], resnet50_head) and resnet50, the whole
// network in one pipeline. All of them build their algorithm with resnet_layers.h.
#include <string>
#include <vector>

#include "Halide.h"
#include "resnet_layers.h"

namespace protuner_apps {
namespace {

using Halide::Buffer;
using Halide::GeneratorInput;
using Halide::GeneratorOutput;
using Halide::GeneratorParam;
using Halide::Var;
using resnet50::Placement;
using resnet50::Tensor;

Tensor tensor_of(const GeneratorInput<Buffer<float>> &in, int channels) {
  return {in, channels, in.dim(1).extent(), in.dim(2).extent()};
}

// 7x7/2 conv + bn + relu + 3x3/2 max pool: image [3, 224, 224] -> [64, 56, 56].
class Stem : public Halide::Generator<Stem> {
 public:
  Input<Buffer<float>> input{"input", 3};
  Input<Buffer<float>> params{"params", 1};  // packed as resnet_layers.h describes
  Output<Buffer<float>> output{"output", 3};

  void generate() {
    resnet50::ParamPack pack(params);
    stem_ = resnet50::stem(tensor_of(input, 3), pack);
    Var c("c"), x("x"), y("y");
    output(c, x, y) = stem_.out.f(c, x, y);

    input.set_estimates({{0, 3}, {0, resnet50::kImageSize}, {0, resnet50::kImageSize}});
    params.set_estimates({{0, pack.size()}});
    output.set_estimates({{0, resnet50::kStemConv.out_channels},
                          {0, resnet50::kStemSize},
                          {0, resnet50::kStemSize}});
  }

  void schedule() {
    if (!auto_schedule) {
      resnet50::schedule_stem(stem_, output, natural_vector_size<float>());
    }
  }

 private:
  resnet50::Stem stem_;
};

// One bottleneck block shape: [C_in, W, H] -> [C_out, W / stride, H / stride].
template <int Stage, bool First>
class ResidualBlock : public Halide::Generator<ResidualBlock<Stage, First>> {
  static constexpr resnet50::BlockShape kShape{Stage, First};

 public:
  GeneratorInput<Buffer<float>> input{"input", 3};
  GeneratorInput<Buffer<float>> params{"params", 1};  // packed as resnet_layers.h describes
  GeneratorOutput<Buffer<float>> output{"output", 3};

  void generate() {
    resnet50::ParamPack pack(params);
    const std::string name = "res" + std::to_string(Stage) + (First ? "a" : "b");
    block_ = resnet50::bottleneck(tensor_of(input, kShape.in_channels()), kShape, pack, name);
    Var c("c"), x("x"), y("y");
    output(c, x, y) = block_.out.f(c, x, y);

    input.set_estimates({{0, kShape.in_channels()}, {0, kShape.in_size()}, {0, kShape.in_size()}});
    params.set_estimates({{0, pack.size()}});
    output.set_estimates(
        {{0, kShape.out_channels()}, {0, kShape.out_size()}, {0, kShape.out_size()}});
  }

  void schedule() {
    if (!this->auto_schedule) {
      resnet50::schedule_block(block_, output, Placement::Output,
                               this->template natural_vector_size<float>());
    }
  }

 private:
  resnet50::Block block_;
};

// Global average pool + fully connected: [2048, 7, 7] -> 1000 logits.
class Head : public Halide::Generator<Head> {
 public:
  Input<Buffer<float>> input{"input", 3};
  Input<Buffer<float>> params{"params", 1};  // packed as resnet_layers.h describes
  Output<Buffer<float>> output{"output", 1};

  void generate() {
    resnet50::ParamPack pack(params);
    head_ = resnet50::head(tensor_of(input, resnet50::kFeatures), pack);
    Var o("o");
    output(o) = head_.fc(o);

    input.set_estimates(
        {{0, resnet50::kFeatures}, {0, resnet50::kHeadSize}, {0, resnet50::kHeadSize}});
    params.set_estimates({{0, pack.size()}});
    output.set_estimates({{0, resnet50::kClasses}});
  }

  void schedule() {
    if (!auto_schedule) {
      resnet50::schedule_head(head_, output, natural_vector_size<float>());
    }
  }

 private:
  resnet50::Head head_;
};

// The whole network: image [3, 224, 224] -> 1000 logits. Its packed parameters are the
// stem's, the 16 blocks' and the head's, concatenated in that order.
class ResNet50 : public Halide::Generator<ResNet50> {
 public:
  Input<Buffer<float>> input{"input", 3};
  Input<Buffer<float>> params{"params", 1};  // packed as resnet_layers.h describes
  Output<Buffer<float>> output{"output", 1};

  void generate() {
    resnet50::ParamPack pack(params);
    stem_ = resnet50::stem(tensor_of(input, 3), pack);
    Tensor t = stem_.out;
    int index_in_stage = 0;
    for (const resnet50::BlockShape &shape : resnet50::all_blocks()) {
      index_in_stage = shape.first ? 0 : index_in_stage + 1;
      // Caffe's names: res2a, res2b, ..., res5c.
      const std::string name =
          "res" + std::to_string(shape.stage) + static_cast<char>('a' + index_in_stage);
      blocks_.push_back(resnet50::bottleneck(t, shape, pack, name));
      t = blocks_.back().out;
    }
    head_ = resnet50::head(t, pack);
    Var o("o");
    output(o) = head_.fc(o);

    input.set_estimates({{0, 3}, {0, resnet50::kImageSize}, {0, resnet50::kImageSize}});
    params.set_estimates({{0, pack.size()}});
    output.set_estimates({{0, resnet50::kClasses}});
  }

  void schedule() {
    if (!auto_schedule) {
      const int vec = natural_vector_size<float>();
      resnet50::schedule_stem(stem_, stem_.out.f, vec);
      for (const resnet50::Block &b : blocks_) {
        resnet50::schedule_block(b, b.out.f, Placement::Internal, vec);
      }
      resnet50::schedule_head(head_, output, vec);
    }
  }

 private:
  resnet50::Stem stem_;
  std::vector<resnet50::Block> blocks_;
  resnet50::Head head_;
};

using Block2First = ResidualBlock<2, true>;
using Block2 = ResidualBlock<2, false>;
using Block3First = ResidualBlock<3, true>;
using Block3 = ResidualBlock<3, false>;
using Block4First = ResidualBlock<4, true>;
using Block4 = ResidualBlock<4, false>;
using Block5First = ResidualBlock<5, true>;
using Block5 = ResidualBlock<5, false>;

}  // namespace
}  // namespace protuner_apps

HALIDE_REGISTER_GENERATOR(protuner_apps::Stem, resnet50_stem)
HALIDE_REGISTER_GENERATOR(protuner_apps::Block2First, resnet50_block_2_first)
HALIDE_REGISTER_GENERATOR(protuner_apps::Block2, resnet50_block_2)
HALIDE_REGISTER_GENERATOR(protuner_apps::Block3First, resnet50_block_3_first)
HALIDE_REGISTER_GENERATOR(protuner_apps::Block3, resnet50_block_3)
HALIDE_REGISTER_GENERATOR(protuner_apps::Block4First, resnet50_block_4_first)
HALIDE_REGISTER_GENERATOR(protuner_apps::Block4, resnet50_block_4)
HALIDE_REGISTER_GENERATOR(protuner_apps::Block5First, resnet50_block_5_first)
HALIDE_REGISTER_GENERATOR(protuner_apps::Block5, resnet50_block_5)
HALIDE_REGISTER_GENERATOR(protuner_apps::Head, resnet50_head)
HALIDE_REGISTER_GENERATOR(protuner_apps::ResNet50, resnet50)
