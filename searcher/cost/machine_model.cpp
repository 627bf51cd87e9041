#include "searcher/cost/machine_model.h"

#include <Halide.h>
#include <cctype>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/host_target.h"

namespace protuner {
namespace {

std::string read_line(const std::string &path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// "48K", "2048K", "32M" as sysfs writes cache sizes; 0 when unreadable.
int64_t parse_size(const std::string &s) {
  if (s.empty()) return 0;
  int64_t n = 0;
  size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) n = n * 10 + (s[i++] - '0');
  if (i < s.size() && (s[i] == 'K' || s[i] == 'k')) n *= 1024;
  if (i < s.size() && (s[i] == 'M' || s[i] == 'm')) n *= 1024 * 1024;
  return n;
}

}  // namespace

MachineModel MachineModel::from_host() {
  MachineModel m;
  m.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const Halide::Target t = host_target();
  m.vector_bits = t.has_feature(Halide::Target::AVX512)                                    ? 512
                  : t.has_feature(Halide::Target::AVX2) || t.has_feature(Halide::Target::AVX) ? 256
                                                                                            : 128;
  for (int i = 0; i < 8; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    const std::string level = read_line(dir + "level"), type = read_line(dir + "type");
    const int64_t size = parse_size(read_line(dir + "size"));
    if (level.empty() || size <= 0) continue;
    if (level == "1" && type == "Data") m.l1_bytes = size;
    if (level == "2") m.l2_bytes = size;
    if (level == "3") m.l3_bytes = std::min(size, kMaxTrustedL3Bytes);
  }
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("cpu MHz", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) break;
    try {
      const double mhz = std::stod(line.substr(colon + 1));
      if (mhz > 100) m.clock_hz = mhz * 1e6;
    } catch (const std::exception &) {
    }
    break;
  }
  return m;
}

std::string MachineModel::describe() const {
  std::ostringstream os;
  os << cores << " cores, " << vector_bits << "-bit vectors, L1d " << l1_bytes / 1024
     << " KiB, L2 " << l2_bytes / 1024 << " KiB, L3 " << l3_bytes / 1024 << " KiB, "
     << clock_hz / 1e9 << " GHz";
  return os.str();
}

}  // namespace protuner
