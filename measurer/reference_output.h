// The reference output of an app: what its compute-root schedule (apply_root_schedule)
// computes on the standard inputs, which every candidate's output is compared with
// (output_check.h). Computing it costs a JIT compile and a run, so it is done once per
// (app identity, target) and kept on disk in the measurer's cache directory:
//
//   <cache>/references/<hash of key>.ref
//     line 1: JSON header {"format": "protuner-reference", "version": 2, "key": "...",
//             "outputs": [{"name": "out", "type": "float32", "mins": [0, 0],
//                          "extents": [512, 256]}, ...]}
//     then each output's values, dense, dimension 0 fastest, in host byte order.
//
// The key is stored in the file and checked when reading, so a hash collision reads as a
// miss. Files are written to a temporary name and renamed, so measurers sharing a cache
// directory never read a half-written reference.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <Halide.h>

namespace protuner {

struct ReferenceOutput {
  std::vector<std::string> names;
  std::vector<Halide::Buffer<>> buffers;  // at the outputs' estimated regions (mins kept)
};

// Where the reference for `key` lives under `cache_dir`.
std::string reference_path(const std::string &cache_dir, const std::string &key);

// nullopt when the file is missing, for another key, or unreadable (a damaged file is a
// miss: the caller recomputes and overwrites it).
std::optional<ReferenceOutput> load_reference(const std::string &path, const std::string &key);

// Writes atomically (temporary file, then rename). Throws IoError naming the path.
void save_reference(const std::string &path, const std::string &key,
                    const ReferenceOutput &reference);

}  // namespace protuner
