// An app: one Halide generator, found by name in a generator library, with its generator
// parameters. This is how every protuner process gets a Pipeline: the searcher to tune it,
// the measurer to compile and time it, the CLI to describe it. Nothing here knows any app by
// name: a user's own generator library works exactly like the bundled suite.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace Halide {
class Pipeline;
struct Target;
namespace Internal {
class GeneratorBase;
}
}  // namespace Halide

namespace protuner {

// What identifies an app everywhere (suite files, wire messages, caches).
struct AppSpec {
  std::string name;       // the suite's name for it; used in reports and metrics labels
  std::string library;    // path of the generator library (a shared object)
  std::string generator;  // the name it registered with HALIDE_REGISTER_GENERATOR
  std::map<std::string, std::string> params;  // generator params, as Halide parses them
};

// A generator library loaded into this process. Libraries are never unloaded: libHalide's
// registry keeps pointers to the factories inside them.
class GeneratorLibrary {
 public:
  // Loads `path` once per process (later calls return the same object). Throws
  // AppLoadError naming the path and dlopen's reason when it cannot be loaded.
  static const GeneratorLibrary &load(const std::string &path);

  const std::string &path() const { return path_; }
  // Generator names this library registered, sorted.
  const std::vector<std::string> &generators() const { return generators_; }
  bool has_generator(const std::string &name) const;

 private:
  GeneratorLibrary(std::string path, std::vector<std::string> generators)
      : path_(std::move(path)), generators_(std::move(generators)) {}
  std::string path_;
  std::vector<std::string> generators_;
};

// Which schedule a generator applies to the pipeline it builds. Halide's contract with
// autoschedulers: a generator driver that runs an autoscheduler builds the generator with
// the built-in GeneratorParam auto_schedule=true, and the generator then applies no
// schedule of its own (`if (!auto_schedule) { ...hand schedule... }`), only estimates.
enum class GeneratorSchedule {
  kUnscheduled,  // auto_schedule=true: the pipeline every other schedule is applied to
  kOwn,          // auto_schedule=false: the generator's own (hand-written) schedule
};

// One instantiated generator with its pipeline built. It owns the generator, so the
// pipeline's Funcs and input Parameters stay valid as long as it lives. Each instance has
// its own Funcs: schedule one instance, not several views of one.
//
// Not thread-safe; use one instance per thread. Movable, not copyable.
class AppInstance {
 public:
  // Loads the library, creates the generator for `target` with the spec's params and
  // auto_schedule as `schedule` says, and builds its pipeline. Throws AppLoadError naming
  // the app and what is wrong (missing generator, unknown parameter, a spec that sets
  // auto_schedule itself, build error).
  static AppInstance create(const AppSpec &spec, const Halide::Target &target,
                            GeneratorSchedule schedule = GeneratorSchedule::kUnscheduled);

  AppInstance(AppInstance &&) noexcept;
  AppInstance &operator=(AppInstance &&) noexcept;
  ~AppInstance();

  const AppSpec &spec() const { return spec_; }
  Halide::Pipeline &pipeline();
  const Halide::Target &target() const;

 private:
  struct Impl;
  explicit AppInstance(std::unique_ptr<Impl> impl, AppSpec spec);
  std::unique_ptr<Impl> impl_;
  AppSpec spec_;
};

}  // namespace protuner
