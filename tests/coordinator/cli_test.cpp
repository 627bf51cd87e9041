// The `protuner` command line, run as a user runs it: exit codes and messages.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/support/run_command.h"

namespace protuner {
namespace {

using testing::CommandResult;

CommandResult run(const std::string &args) {
  return testing::run_command(std::string(PROTUNER_CLI) + " " + args);
}

TEST(Cli, SuiteCheckAcceptsAGoodSuiteAndListsItsApps) {
  const std::string path = std::filesystem::temp_directory_path() / "protuner_cli_ok.yaml";
  std::ofstream(path) << "suite: ok\napps:\n  - name: test_blur\n    library: "
                      << PROTUNER_TEST_GENERATOR_LIBRARY << "\n";
  const CommandResult r = run("suite check " + path);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("1 apps, all libraries and generators load"), std::string::npos)
      << r.output;
  std::filesystem::remove(path);
}

TEST(Cli, SuiteCheckRefusesABadSuiteWithFileAndLine) {
  const std::string path = std::filesystem::temp_directory_path() / "protuner_cli_bad.yaml";
  std::ofstream(path) << "suite: bad\napps:\n  - name: x\n    library: libmissing.so\n";
  const CommandResult r = run("suite check " + path);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(path + ":4: app 'x': library 'libmissing.so' not found"),
            std::string::npos)
      << r.output;
  std::filesystem::remove(path);
}

TEST(Cli, HostPrintsSmtState) {
  const CommandResult r = run("host");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("smt"), std::string::npos) << r.output;
}

TEST(Cli, UnknownSubcommandFails) { EXPECT_NE(run("frobnicate").exit_code, 0); }

}  // namespace
}  // namespace protuner
