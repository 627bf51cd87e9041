// host_target(): Halide features the CPU's flags rule out are removed, others kept.
#include "common/host_target.h"

#include <gtest/gtest.h>

#include <Halide.h>

namespace protuner {
namespace {

TEST(HostTarget, DropsSapphireRapidsWithoutAvx512Fp16) {
  const Halide::Target zen4(
      "x86-64-linux-avx-avx2-avx512-avx512_cannonlake-"
      "avx512_sapphirerapids-avx512_skylake-f16c-fma-sse41");
  const std::set<std::string> flags{"avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512ifma"};
  const Halide::Target t = without_missing_cpu_features(zen4, flags);
  EXPECT_FALSE(t.has_feature(Halide::Target::AVX512_SapphireRapids));
  EXPECT_TRUE(t.has_feature(Halide::Target::AVX512_Cannonlake));
  EXPECT_TRUE(t.has_feature(Halide::Target::AVX512_Skylake));
  EXPECT_TRUE(t.has_feature(Halide::Target::FMA));
}

TEST(HostTarget, KeepsEverythingTheFlagsSupportOrWhenFlagsAreUnknown) {
  const Halide::Target spr("x86-64-linux-avx-avx2-avx512-avx512_sapphirerapids-fma");
  EXPECT_EQ(without_missing_cpu_features(spr, {"avx2", "fma", "avx512f", "avx512_fp16"}), spr);
  EXPECT_EQ(without_missing_cpu_features(spr, {}), spr);
}

TEST(HostTarget, HostTargetRunsCodeOnThisMachine) {
  Halide::Func f;
  Halide::Var x;
  f(x) = Halide::cast<float>(x) * 0.5f;
  f.vectorize(x, 16);
  Halide::Buffer<float> out = f.realize({64}, host_target());
  EXPECT_EQ(out(63), 31.5f);
}

}  // namespace
}  // namespace protuner
