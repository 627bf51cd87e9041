// The run plan file (run_plan.h).
#include "measurer/run_plan.h"

#include <fstream>

#include "common/errors.h"

namespace protuner {
namespace {

constexpr char kMagic[] = "protuner-run-plan 1\n";
// No pipeline of ours has more; a larger count is a corrupt file.
constexpr uint32_t kMaxArguments = 4096;
constexpr int32_t kMaxDimensions = 16;

template <typename T>
void put(std::ofstream &out, const T &value) {
  out.write(reinterpret_cast<const char *>(&value), sizeof(T));
}

template <typename T>
T get(std::ifstream &in, const std::string &path) {
  T value{};
  if (!in.read(reinterpret_cast<char *>(&value), sizeof(T))) {
    throw ConfigError("run plan '" + path + "' is truncated");
  }
  return value;
}

}  // namespace

uint64_t allocation_bytes(const halide_type_t &type, const std::vector<halide_dimension_t> &dims) {
  uint64_t last = 0;  // the offset of the last element, in elements
  for (const halide_dimension_t &d : dims) {
    if (d.extent <= 0) return 0;
    last += static_cast<uint64_t>(d.extent - 1) * static_cast<uint64_t>(d.stride);
  }
  return (last + 1) * type.bytes();
}

void write_run_plan(const std::string &path, const std::vector<PlannedArgument> &arguments) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(kMagic, sizeof(kMagic) - 1);
  put(out, static_cast<uint32_t>(arguments.size()));
  for (const PlannedArgument &a : arguments) {
    put(out, static_cast<uint8_t>(a.kind));
    put(out, static_cast<uint8_t>(a.type.code));
    put(out, a.type.bits);
    put(out, a.type.lanes);
    put(out, static_cast<int32_t>(a.dims.size()));
    for (const halide_dimension_t &d : a.dims) {
      put(out, d.min);
      put(out, d.extent);
      put(out, d.stride);
    }
    put(out, static_cast<uint64_t>(a.data.size()));
    out.write(reinterpret_cast<const char *>(a.data.data()),
              static_cast<std::streamsize>(a.data.size()));
  }
  out.flush();
  if (!out) throw IoError("cannot write run plan '" + path + "'");
}

std::vector<PlannedArgument> read_run_plan(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError("cannot read run plan '" + path + "'");
  std::string magic(sizeof(kMagic) - 1, '\0');
  if (!in.read(magic.data(), static_cast<std::streamsize>(magic.size())) || magic != kMagic) {
    throw ConfigError("'" + path + "' is not a run plan of version 1");
  }
  const uint32_t count = get<uint32_t>(in, path);
  if (count > kMaxArguments) throw ConfigError("run plan '" + path + "' is corrupt (arguments)");
  std::vector<PlannedArgument> arguments(count);
  for (PlannedArgument &a : arguments) {
    const uint8_t kind = get<uint8_t>(in, path);
    if (kind > static_cast<uint8_t>(PlannedArgument::Kind::kScalar)) {
      throw ConfigError("run plan '" + path + "' is corrupt (argument kind)");
    }
    a.kind = static_cast<PlannedArgument::Kind>(kind);
    a.type.code = static_cast<halide_type_code_t>(get<uint8_t>(in, path));
    a.type.bits = get<uint8_t>(in, path);
    a.type.lanes = get<uint16_t>(in, path);
    const int32_t dims = get<int32_t>(in, path);
    if (dims < 0 || dims > kMaxDimensions) {
      throw ConfigError("run plan '" + path + "' is corrupt (dimensions)");
    }
    a.dims.resize(static_cast<size_t>(dims));
    for (halide_dimension_t &d : a.dims) {
      d.min = get<int32_t>(in, path);
      d.extent = get<int32_t>(in, path);
      d.stride = get<int32_t>(in, path);
      d.flags = 0;
    }
    const uint64_t size = get<uint64_t>(in, path);
    const uint64_t expected = a.kind == PlannedArgument::Kind::kScalar
                                  ? sizeof(halide_scalar_value_t)
                                  : allocation_bytes(a.type, a.dims);
    if (size != 0 && size != expected) {
      throw ConfigError("run plan '" + path + "' is corrupt (data size)");
    }
    a.data.resize(size);
    if (size > 0 &&
        !in.read(reinterpret_cast<char *>(a.data.data()), static_cast<std::streamsize>(size))) {
      throw ConfigError("run plan '" + path + "' is truncated");
    }
  }
  return arguments;
}

}  // namespace protuner
