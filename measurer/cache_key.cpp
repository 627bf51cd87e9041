// Canonical keys, their hashes and atomic files for the measurer's disk caches.
#include "measurer/cache_key.h"

#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/errors.h"

namespace protuner {
namespace {

uint64_t fnv1a(const std::string &text, uint64_t seed) {
  uint64_t h = seed;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Real path, size and mtime of `path` under `prefix`_* keys (the path itself under
// `prefix`), so a rebuilt or upgraded file is a new identity.
void add_file_identity(nlohmann::json &j, const std::string &prefix, const std::string &path) {
  char resolved[PATH_MAX];
  const std::string real = realpath(path.c_str(), resolved) ? resolved : path;
  j[prefix] = real;
  struct stat st {};
  if (stat(real.c_str(), &st) == 0) {
    j[prefix + "_size"] = static_cast<int64_t>(st.st_size);
    j[prefix + "_mtime_ns"] =
        static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  }
}

}  // namespace

std::string app_identity_key(const AppSpec &app) {
  nlohmann::json j;
  add_file_identity(j, "library", app.library);
  j["generator"] = app.generator;
  j["params"] = app.params;  // std::map: sorted, so the text is canonical
  return j.dump();
}

std::string file_identity_key(const std::string &path) {
  nlohmann::json j;
  add_file_identity(j, "file", path);
  return j.dump();
}

std::string host_class_key(const HostFacts &host, int cpus_used) {
  const nlohmann::json j = {{"cpu_model", host.cpu_model}, {"cpus", cpus_used}, {"smt", host.smt}};
  return j.dump();
}

std::string reference_key(const AppSpec &app, const std::string &resolved_target,
                          uint64_t input_seed) {
  const nlohmann::json j = {{"app", nlohmann::json::parse(app_identity_key(app))},
                            {"target", resolved_target},
                            {"seed", input_seed},
                            {"schedule", "root"}};
  return j.dump();
}

std::string key_hash(const std::string &text) {
  char out[33];
  std::snprintf(out, sizeof(out), "%016llx%016llx",
                static_cast<unsigned long long>(fnv1a(text, 1469598103934665603ull)),
                static_cast<unsigned long long>(fnv1a(text, 0x9E3779B97F4A7C15ull)));
  return out;
}

std::string candidate_dir(const std::string &cache_dir, int pid) {
  return cache_dir + "/candidates/" + std::to_string(pid);
}

std::string default_cache_dir() {
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    return std::string(xdg) + "/protuner";
  }
  if (const char *home = std::getenv("HOME"); home && *home) {
    return std::string(home) + "/.cache/protuner";
  }
  return "/tmp/protuner-cache";
}

std::string default_library_cache_dir() {
  return (std::filesystem::path(default_cache_dir()) / "libraries").string();
}

void ensure_directory(const std::string &dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw IoError("cannot create cache directory '" + dir + "': " + ec.message());
}

void write_file_atomically(const std::string &path, const std::string &contents) {
  // The pid and a per-process counter keep concurrent writers (threads or processes)
  // off each other's temporary files.
  static std::atomic<uint64_t> counter{0};
  const std::string tmp =
      path + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw IoError("cannot write '" + tmp + "': " + std::strerror(errno));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw IoError("cannot rename '" + tmp + "' to '" + path + "': " + why);
  }
}

}  // namespace protuner
