#include "common/app.h"

#include <dlfcn.h>

#include <Halide.h>
#include <algorithm>
#include <climits>
#include <cstdlib>
#include <mutex>

#include "common/errors.h"

namespace protuner {
namespace {

// libHalide's registry and our library table are process-wide; creation is rare, so one
// lock for both keeps them consistent.
std::mutex &registry_mutex() {
  static std::mutex m;
  return m;
}

// Halide 14 configures a generator and builds its Pipeline only through protected
// virtuals. Pointers to those members, formed inside a derived class, may be called on any
// generator. configure() (where a generator may add inputs or set their types from its
// params) must run after the params are set and before the pipeline is built, as Halide's
// own driver runs it; a generator without one has an empty default.
struct PipelineBuilder : Halide::Internal::GeneratorBase {
  static void configure(Halide::Internal::GeneratorBase &g) {
    (g.*(&PipelineBuilder::call_configure))();
  }
  static Halide::Pipeline build(Halide::Internal::GeneratorBase &g) {
    return (g.*(&PipelineBuilder::build_pipeline))();
  }
};

// Halide 14's built-in GeneratorParam that tells a generator an autoscheduler will
// schedule it.
constexpr char kAutoScheduleParam[] = "auto_schedule";

std::vector<std::string> registered_generators() {
  auto names = Halide::Internal::GeneratorRegistry::enumerate();
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

const GeneratorLibrary &GeneratorLibrary::load(const std::string &path) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  static std::map<std::string, std::unique_ptr<GeneratorLibrary>> loaded;
  char resolved[PATH_MAX];
  const std::string key = realpath(path.c_str(), resolved) ? std::string(resolved) : path;
  if (auto it = loaded.find(key); it != loaded.end()) return *it->second;

  const auto before = registered_generators();
  // RTLD_NOW finds unresolved symbols here, not in the middle of a search.
  if (dlopen(key.c_str(), RTLD_NOW | RTLD_LOCAL) == nullptr) {
    const char *why = dlerror();
    throw AppLoadError("cannot load generator library '" + path +
                       "': " + (why ? why : "unknown dlopen error"));
  }
  const auto after = registered_generators();
  std::vector<std::string> added;
  std::set_difference(after.begin(), after.end(), before.begin(), before.end(),
                      std::back_inserter(added));
  if (added.empty()) {
    throw AppLoadError("generator library '" + path +
                       "' registered no Halide generator (was it built with "
                       "HALIDE_REGISTER_GENERATOR and linked against libHalide 14?)");
  }
  auto lib = std::unique_ptr<GeneratorLibrary>(new GeneratorLibrary(key, std::move(added)));
  return *loaded.emplace(key, std::move(lib)).first->second;
}

bool GeneratorLibrary::has_generator(const std::string &name) const {
  return std::binary_search(generators_.begin(), generators_.end(), name);
}

struct AppInstance::Impl {
  Halide::Target target;
  std::unique_ptr<Halide::Internal::GeneratorBase> generator;
  Halide::Pipeline pipeline;
};

AppInstance::AppInstance(std::unique_ptr<Impl> impl, AppSpec spec)
    : impl_(std::move(impl)), spec_(std::move(spec)) {}
AppInstance::AppInstance(AppInstance &&) noexcept = default;
AppInstance &AppInstance::operator=(AppInstance &&) noexcept = default;
AppInstance::~AppInstance() = default;

Halide::Pipeline &AppInstance::pipeline() { return impl_->pipeline; }
const Halide::Target &AppInstance::target() const { return impl_->target; }

AppInstance AppInstance::create(const AppSpec &spec, const Halide::Target &target,
                                GeneratorSchedule schedule) {
  const std::string who =
      "app '" + spec.name + "' (generator '" + spec.generator + "' in '" + spec.library + "')";
  const GeneratorLibrary &lib = GeneratorLibrary::load(spec.library);
  if (!lib.has_generator(spec.generator)) {
    std::string have;
    for (const auto &g : lib.generators()) have += (have.empty() ? "" : ", ") + g;
    throw AppLoadError(who + ": the library has no generator '" + spec.generator +
                       "'; it has: " + have);
  }
  if (spec.params.count(kAutoScheduleParam)) {
    throw AppLoadError(who + ": the generator param '" + std::string(kAutoScheduleParam) +
                       "' is protuner's to set (true for every schedule but the generator's "
                       "own): remove it from the app's params");
  }
  Halide::Internal::GeneratorParamsMap params;
  for (const auto &[k, v] : spec.params) params[k] = v;
  params[kAutoScheduleParam] = schedule == GeneratorSchedule::kOwn ? "false" : "true";

  auto impl = std::make_unique<Impl>();
  impl->target = target;
  try {
    std::lock_guard<std::mutex> lock(registry_mutex());
    impl->generator = Halide::Internal::GeneratorRegistry::create(spec.generator,
                                                                  Halide::GeneratorContext(target));
  } catch (const Halide::Error &e) {
    throw AppLoadError(who + ": cannot create the generator: " + e.what());
  }
  try {
    impl->generator->set_generator_param_values(params);
  } catch (const Halide::Error &e) {
    throw AppLoadError(who + ": bad generator parameter: " + e.what());
  }
  try {
    PipelineBuilder::configure(*impl->generator);
    impl->pipeline = PipelineBuilder::build(*impl->generator);
  } catch (const Halide::Error &e) {
    throw AppLoadError(who + ": building the pipeline failed: " + e.what());
  }
  return AppInstance(std::move(impl), spec);
}

}  // namespace protuner
