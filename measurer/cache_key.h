// Keys for what the measurer keeps on disk (reference outputs, cached results) and where
// that disk is. A key is canonical text (sorted JSON) of everything that can change the
// answer; files are named by a hash of it and also store it, so a collision is a miss.
#pragma once

#include <cstdint>
#include <string>

#include "common/app.h"
#include "common/host_facts.h"

namespace protuner {

// What identifies the algorithm being measured: the generator library (its real path,
// size and modification time, so a rebuilt library is a new app), the generator name and
// its params. Never throws; a library that cannot be read is keyed by its path alone.
std::string app_identity_key(const AppSpec &app);

// What identifies a file whose contents shape a result (an autoscheduler plugin): its real
// path, size and modification time, as canonical JSON text. Never throws.
std::string file_identity_key(const std::string &path);

// The machine class a runtime is valid on: CPU model, how many CPUs the measurement uses,
// SMT state.
std::string host_class_key(const HostFacts &host, int cpus_used);

// The key of an app's reference output: app identity, resolved target, input seed.
std::string reference_key(const AppSpec &app, const std::string &resolved_target,
                          uint64_t input_seed);

// 32 hex digits (two independent 64-bit FNV-1a hashes) of `text`, used as a file name.
std::string key_hash(const std::string &text);

// $XDG_CACHE_HOME/protuner, else $HOME/.cache/protuner, else /tmp/protuner-cache.
std::string default_cache_dir();

// Where generator libraries fetched from the farm's Redis by hash are kept by default:
// default_cache_dir()/libraries (library_store.h's fetch_library writes there).
std::string default_library_cache_dir();

// The folder a measure child compiles its candidate in: <cache>/candidates/<pid>
// (compiled_candidate.h). The parent removes it when the child has ended, however it ended.
std::string candidate_dir(const std::string &cache_dir, int pid);

// Creates `dir` and its parents. Throws IoError naming the directory.
void ensure_directory(const std::string &dir);

// Writes `contents` to `path` through a temporary file in the same directory and a
// rename, so readers see the old file or the whole new one. Throws IoError naming `path`.
void write_file_atomically(const std::string &path, const std::string &contents);

}  // namespace protuner
