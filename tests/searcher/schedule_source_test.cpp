// Emitted C++ schedule source compiles in a program of its own and gives the same loop nest
// as the schedule applied in memory.
#include <gtest/gtest.h>
#include <stdio.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <regex>

#include "common/host_target.h"
#include "common/schedule/apply_schedule.h"
#include "searcher/seeds/fallback_schedule.h"
#include "searcher/space/search_space.h"
#include "tests/searcher/search_fixtures.h"
#include "tests/searcher/test_pipelines.h"
#include "tests/support/run_command.h"

namespace protuner {
namespace {

using testing::graph_of;

namespace fs = std::filesystem;

std::string run_command(const std::string &cmd, int &exit_code) {
  const testing::CommandResult r = testing::run_command(cmd);
  exit_code = r.exit_code;
  return r.output;
}

// Compiles schedule_source(state) in a program of its own, applied to the pipeline the C++
// expression `pipeline_source` builds (a test_pipelines.h function, as `build` is), and
// expects the loop nest it prints to be the one `state` applied in memory gives.
void expect_same_loop_nest_from_source(const std::function<Halide::Pipeline()> &build,
                                       const std::string &pipeline_source,
                                       const ScheduleState &state) {
  Halide::Pipeline in_memory = build();
  apply_schedule(state, in_memory);
  ::testing::internal::CaptureStderr();
  in_memory.outputs()[0].print_loop_nest();
  const std::string expected = ::testing::internal::GetCapturedStderr();

  const fs::path dir = fs::temp_directory_path() / ("protuner_source_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "schedule.h") << schedule_source(state, "source_test");
  std::ofstream(dir / "main.cpp") << "#include \"schedule.h\"\n"
                                     "#include \"tests/searcher/test_pipelines.h\"\n"
                                     "int main() {\n"
                                     "  Halide::Pipeline p = "
                                  << pipeline_source
                                  << ";\n"
                                     "  apply_schedule_source_test(p, Halide::get_host_target());\n"
                                     "  p.outputs()[0].print_loop_nest();\n"
                                     "  return 0;\n"
                                     "}\n";
  int code = 0;
  const std::string build_output =
      run_command(std::string(PROTUNER_CXX) + " -std=c++17 -O0 -I" + (dir).string() + " -I" +
                      PROTUNER_SOURCE_DIR + " -I" + PROTUNER_HALIDE_INCLUDE + " " +
                      (dir / "main.cpp").string() + " -o " + (dir / "main").string() + " " +
                      PROTUNER_HALIDE_LIBRARY + " -ldl -lpthread",
                  code);
  ASSERT_EQ(code, 0) << build_output << "\n" << schedule_source(state, "source_test");
  const std::string printed = run_command((dir / "main").string(), code);
  EXPECT_EQ(code, 0) << printed;
  // Names are uniquified per process: anonymous Funcs are numbered ("lambda_0" there,
  // "lambda_29" here), a Func built again gets a suffix ("cdf" there, "cdf$58" here), and
  // rfactor's partial reductions take the Func's name ("hist_intm" there, "hist$57_intm"
  // here, which the loop nest prints as "hist", or "hist_56" after an earlier rfactor of
  // another "hist" in this process).
  const auto same_names = [](const std::string &text) {
    std::string out = std::regex_replace(text, std::regex("\\$[0-9]+"), "");
    out = std::regex_replace(out, std::regex("_intm\\b"), "");
    return std::regex_replace(out, std::regex("\\b([A-Za-z][A-Za-z0-9]*)_[0-9]+\\b"), "$1");
  };
  EXPECT_EQ(same_names(printed), same_names(expected));
  fs::remove_all(dir);
}

TEST(ScheduleSource, CompilesAndGivesTheSameLoopNest) {
  const SearchSpace space(SearchSpaceOptions::for_target(host_target()));
  auto graph = graph_of(testing::bilateral_grid_pipeline());
  std::mt19937_64 rng(21);
  ScheduleState state(graph);
  ASSERT_TRUE(space.random_rollout(state, rng));
  expect_same_loop_nest_from_source([] { return testing::bilateral_grid_pipeline(); },
                                    "protuner::testing::bilateral_grid_pipeline()", state);
}

// A histogram in parallel bands is an rfactor in the source, its partial histograms a Func
// the source names and schedules.
TEST(ScheduleSource, AReductionInBandsCompilesAndGivesTheSameLoopNest) {
  auto graph = graph_of(testing::equalize_pipeline());
  SearchSpaceOptions options = SearchSpaceOptions::for_target(host_target());
  options.min_parallel_points = 64 * 48;  // its histogram's points: bands
  const ScheduleState state = fallback_schedule(graph, options);
  const std::string source = schedule_source(state, "source_test");
  ASSERT_NE(source.find(".rfactor("), std::string::npos) << source;
  expect_same_loop_nest_from_source([] { return testing::equalize_pipeline(); },
                                    "protuner::testing::equalize_pipeline()", state);
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
