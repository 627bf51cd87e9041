// ResNet-50 is tuned block by block (resnet50_stem, the resnet50_block_* generators,
// resnet50_head), but measured as the whole network (resnet50). This checks that the parts
// compose into exactly that network: running the stem, the 16 blocks and the head one after
// another, with the same parameters, computes the same logits bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <Halide.h>

#include "apps/resnet50/resnet_layers.h"
#include "common/app.h"
#include "common/host_target.h"

namespace {

using Halide::Buffer;
namespace resnet50 = protuner_apps::resnet50;

// One generator's pipeline with the expert schedule, and its two inputs.
struct Part {
  explicit Part(protuner::AppInstance a) : app(std::move(a)) {}
  protuner::AppInstance app;
  Halide::Internal::Parameter input, params;
  int params_size = 0;  // the estimate of `params`, which is exactly what the part reads

  Buffer<float> run(const Buffer<float> &in, const Buffer<float> &p, std::vector<int> extents) {
    input.set_buffer(in);
    params.set_buffer(p);
    Buffer<float> out(extents);
    app.pipeline().realize(out, app.target());
    return out;
  }
};

Part make_part(const std::string &generator, const Halide::Target &target) {
  Part part(protuner::AppInstance::create({generator, PROTUNER_RESNET50_LIBRARY, generator, {}},
                                          target, protuner::GeneratorSchedule::kOwn));
  std::vector<Halide::Internal::Function> outputs;
  for (const Halide::Func &f : part.app.pipeline().outputs()) outputs.push_back(f.function());
  for (const auto &a : Halide::Internal::infer_arguments(Halide::Internal::Stmt(), outputs)) {
    if (a.arg.name == "input") part.input = a.param;
    if (a.arg.name == "params") {
      part.params = a.param;
      const Halide::Expr &extent = a.arg.argument_estimates.buffer_estimates.at(0).extent;
      part.params_size = static_cast<int>(*Halide::Internal::as_const_int(extent));
    }
  }
  return part;
}

// Deterministic uniform random numbers (splitmix64).
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  float uniform(float lo, float hi) {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return lo + (hi - lo) * static_cast<float>(static_cast<double>(z >> 11) * 0x1.0p-53);
  }

 private:
  uint64_t state_;
};

void append_uniform(std::vector<float> &v, int count, float lo, float hi, Random &rng) {
  for (int i = 0; i < count; ++i) v.push_back(rng.uniform(lo, hi));
}

// The whole network's parameters, packed as resnet_layers.h describes and scaled roughly as
// a trained network's are (He-initialized weights, batch-norm scales near 1), so that the
// input image still shapes the logits after 50 layers and a difference anywhere shows.
Buffer<float> network_params() {
  Random rng(2);
  std::vector<float> p;
  auto conv = [&](const resnet50::ConvShape &s) {
    const int fan_in = s.in_channels * s.kernel * s.kernel;
    const float bound = std::sqrt(6.f / static_cast<float>(fan_in));
    append_uniform(p, s.out_channels * fan_in, -bound, bound, rng);
    append_uniform(p, s.out_channels, 0.5f, 1.f, rng);    // scale
    append_uniform(p, s.out_channels, -0.1f, 0.1f, rng);  // shift
  };
  conv(resnet50::kStemConv);
  for (const resnet50::BlockShape &block : resnet50::all_blocks()) {
    for (const resnet50::ConvShape &s : block.convs()) conv(s);
  }
  const float bound = std::sqrt(3.f / resnet50::kFeatures);
  append_uniform(p, resnet50::kClasses * resnet50::kFeatures, -bound, bound, rng);
  append_uniform(p, resnet50::kClasses, -0.1f, 0.1f, rng);
  Buffer<float> b(static_cast<int>(p.size()));
  std::memcpy(b.data(), p.data(), p.size() * sizeof(float));
  return b;
}

Buffer<float> random_image(int size) {
  Random rng(1);
  Buffer<float> b(3, size, size);
  b.for_each_value([&](float &v) { v = rng.uniform(0.f, 1.f); });
  return b;
}

// A view of the packed parameters from `offset` on, indexed from 0.
Buffer<float> slice(Buffer<float> &all, int offset, int size) {
  return Buffer<float>(all.data() + offset, size);
}

TEST(Resnet50, BlocksComposedComputeTheWholeNetwork) {
  const Halide::Target target = protuner::host_target().with_feature(Halide::Target::StrictFloat);

  // A reduced image keeps the run short: 64x64 -> 16x16 after the stem -> 2x2 in stage 5.
  const int size = 64;
  const Buffer<float> image = random_image(size);
  Buffer<float> params = network_params();
  Part whole = make_part("resnet50", target);
  ASSERT_EQ(params.dim(0).extent(), whole.params_size) << "packed layout changed";
  const Buffer<float> expected = whole.run(image, params, {resnet50::kClasses});

  std::map<std::string, Part> parts;
  auto part = [&](const std::string &name) -> Part & {
    if (!parts.count(name)) parts.emplace(name, make_part(name, target));
    return parts.at(name);
  };
  int offset = 0;
  auto run = [&](const std::string &name, const Buffer<float> &in, std::vector<int> extents) {
    Part &p = part(name);
    Buffer<float> out = p.run(in, slice(params, offset, p.params_size), extents);
    offset += p.params_size;
    return out;
  };

  int width = size / 4;
  Buffer<float> t = run("resnet50_stem", image, {resnet50::kStemConv.out_channels, width, width});
  for (const resnet50::BlockShape &block : resnet50::all_blocks()) {
    const std::string name =
        "resnet50_block_" + std::to_string(block.stage) + (block.first ? "_first" : "");
    width = (width + block.stride() - 1) / block.stride();
    t = run(name, t, {block.out_channels(), width, width});
  }
  const Buffer<float> composed = run("resnet50_head", t, {resnet50::kClasses});
  EXPECT_EQ(offset, whole.params_size) << "the parts read a different amount of parameters";

  int differences = 0;
  for (int o = 0; o < resnet50::kClasses; ++o) {
    if (std::memcmp(&expected(o), &composed(o), sizeof(float)) != 0) {
      if (differences++ < 5) {
        ADD_FAILURE() << "logit " << o << ": whole network " << expected(o) << ", composed "
                      << composed(o);
      }
    }
  }
  EXPECT_EQ(differences, 0);
  // Guard against a vacuous pass: the logits must be finite and must differ.
  for (int o = 0; o < resnet50::kClasses; ++o)
    ASSERT_TRUE(std::isfinite(expected(o))) << "logit " << o;
  EXPECT_NE(expected(0), expected(1));
}

}  // namespace
