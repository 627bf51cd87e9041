// `protuner measure` run as a user runs it: a table or one JSON object, exit 0 only for an
// ok measurement, usage errors named.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "measurer/measure_json.h"
#include "measurer/timing.h"
#include "tests/support/run_command.h"

namespace protuner {
namespace {

using testing::CommandResult;

// Each test process gets its own cache directory (reference outputs only: --no-cache).
std::string cache_dir() {
  static const std::string dir = (std::filesystem::temp_directory_path() /
                                  ("protuner_measure_cli_" + std::to_string(getpid())))
                                     .string();
  return dir;
}

CommandResult run(const std::string &args) {
  return testing::run_command(std::string(PROTUNER_CLI) +
                              " measure --no-cache --samples 3 --cache-dir " + cache_dir() + " " +
                              args);
}

const std::string kBlur =
    std::string("--library ") + PROTUNER_TEST_GENERATOR_LIBRARY + " --generator test_blur";

class MeasureCli : public ::testing::Test {
 protected:
  static void TearDownTestSuite() { std::filesystem::remove_all(cache_dir()); }
};

TEST_F(MeasureCli, PrintsATableForAnOkMeasurement) {
  const CommandResult r = run(kBlur + " --own");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const char *part : {"schedule own", "status", " ok ", "min", " ms", "compile", "smt"}) {
    EXPECT_NE(r.output.find(part), std::string::npos) << part << " in:\n" << r.output;
  }
}

TEST_F(MeasureCli, JsonIsOneResultObject) {
  const CommandResult r = run(kBlur + " --root --json");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const MeasureResult result = result_from_json(r.output);
  EXPECT_TRUE(result.ok()) << result.error;
  // --samples 3: at least 3, more until the minimum is confirmed (measurer/timing.h).
  EXPECT_GE(result.timing.samples_ms.size(), 3u);
  EXPECT_EQ(result.timing.confirmed,
            minimum_confirmed(result.timing.samples_ms, TimingSettings{}));
  EXPECT_GT(result.timing.min_ms, 0);
}

TEST_F(MeasureCli, AFailedCandidateExitsNonZeroWithItsStatus) {
  const CommandResult r = run(std::string("--library ") + PROTUNER_TEST_FAULTY_LIBRARY +
                              " --generator test_wrong_scan --own");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("wrong_output"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("first at ("), std::string::npos) << r.output;
}

TEST_F(MeasureCli, AnAppFromASuiteFile) {
  const std::string path = cache_dir() + "_suite.yaml";
  std::ofstream(path) << "suite: s\napps:\n  - name: blurry\n    generator: test_blur\n"
                      << "    library: " << PROTUNER_TEST_GENERATOR_LIBRARY << "\n";
  const CommandResult r = run("--app blurry --suite " + path + " --default");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("app 'blurry'"), std::string::npos) << r.output;
  const CommandResult missing = run("--app nothing --suite " + path + " --default");
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("no app 'nothing' (it has: blurry)"), std::string::npos)
      << missing.output;
  std::filesystem::remove(path);
}

TEST_F(MeasureCli, UsageErrorsSayWhatIsMissing) {
  const CommandResult two = run(kBlur + " --own --root");
  EXPECT_EQ(two.exit_code, 2) << two.output;
  EXPECT_NE(two.output.find("choose exactly one schedule"), std::string::npos) << two.output;
  const CommandResult no_app = run("--own");
  EXPECT_EQ(no_app.exit_code, 2) << no_app.output;
  EXPECT_NE(no_app.output.find("name the app"), std::string::npos) << no_app.output;
  const CommandResult bad_param = run(kBlur + " --own --param nonsense");
  EXPECT_EQ(bad_param.exit_code, 2) << bad_param.output;
}

}  // namespace
}  // namespace protuner
