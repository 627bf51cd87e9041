// Generator libraries in Redis, content-addressed. A suite is submitted from a laptop and
// tuned on hosts that share no filesystem with it: submit stores each library's bytes under
// its SHA-256, and every searcher and measurer fetches it by that hash into a local cache
// before loading it. The hash is the app's identity everywhere, so a rebuilt library is a
// new app and a cached file can always be checked against its name.
//
// A daemon loads only files this store wrote into its cache folder after checking their
// hash, never a path a request names: what runs is what a submission put in Redis.
//
// Thread safety: none of its own; each thread uses its own RedisClient.
#pragma once

#include <cstdint>
#include <string>

namespace protuner {

class RedisClient;

namespace farm {

// The SHA-256 of a file's bytes, as 64 lowercase hex digits. Throws IoError naming the
// path when it cannot be read.
std::string sha256_of_file(const std::string &path);
std::string sha256_of_bytes(const std::string &bytes);

// Libraries above this size are refused at submission: Redis strings stop at 512 MiB, and
// a generator library is a few MiB.
inline constexpr int64_t kMaxLibraryBytes = int64_t{256} << 20;

// Stores the file's bytes under its hash (nothing is written when that hash is already
// stored) and returns the hash. Throws IoError for an unreadable file, ConfigError for one
// larger than kMaxLibraryBytes.
std::string store_library(RedisClient &redis, const std::string &path);

// Whether a library with this hash is stored.
bool library_stored(RedisClient &redis, const std::string &sha256_hex);

// The path of the library with this hash in `cache_dir` (created if missing): reused when
// a file of that name is there and its bytes still hash to it, otherwise fetched from
// Redis, checked and written atomically (temporary file, then rename), mode 0500.
// Throws ConfigError for a hash that is not 64 hex digits, IoError when Redis has no such
// library, or when the bytes it has do not hash to the name (never written to the cache).
std::string fetch_library(RedisClient &redis, const std::string &sha256_hex,
                          const std::string &cache_dir);

}  // namespace farm
}  // namespace protuner
