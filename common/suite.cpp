#include "common/suite.h"

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <Halide.h>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>

#include "common/errors.h"
#include "common/host_target.h"

namespace protuner {
namespace fs = std::filesystem;
namespace {

class SuiteParser {
 public:
  explicit SuiteParser(std::string path) : path_(std::move(path)) {}

  Suite parse() {
    YAML::Node root;
    try {
      root = YAML::LoadFile(path_);
    } catch (const YAML::BadFile &) {
      throw ConfigError(path_ + ": cannot read the suite file");
    } catch (const YAML::ParserException &e) {
      throw ConfigError(where(e.mark) + "malformed YAML: " + e.msg);
    }
    if (!root.IsMap()) fail(root, "a suite file is a mapping with 'suite' and 'apps'");
    check_keys(root, {"suite", "defaults", "apps"});

    Suite suite;
    suite.path = path_;
    suite.name = scalar<std::string>(required(root, "suite"), "suite");
    SuiteApp defaults;
    if (root["defaults"]) read_budget_and_seeds(root["defaults"], "defaults", defaults);

    const YAML::Node apps = required(root, "apps");
    if (!apps.IsSequence() || apps.size() == 0) fail(apps, "'apps' must be a non-empty list");
    std::set<std::string> names;
    for (const YAML::Node &n : apps) {
      SuiteApp app = parse_app(n, defaults);
      if (!names.insert(app.spec.name).second) {
        fail(n, "app '" + app.spec.name + "' is listed twice");
      }
      suite.apps.push_back(std::move(app));
    }
    return suite;
  }

 private:
  SuiteApp parse_app(const YAML::Node &n, const SuiteApp &defaults) {
    if (!n.IsMap()) fail(n, "each app is a mapping with at least 'name' and 'library'");
    check_keys(n, {"name", "library", "generator", "params", "budget_minutes", "seeds"});
    SuiteApp app = defaults;
    app.line = n.Mark().line + 1;
    app.spec.name = scalar<std::string>(required(n, "name"), "name");
    app.spec.generator =
        n["generator"] ? scalar<std::string>(n["generator"], "generator") : app.spec.name;
    const YAML::Node lib = required(n, "library");
    try {
      app.spec.library = resolve_library(scalar<std::string>(lib, "library"),
                                         fs::path(path_).parent_path().string());
    } catch (const ConfigError &e) {
      fail(lib, "app '" + app.spec.name + "': " + e.what());
    }
    if (const YAML::Node params = n["params"]) {
      if (!params.IsMap()) fail(params, "'params' must be a mapping of generator params");
      for (const auto &kv : params) {
        app.spec.params[scalar<std::string>(kv.first, "param name")] =
            scalar<std::string>(kv.second, "param value");
      }
    }
    read_budget_and_seeds(n, "app '" + app.spec.name + "'", app);
    return app;
  }

  void read_budget_and_seeds(const YAML::Node &n, const std::string &who, SuiteApp &app) {
    if (!n.IsMap()) fail(n, who + " must be a mapping");
    if (who == "defaults") check_keys(n, {"budget_minutes", "seeds"});
    if (n["budget_minutes"]) {
      app.budget_minutes = scalar<double>(n["budget_minutes"], "budget_minutes");
      if (!(app.budget_minutes > 0)) fail(n["budget_minutes"], "budget_minutes must be > 0");
    }
    if (n["seeds"]) {
      app.seeds = scalar<int>(n["seeds"], "seeds");
      if (app.seeds < 1) fail(n["seeds"], "seeds must be at least 1");
    }
  }

  template <typename T>
  T scalar(const YAML::Node &n, const std::string &key) {
    if (!n.IsScalar()) fail(n, "'" + key + "' must be a single value");
    try {
      return n.as<T>();
    } catch (const YAML::Exception &) {
      fail(n, "'" + key + "' has a value of the wrong type: '" + n.Scalar() + "'");
    }
  }

  YAML::Node required(const YAML::Node &parent, const std::string &key) {
    YAML::Node n = parent[key];
    if (!n) fail(parent, "missing required key '" + key + "'");
    return n;
  }

  void check_keys(const YAML::Node &map, std::initializer_list<const char *> allowed) {
    for (const auto &kv : map) {
      const std::string key = kv.first.Scalar();
      bool ok = false;
      std::string list;
      for (const char *a : allowed) {
        ok = ok || key == a;
        list += (list.empty() ? "" : ", ") + std::string(a);
      }
      if (!ok) fail(kv.first, "unknown key '" + key + "' (allowed here: " + list + ")");
    }
  }

  std::string where(const YAML::Mark &m) const {
    if (m.is_null()) return path_ + ": ";
    return path_ + ":" + std::to_string(m.line + 1) + ": ";
  }

  [[noreturn]] void fail(const YAML::Node &n, const std::string &what) const {
    throw ConfigError(where(n.Mark()) + what);
  }

  std::string path_;
};

std::string executable_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

}  // namespace

Suite parse_suite_file(const std::string &path) { return SuiteParser(path).parse(); }

std::string resolve_library(const std::string &name, const std::string &suite_dir) {
  if (name.empty()) throw ConfigError("empty library name");
  std::vector<fs::path> candidates;
  if (name.find('/') != std::string::npos) {
    const fs::path p(name);
    candidates.push_back(p.is_absolute() ? p : fs::path(suite_dir) / p);
  } else {
    candidates.push_back(fs::path(suite_dir) / name);
    if (const char *env = std::getenv("PROTUNER_LIBRARY_PATH")) {
      std::stringstream dirs(env);
      for (std::string d; std::getline(dirs, d, ':');) {
        if (!d.empty()) candidates.push_back(fs::path(d) / name);
      }
    }
    if (const std::string exe = executable_dir(); !exe.empty()) {
      candidates.push_back(fs::path(exe) / ".." / "lib" / name);
    }
  }
  std::string searched;
  for (const fs::path &c : candidates) {
    if (fs::is_regular_file(c)) return fs::weakly_canonical(c).string();
    searched += (searched.empty() ? "" : ", ") + c.lexically_normal().string();
  }
  throw ConfigError("library '" + name + "' not found (searched: " + searched +
                    "; build the project or set PROTUNER_LIBRARY_PATH)");
}

void validate_suite_apps(const Suite &suite) {
  const Halide::Target host = host_target();
  for (const SuiteApp &app : suite.apps) {
    try {
      AppInstance::create(app.spec, host);
    } catch (const Error &e) {
      throw ConfigError(suite.path + ":" + std::to_string(app.line) + ": " + e.what());
    }
  }
}

}  // namespace protuner
