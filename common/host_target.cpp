#include "common/host_target.h"

#include <Halide.h>
#include <fstream>
#include <sstream>

namespace protuner {
namespace {

std::set<std::string> cpu_flags() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    return {std::istream_iterator<std::string>(words), std::istream_iterator<std::string>()};
  }
  return {};
}

}  // namespace

Halide::Target without_missing_cpu_features(const Halide::Target &target,
                                            const std::set<std::string> &flags) {
  if (flags.empty()) return target;  // nothing to check against: trust Halide
  // Each Halide feature and a CPU flag its generated code needs.
  const std::pair<Halide::Target::Feature, const char *> needs[] = {
      {Halide::Target::AVX512_SapphireRapids, "avx512_fp16"},
      {Halide::Target::AVX512_Cannonlake, "avx512ifma"},
      {Halide::Target::AVX512_Skylake, "avx512bw"},
      {Halide::Target::AVX512_KNL, "avx512er"},
      {Halide::Target::AVX512, "avx512f"},
      {Halide::Target::AVX2, "avx2"},
      {Halide::Target::FMA, "fma"},
      {Halide::Target::F16C, "f16c"},
  };
  Halide::Target t = target;
  for (const auto &[feature, flag] : needs) {
    if (t.has_feature(feature) && !flags.count(flag)) t = t.without_feature(feature);
  }
  return t;
}

Halide::Target host_target() {
  static const Halide::Target target =
      without_missing_cpu_features(Halide::get_host_target(), cpu_flags());
  return target;
}

}  // namespace protuner
