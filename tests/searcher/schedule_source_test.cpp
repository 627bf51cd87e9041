// Emitted C++ schedule source compiles in a program of its own and gives the same loop nest
// as the schedule applied in memory.
#include <gtest/gtest.h>
#include <stdio.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <regex>

#include "common/host_target.h"
#include "searcher/apply_schedule.h"
#include "searcher/search_space.h"
#include "tests/searcher/test_pipelines.h"
#include "tests/support/run_command.h"
#include "tests/searcher/search_fixtures.h"

namespace protuner {
namespace {

using testing::graph_of;

namespace fs = std::filesystem;

std::string run_command(const std::string &cmd, int &exit_code) {
  const testing::CommandResult r = testing::run_command(cmd);
  exit_code = r.exit_code;
  return r.output;
}

TEST(ScheduleSource, CompilesAndGivesTheSameLoopNest) {
  const SearchSpace space(SearchSpaceOptions::for_target(host_target()));
  auto graph = graph_of(testing::bilateral_grid_pipeline());
  std::mt19937_64 rng(21);
  ScheduleState state(graph);
  ASSERT_TRUE(space.random_rollout(state, rng));

  Halide::Pipeline in_memory = testing::bilateral_grid_pipeline();
  apply_schedule(state, in_memory);
  ::testing::internal::CaptureStderr();
  in_memory.outputs()[0].print_loop_nest();
  const std::string expected = ::testing::internal::GetCapturedStderr();

  const fs::path dir = fs::temp_directory_path() / ("protuner_source_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "schedule.h") << schedule_source(state, "bilateral_test");
  std::ofstream(dir / "main.cpp")
      << "#include \"schedule.h\"\n"
         "#include \"tests/searcher/test_pipelines.h\"\n"
         "int main() {\n"
         "  Halide::Pipeline p = protuner::testing::bilateral_grid_pipeline();\n"
         "  apply_schedule_bilateral_test(p, Halide::get_host_target());\n"
         "  p.outputs()[0].print_loop_nest();\n"
         "  return 0;\n"
         "}\n";
  int code = 0;
  const std::string build =
      run_command(std::string(PROTUNER_CXX) + " -std=c++17 -O0 -I" + (dir).string() + " -I" +
                      PROTUNER_SOURCE_DIR + " -I" + PROTUNER_HALIDE_INCLUDE + " " +
                      (dir / "main.cpp").string() + " -o " + (dir / "main").string() + " " +
                      PROTUNER_HALIDE_LIBRARY + " -ldl -lpthread",
                  code);
  ASSERT_EQ(code, 0) << build << "\n" << schedule_source(state, "bilateral_test");
  const std::string printed = run_command((dir / "main").string(), code);
  EXPECT_EQ(code, 0) << printed;
  // Anonymous Funcs are numbered per process ("lambda_0" there, "lambda_29" here).
  const std::regex counter("lambda_[0-9]+");
  EXPECT_EQ(std::regex_replace(printed, counter, "lambda"),
            std::regex_replace(expected, counter, "lambda"));
  fs::remove_all(dir);
}

TEST(ScheduleSource, RefusesANameThatIsNotAnIdentifier) {
  auto graph = graph_of(testing::blur_chain_pipeline());
  ScheduleState state(graph);
  const SearchSpace space;
  std::mt19937_64 rng(1);
  ASSERT_TRUE(space.random_rollout(state, rng));
  EXPECT_THROW(schedule_source(state, "not an identifier"), std::exception);
}

}  // namespace
}  // namespace protuner
