// `protuner`: the command-line entry point. Thin: it parses arguments and calls the
// components; everything it does is available as a library call too.
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>
#include <sstream>

#include "common/errors.h"
#include "common/host_facts.h"
#include "common/farm/suite_record.h"
#include "common/log.h"
#include "common/redis_client.h"
#include "common/redis_options.h"
#include "common/suite.h"
#include "coordinator/compare.h"
#include "coordinator/dataset_build.h"
#include "coordinator/farm_commands.h"
#include "coordinator/measure_report.h"
#include "coordinator/submit.h"
#include "coordinator/train_command.h"
#include "coordinator/text_table.h"
#include "coordinator/tune.h"
#include "measurer/isolated_measurer.h"
#include "measurer/measure_json.h"

namespace {

using namespace protuner;

int check_suite(const std::string &path) {
  Suite suite = parse_suite_file(path);
  validate_suite_apps(suite);
  TextTable table({"app", "generator", "budget min", "seeds", "library"});
  for (const auto &a : suite.apps) {
    table.add_row({a.spec.name, a.spec.generator, format_fixed(a.budget_minutes, 1),
                   std::to_string(a.seeds), a.spec.library});
  }
  std::cout << "suite '" << suite.name << "' (" << path << "): " << suite.apps.size()
            << " apps, all libraries and generators load\n\n";
  table.print(std::cout);
  return 0;
}

// Exit code: 0 when the suite is stored, 2 when it is refused (nothing is stored) or Redis
// cannot be used.
int run_submit(const std::string &path, const std::string &redis_url, bool json) {
  Suite suite = parse_suite_file(path);
  RedisClient redis(parse_redis_url(redis_url));
  const farm::SuiteRecord record = submit_suite(redis, suite);
  if (json) {
    std::cout << farm::suite_to_json(record) << "\n";
    return 0;
  }
  TextTable table({"app", "generator", "budget min", "seeds", "library sha256"});
  int jobs = 0;
  for (const auto &a : record.apps) {
    table.add_row({a.name, a.generator, format_fixed(a.budget_ms / 60000.0, 1),
                   std::to_string(a.seeds), a.library_sha256.substr(0, 12)});
    jobs += a.seeds;
  }
  table.print(std::cout);
  std::cout << "\nsubmitted suite '" << record.name << "' to " << redis.endpoint() << ": "
            << record.apps.size() << " apps, " << jobs << " seeds in all\nsuite id: " << record.id
            << "\n";
  return 0;
}

int print_host() {
  const HostFacts h = detect_host_facts();
  TextTable table({"fact", "value"});
  table.add_row({"cpu", h.cpu_model});
  table.add_row({"logical cpus", std::to_string(h.logical_cpus)});
  table.add_row({"physical cores", std::to_string(h.physical_cores)});
  table.add_row({"smt", h.smt});
  table.add_row({"governor", h.governor});
  table.add_row({"halide target", h.halide_target});
  table.print(std::cout);
  return 0;
}

// What `protuner measure` was asked to do.
struct MeasureArgs {
  std::string app, suite, library, generator, schedule_file, target = "host", cache_dir;
  std::string autoscheduler, autoscheduler_plugin;  // one of Halide's, and its plugin file
  std::vector<std::string> params;  // k=v
  bool own = false, default_schedule = false, root = false;
  bool no_cache = false, json = false;
  std::vector<int> cpus;
  MeasureSettings settings;
};

AppSpec measure_app(const MeasureArgs &a) {
  if (!a.app.empty()) {
    if (a.suite.empty()) throw ConfigError("--app needs --suite (the suite file that lists it)");
    const Suite suite = parse_suite_file(a.suite);
    for (const auto &app : suite.apps) {
      if (app.spec.name == a.app) return app.spec;
    }
    std::string names;
    for (const auto &app : suite.apps) names += (names.empty() ? "" : ", ") + app.spec.name;
    throw ConfigError(a.suite + ": no app '" + a.app + "' (it has: " + names + ")");
  }
  if (a.library.empty() || a.generator.empty()) {
    throw ConfigError("name the app: --app NAME --suite FILE, or --library L --generator G");
  }
  AppSpec spec{a.generator, resolve_library(a.library, "."), a.generator, {}};
  for (const auto &kv : a.params) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw ConfigError("--param '" + kv + "' is not of the form name=value");
    }
    spec.params[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return spec;
}

ScheduleSpec measure_schedule(const MeasureArgs &a) {
  const int chosen = !a.schedule_file.empty() + a.own + a.default_schedule + a.root +
                     !a.autoscheduler.empty();
  if (chosen != 1) {
    throw ConfigError("choose exactly one schedule: --schedule FILE, --own, --default, --root "
                      "or --autoscheduler NAME");
  }
  if (a.own) return {ScheduleKind::kOwn, ""};
  if (a.default_schedule) return {ScheduleKind::kDefault, ""};
  if (a.root) return {ScheduleKind::kRoot, ""};
  if (!a.autoscheduler.empty()) {
    ScheduleSpec spec{ScheduleKind::kAutoscheduler, "", a.autoscheduler, a.autoscheduler_plugin};
    autoscheduler_plugin_path(spec);  // an unknown name is a usage error, named here
    return spec;
  }
  std::ifstream in(a.schedule_file);
  if (!in) throw ConfigError("cannot read schedule file '" + a.schedule_file + "'");
  std::stringstream text;
  text << in.rdbuf();
  return {ScheduleKind::kProtuner, text.str()};
}

// Exit code: 0 when the measurement is ok, 1 when the candidate failed (the status says
// how), 2 for a bad command line or configuration.
int run_measure(const MeasureArgs &a) {
  MeasureRequest request;
  request.app = measure_app(a);
  request.schedule = measure_schedule(a);
  request.target = a.target;
  request.settings = a.settings;
  IsolatedMeasurerOptions options;
  options.cpus = a.cpus;
  options.cache_dir = a.cache_dir;
  options.use_result_cache = !a.no_cache;
  IsolatedMeasurer measurer(options);
  if (!a.json) {
    std::cout << "protuner measure: measuring in a child process on cpus ";
    for (size_t i = 0; i < measurer.cpus().size(); ++i) {
      std::cout << (i ? "," : "") << measurer.cpus()[i];
    }
    std::cout << "..." << std::endl;
  }
  const MeasureResult result = measurer.measure(request);
  if (a.json) {
    std::cout << result_to_json(result) << "\n";
  } else {
    print_measure_result(request, schedule_description(request.schedule, a.schedule_file),
                         result, std::cout);
  }
  return result.ok() ? 0 : 1;
}

}  // namespace

