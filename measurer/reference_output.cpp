// Reference outputs on disk: a JSON header line, then raw values (format in
// reference_output.h).
#include "measurer/reference_output.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <fstream>
#include <sstream>

#include "common/errors.h"
#include "measurer/cache_key.h"

namespace protuner {
namespace {

constexpr const char *kFormat = "protuner-reference";
// 2: each output's mins are stored (outputs sit at their estimated regions).
constexpr int kVersion = 2;

std::string type_text(const Halide::Type &t) {
  std::ostringstream os;
  os << t;
  return os.str();
}

// The types a reference can hold: the ones bind_random_inputs and outputs use.
std::optional<Halide::Type> parse_type(const std::string &s) {
  for (const Halide::Type &t :
       {Halide::Float(32), Halide::Float(64), Halide::Bool(), Halide::UInt(8), Halide::Int(8),
        Halide::UInt(16), Halide::Int(16), Halide::UInt(32), Halide::Int(32), Halide::UInt(64),
        Halide::Int(64)}) {
    if (type_text(t) == s) return t;
  }
  return std::nullopt;
}

// A dense copy (dimension 0 fastest) over the same region, so the bytes on disk do not
// depend on the candidate's strides. The copy is made at `b`'s mins: a Halide::Buffer is a
// shared handle, so translating a copy of the handle would move `b` too.
Halide::Buffer<> dense_copy(const Halide::Buffer<> &b) {
  std::vector<int> mins, extents;
  for (int d = 0; d < b.dimensions(); ++d) {
    mins.push_back(b.dim(d).min());
    extents.push_back(b.dim(d).extent());
  }
  Halide::Buffer<> out(b.type(), extents);
  out.set_min(mins);
  out.copy_from(b);
  return out;
}

}  // namespace

std::string reference_path(const std::string &cache_dir, const std::string &key) {
  return cache_dir + "/references/" + key_hash(key) + ".ref";
}

std::optional<ReferenceOutput> load_reference(const std::string &path, const std::string &key) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string header_line;
  if (!std::getline(in, header_line)) return std::nullopt;
  ReferenceOutput ref;
  try {
    const auto header = nlohmann::json::parse(header_line);
    if (header.at("format") != kFormat || header.at("version") != kVersion ||
        header.at("key") != key) {
      return std::nullopt;
    }
    for (const auto &o : header.at("outputs")) {
      const auto type = parse_type(o.at("type").get<std::string>());
      if (!type) return std::nullopt;
      const auto extents = o.at("extents").get<std::vector<int>>();
      const auto mins = o.at("mins").get<std::vector<int>>();
      if (mins.size() != extents.size()) return std::nullopt;
      Halide::Buffer<> buf(*type, extents);
      buf.set_min(mins);
      const auto bytes = static_cast<std::streamsize>(buf.size_in_bytes());
      if (!in.read(static_cast<char *>(buf.data()), bytes)) return std::nullopt;
      ref.names.push_back(o.at("name").get<std::string>());
      ref.buffers.push_back(std::move(buf));
    }
  } catch (const nlohmann::json::exception &) {
    return std::nullopt;
  }
  if (in.peek() != std::char_traits<char>::eof()) return std::nullopt;  // trailing bytes
  return ref;
}

void save_reference(const std::string &path, const std::string &key,
                    const ReferenceOutput &reference) {
  nlohmann::json outputs = nlohmann::json::array();
  std::string data;
  for (size_t i = 0; i < reference.buffers.size(); ++i) {
    const Halide::Buffer<> dense = dense_copy(reference.buffers[i]);
    std::vector<int> mins, extents;
    for (int d = 0; d < dense.dimensions(); ++d) {
      mins.push_back(dense.dim(d).min());
      extents.push_back(dense.dim(d).extent());
    }
    outputs.push_back({{"name", i < reference.names.size() ? reference.names[i] : ""},
                       {"type", type_text(dense.type())},
                       {"mins", mins},
                       {"extents", extents}});
    data.append(static_cast<const char *>(dense.data()), dense.size_in_bytes());
  }
  const nlohmann::json header = {
      {"format", kFormat}, {"version", kVersion}, {"key", key}, {"outputs", outputs}};
  ensure_directory(path.substr(0, path.rfind('/')));
  write_file_atomically(path, header.dump() + "\n" + data);
}

}  // namespace protuner
