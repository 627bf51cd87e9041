// The measure child's environment of child_environment.h.
#include "measurer/child_environment.h"

#include <sstream>

namespace protuner {
namespace {

bool starts_with(const std::string &s, const std::string &prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

std::string with_malloc_tunables(const std::string &tunables, AllocatorPolicy policy) {
  std::string kept;
  std::stringstream in(tunables);
  for (std::string entry; std::getline(in, entry, ':');) {
    if (entry.empty() || starts_with(entry, "glibc.malloc.mmap_threshold=") ||
        starts_with(entry, "glibc.malloc.trim_threshold=")) {
      continue;
    }
    kept += (kept.empty() ? "" : ":") + entry;
  }
  if (policy == AllocatorPolicy::kPooling) {
    kept += (kept.empty() ? "" : ":") + std::string(kPoolingMallocTunables);
  }
  return kept;
}

std::vector<std::string> measure_child_environment(const std::vector<std::string> &environment,
                                                   int threads, AllocatorPolicy policy) {
  static const std::string kThreads = "HL_NUM_THREADS=", kTunables = "GLIBC_TUNABLES=";
  std::vector<std::string> out;
  std::string tunables;
  for (const std::string &entry : environment) {
    if (starts_with(entry, kThreads)) continue;
    if (starts_with(entry, kTunables)) {
      tunables = entry.substr(kTunables.size());
      continue;
    }
    out.push_back(entry);
  }
  out.push_back(kThreads + std::to_string(threads));
  const std::string merged = with_malloc_tunables(tunables, policy);
  if (!merged.empty()) out.push_back(kTunables + merged);
  return out;
}

}  // namespace protuner
