#include "common/farm/library_store.h"

#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/errors.h"
#include "common/farm/redis_schema.h"
#include "common/redis_client.h"

namespace protuner::farm {
namespace {

std::string to_hex(const unsigned char *bytes, size_t n) {
  static const char *digits = "0123456789abcdef";
  std::string out(2 * n, '0');
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = digits[bytes[i] >> 4];
    out[2 * i + 1] = digits[bytes[i] & 15];
  }
  return out;
}

std::string read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError("cannot read library " + path);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) throw IoError("cannot read library " + path);
  return bytes.str();
}

bool is_sha256_hex(const std::string &s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace

std::string sha256_of_bytes(const std::string &bytes) {
  // libsodium picks its implementations in sodium_init; it is idempotent and thread-safe.
  static const int initialized = sodium_init();
  (void)initialized;
  std::array<unsigned char, crypto_hash_sha256_BYTES> digest{};
  crypto_hash_sha256(digest.data(), reinterpret_cast<const unsigned char *>(bytes.data()),
                     bytes.size());
  return to_hex(digest.data(), digest.size());
}

std::string sha256_of_file(const std::string &path) { return sha256_of_bytes(read_file(path)); }

std::string store_library(RedisClient &redis, const std::string &path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw IoError("cannot read library " + path + ": " + ec.message());
  if (static_cast<int64_t>(size) > kMaxLibraryBytes) {
    throw ConfigError("library " + path + " is " + std::to_string(size >> 20) +
                      " MiB; the farm stores libraries up to " +
                      std::to_string(kMaxLibraryBytes >> 20) + " MiB");
  }
  const std::string bytes = read_file(path);
  const std::string hash = sha256_of_bytes(bytes);
  // NX: the same hash is the same bytes, so an existing key is never rewritten.
  redis.command({"SET", library_key(hash), bytes, "NX"});
  return hash;
}

bool library_stored(RedisClient &redis, const std::string &sha256_hex) {
  return redis.command({"EXISTS", library_key(sha256_hex)}).integer == 1;
}

std::string fetch_library(RedisClient &redis, const std::string &sha256_hex,
                          const std::string &cache_dir) {
  if (!is_sha256_hex(sha256_hex)) {
    throw ConfigError("library hash '" + sha256_hex + "' is not 64 lowercase hex digits");
  }
  std::error_code ec;
  std::filesystem::create_directories(cache_dir, ec);
  if (ec) throw IoError("cannot create library cache " + cache_dir + ": " + ec.message());
  const std::string path = (std::filesystem::path(cache_dir) / (sha256_hex + ".so")).string();
  if (std::filesystem::exists(path) && sha256_of_file(path) == sha256_hex) return path;

  const std::optional<std::string> bytes = redis.get(library_key(sha256_hex));
  if (!bytes) {
    throw IoError("redis " + redis.endpoint() + " has no library " + sha256_hex +
                  " (was the suite submitted to this Redis?)");
  }
  if (sha256_of_bytes(*bytes) != sha256_hex) {
    throw IoError("redis " + redis.endpoint() + ": the bytes stored as library " + sha256_hex +
                  " hash to something else; refusing to load them");
  }
  // Unique per process and thread, so concurrent fetches of one hash never share a file.
  const std::string temporary =
      path + ".tmp." + std::to_string(getpid()) + "." +
      std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()));
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
    out.close();
    if (!out) {
      std::remove(temporary.c_str());
      throw IoError("cannot write library cache file " + temporary);
    }
  }
  chmod(temporary.c_str(), S_IRUSR | S_IXUSR);
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    std::remove(temporary.c_str());
    throw IoError("cannot move " + temporary + " to " + path + ": " + ec.message());
  }
  return path;
}

}  // namespace protuner::farm
