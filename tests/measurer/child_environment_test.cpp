// The measure child's environment: thread count and allocator policy replace whatever the
// measurer's own environment says, and nothing else is touched.
#include "measurer/child_environment.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace protuner {
namespace {

TEST(MeasureChildEnvironment, ThePlatformPolicySetsThreadsAndLeavesMallocAsItComes) {
  const std::vector<std::string> env = measure_child_environment(
      {"PATH=/usr/bin", "HL_NUM_THREADS=16", "HOME=/root"}, 2, AllocatorPolicy::kPlatform);
  EXPECT_EQ(env, (std::vector<std::string>{"PATH=/usr/bin", "HOME=/root", "HL_NUM_THREADS=2"}));
}

TEST(MeasureChildEnvironment, ThePlatformPolicyDropsTheMeasurersOwnMallocThresholds) {
  const std::vector<std::string> env = measure_child_environment(
      {"GLIBC_TUNABLES=glibc.malloc.mmap_threshold=65536:glibc.malloc.trim_threshold=1"}, 1,
      AllocatorPolicy::kPlatform);
  EXPECT_EQ(env, (std::vector<std::string>{"HL_NUM_THREADS=1"}));
}

TEST(MeasureChildEnvironment, ThePoolingPolicyOverridesTheUsersMallocThresholdsButKeepsTheirOtherTunables) {
  const std::vector<std::string> env = measure_child_environment(
      {"GLIBC_TUNABLES=glibc.malloc.trim_threshold=1:glibc.cpu.hwcaps=-AVX512F:"
       "glibc.malloc.mmap_threshold=65536"},
      1, AllocatorPolicy::kPooling);
  ASSERT_EQ(env.size(), 2u);
  EXPECT_EQ(env[1], std::string("GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX512F:") +
                        kPoolingMallocTunables);
  EXPECT_EQ(std::count_if(env.begin(), env.end(),
                          [](const std::string &e) { return e.rfind("GLIBC_TUNABLES=", 0) == 0; }),
            1);
}

TEST(MeasureChildEnvironment, MergingIsIdempotent) {
  for (AllocatorPolicy policy : {AllocatorPolicy::kPlatform, AllocatorPolicy::kPooling}) {
    const std::string once = with_malloc_tunables("glibc.pthread.rseq=0", policy);
    EXPECT_EQ(with_malloc_tunables(once, policy), once);
  }
  EXPECT_EQ(with_malloc_tunables("", AllocatorPolicy::kPooling), kPoolingMallocTunables);
  EXPECT_EQ(with_malloc_tunables("", AllocatorPolicy::kPlatform), "");
}

}  // namespace
}  // namespace protuner
