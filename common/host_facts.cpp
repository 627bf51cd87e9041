#include "common/host_facts.h"

#include "common/host_target.h"

#include <sched.h>
#include <unistd.h>

#include <Halide.h>
#include <fmt/format.h>
#include <fstream>
#include <random>
#include <set>
#include <utility>

#include "common/host_target.h"

namespace protuner {
namespace {

std::string read_first_line(const std::string &path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  return line;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown";
}

}  // namespace

HostFacts detect_host_facts() {
  HostFacts facts;
  facts.cpu_model = cpu_model();

  cpu_set_t set;
  CPU_ZERO(&set);
  std::set<std::pair<std::string, std::string>> cores;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (!CPU_ISSET(cpu, &set)) continue;
      ++facts.logical_cpus;
      const std::string topo = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
      const std::string core = read_first_line(topo + "core_id");
      // Without topology, count each CPU as its own core.
      cores.emplace(read_first_line(topo + "physical_package_id"),
                    core.empty() ? "cpu" + std::to_string(cpu) : core);
    }
  }
  facts.physical_cores = static_cast<int>(cores.size());

  const std::string smt = read_first_line("/sys/devices/system/cpu/smt/active");
  facts.smt = smt == "1" ? "on" : smt == "0" ? "off" : "unknown";

  const std::string gov = read_first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  facts.governor = gov.empty() ? "none" : gov;
  facts.halide_target = host_target().to_string();
  return facts;
}

std::string unique_process_name() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  std::random_device random;
  return fmt::format("{}-{}-{:04x}", host, getpid(), random() & 0xffff);
}

}  // namespace protuner
