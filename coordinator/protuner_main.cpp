// `protuner`: the command-line entry point. Thin: it parses arguments and calls the
// components; everything it does is available as a library call too.
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <iostream>

#include "common/errors.h"
#include "common/host_facts.h"
#include "common/log.h"
#include "common/suite.h"
#include "coordinator/baseline_report.h"
#include "coordinator/text_table.h"

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

int run_local(const std::string &path, const std::vector<std::string> &schedules,
              const TimingSettings &timing) {
  Suite suite = parse_suite_file(path);
  validate_suite_apps(suite);
  const HostFacts host = detect_host_facts();
  std::cout << "protuner local: suite '" << suite.name << "', " << suite.apps.size() << " apps, on "
            << host.cpu_model << " (" << host.physical_cores << " cores, SMT " << host.smt << ")\n"
            << "Measuring the baselines every tuned schedule is compared with...\n";
  auto rows = measure_baselines(
      suite, schedules, timing, [](const std::string &app, const BaselineMeasurement &m) {
        std::cout << "  " << app << " / " << m.schedule << ": "
                  << (m.min_ms ? format_fixed(*m.min_ms, 3) + " ms" : "failed: " + m.error)
                  << std::endl;
      });
  std::cout << "\n";
  print_baseline_table(rows, schedules, std::cout);
  std::cout << "\nThe schedule search (MCTS), the measurer service and the embedded farm are "
               "not built yet (see docs/ARCHITECTURE.md, 'Status'); this command will run "
               "them on the same suite file once they are.\n";
  return 0;
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

  auto *local = cli.add_subcommand("local", "tune a suite on this machine (embedded farm)");
  local->add_option("file", suite_path, "suite YAML file")->required();
  std::vector<std::string> schedules{"default", "expert"};
  local->add_option("--baselines", schedules, "baseline schedules to measure")->delimiter(',');
  TimingSettings timing;
  local->add_option("--samples", timing.samples, "timed samples per measurement")
      ->check(CLI::PositiveNumber);

  auto *host = cli.add_subcommand("host", "print the facts measurements record about this host");

  CLI11_PARSE(cli, argc, argv);
  try {
    init_logging(log_level);
    if (check->parsed()) return check_suite(suite_path);
    if (local->parsed()) return run_local(suite_path, schedules, timing);
    if (host->parsed()) return print_host();
  } catch (const protuner::Error &e) {
    std::cerr << "protuner: " << e.what() << "\n";
    return 2;
  }
  return 1;
}