int main(int argc, char **argv) {
  CLI::App cli{"protuner: an autotuner for Halide pipelines"};
  cli.require_subcommand(1);
  std::string log_level = "info";
  cli.add_option("--log-level", log_level, "trace, debug, info, warn, error or off");

  auto *suite_cmd = cli.add_subcommand("suite", "work with suite files");
  suite_cmd->require_subcommand(1);
  std::string suite_path;
  auto *check = suite_cmd->add_subcommand("check", "parse a suite file and load every app");
  check->add_option("file", suite_path, "suite YAML file")->required();

  auto *local = cli.add_subcommand("local", "tune every app of a suite on this machine, one after another");
  TuneArgs local_args;  // `local` is `tune` of a whole suite file (coordinator/tune.h)
  add_tune_options(local, local_args, TuneCommand::kLocal);
  auto *tune = cli.add_subcommand("tune", "search each app's fastest schedule on this machine");
  TuneArgs tune_args;
  add_tune_options(tune, tune_args);
  auto *compare = cli.add_subcommand(
      "compare",
      "Halide's autoschedulers, the generator's own schedule and our searches, side by side");
  CompareArgs compare_args;
  add_compare_options(compare, compare_args);

  auto *submit = cli.add_subcommand(
      "submit", "check a suite and store it, its libraries and its apps in the farm's Redis");
  std::string submit_path, submit_redis = "redis://127.0.0.1:6379";
  bool submit_json = false;
  submit->add_option("file", submit_path, "suite YAML file")->required();
  submit->add_option("--redis", submit_redis,
                     "redis://[user[:password]@]host[:port][/db]; the password may also come "
                     "from $PROTUNER_REDIS_PASSWORD")
      ->capture_default_str();
  submit->add_flag("--json", submit_json, "print the stored suite record as JSON");

  auto *host = cli.add_subcommand("host", "print the facts measurements record about this host");

  auto *measure = cli.add_subcommand(
      "measure", "compile, check and time one schedule of one app in an isolated child process");
  MeasureArgs margs;
  measure->add_option("--app", margs.app, "app name in the suite file (with --suite)");
  measure->add_option("--suite", margs.suite, "suite YAML file that lists --app");
  measure->add_option("--library", margs.library, "generator library (instead of --app)");
  measure->add_option("--generator", margs.generator, "generator name in --library");
  measure->add_option("--param", margs.params, "generator param name=value (repeatable)");
  measure->add_option("--schedule", margs.schedule_file, "protuner schedule JSON file");
  measure->add_flag("--own", margs.own,
                    "the generator's own schedule (built with auto_schedule=false)");
  measure->add_flag("--default", margs.default_schedule, "Halide's default schedule");
  measure->add_flag("--root", margs.root, "every Func compute_root (the reference schedule)");
  measure->add_option("--autoscheduler", margs.autoscheduler,
                      "one of Halide's autoschedulers: Adams2019, Mullapudi2016 or Li2018");
  measure->add_option("--autoscheduler-plugin", margs.autoscheduler_plugin,
                      "the plugin to load for --autoscheduler (default: Halide's own)");
  measure->add_option("--target", margs.target, "Halide target string, or host");
  measure
      ->add_option_function<int>(
          "--samples", [&margs](const int &n) { margs.settings.timing.set_samples(n); },
          "timed samples at least (more, up to 40, until the minimum is confirmed)")
      ->check(CLI::PositiveNumber);
  measure->add_option("--cpus", margs.cpus, "CPUs to pin the measurement to, e.g. 0,1")
      ->delimiter(',');
  measure->add_option("--memory-limit-mb", margs.settings.memory_limit_mb,
                      "address-space limit of the measurement process")
      ->check(CLI::PositiveNumber);
  measure->add_option("--compile-timeout", margs.settings.compile_timeout_seconds,
                      "wall-clock seconds for compiling")
      ->check(CLI::PositiveNumber);
  measure->add_option("--run-timeout", margs.settings.run_timeout_seconds,
                      "wall-clock seconds for checking and timing")
      ->check(CLI::PositiveNumber);
  measure->add_flag("--require-smt-off", margs.settings.require_smt_off,
                    "refuse to measure when SMT is on");
  measure->add_flag("--no-check", [&](int64_t) { margs.settings.check_output = false; },
                    "do not compare the output with the reference");
  measure
      ->add_option_function<std::string>(
          "--allocator",
          [&margs](const std::string &name) {
            margs.settings.allocator = parse_allocator_policy(name);
          },
          "malloc the candidate is timed under: platform (glibc's as it comes, as the user's "
          "program runs it; the default) or pooling (freed memory kept for reuse)")
      ->check(CLI::IsMember({"platform", "pooling"}));
  measure->add_option("--cache-dir", margs.cache_dir,
                      "reference outputs and cached results (default ~/.cache/protuner)");
  measure->add_flag("--no-cache", margs.no_cache, "measure even when a cached result exists");
  measure->add_flag("--json", margs.json, "print the result as one JSON object");

  const LearnedCommands learned(cli);  // train, evaluate
  DatasetCommand dataset(cli);  // dataset build, dataset stats
  const FarmCommands farm(cli);  // coordinator, searcher, status

  CLI11_PARSE(cli, argc, argv);
  try {
    init_logging(log_level);
    if (check->parsed()) return check_suite(suite_path);
    if (local->parsed()) return run_tune(local_args);
    if (tune->parsed()) return run_tune(tune_args);
    if (compare->parsed()) return run_compare(compare_args);
    if (submit->parsed()) return run_submit(submit_path, submit_redis, submit_json);
    if (host->parsed()) return print_host();
    if (measure->parsed()) return run_measure(margs);
    if (learned.parsed()) return learned.run();
    if (dataset.parsed()) return dataset.run();
    if (farm.parsed()) return farm.run();
  } catch (const protuner::Error &e) {
    std::cerr << "protuner: " << e.what() << "\n";
    return 2;
  }
  return 1;
}
