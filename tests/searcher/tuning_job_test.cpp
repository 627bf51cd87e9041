// A tuning job by the cost model alone (no measurer, as the Halide plugin's default runs):
// it starts from the cheapest predicted seed, repeats a search that uses start points until
// the deadline, runs greedy once, and never returns a schedule predicted slower than a seed.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>

#include "searcher/cost/analytic_model.h"
#include "searcher/search/search_registry.h"
#include "searcher/search/seed_measurement.h"
#include "searcher/search/tuning_job.h"
#include "tests/searcher/search_fixtures.h"
#include "tests/searcher/test_pipelines.h"

namespace protuner {
namespace {

using Clock = std::chrono::steady_clock;

TuningJob model_alone_job(const std::string &algorithm, double seconds) {
  TuningJob job;
  job.label = "test";
  job.graph = testing::graph_of(testing::blur_chain_pipeline());
  job.space = std::make_shared<const SearchSpace>(testing::space_for_tests());
  job.cost_model = [graph = job.graph](std::shared_ptr<const AnalyticCalibration>) {
    return std::make_unique<AnalyticModel>(graph);
  };
  job.algorithm = algorithm;
  job.seed = 1;
  job.start = Clock::now();
  job.deadline = job.start + std::chrono::duration_cast<Clock::duration>(
                                 std::chrono::duration<double>(seconds));
  return job;
}

double predicted(const TuningJob &job, const ScheduleState &s) {
  return AnalyticModel(job.graph).predict({&s}).at(0);
}

TEST(TuningJob, ByTheModelAloneRepeatsTheSearchFromItsBestUntilTheDeadline) {
  const TuningJob job = model_alone_job("mcts_0.5s", 4);
  SearchContext ctx = testing::analytic_context(job.graph, *job.space);
  const PredictedSeed seed = cheapest_predicted_seed(ctx, job.machine, job.seeds,
                                                     Clock::now() + std::chrono::seconds(4), "t");
  const SearchOutcome out = run_tuning_job(job);
  ASSERT_TRUE(out.best.has_value());
  EXPECT_FALSE(out.best_result.has_value());  // nothing measured
  // The search (0.5 s per Func, three Funcs) ends well before 4 s and runs again.
  EXPECT_GE(out.seeds.size(), 2u);
  EXPECT_GE(Clock::now(), job.deadline);
  EXPECT_DOUBLE_EQ(out.best_cost_seconds, predicted(job, *out.best));
  EXPECT_LE(out.best_cost_seconds, seed.predicted_seconds);
}

TEST(TuningJob, ByTheModelAloneRunsASearchThatIgnoresStartPointsOnce) {
  const TuningJob job = model_alone_job("greedy", 30);
  const auto began = Clock::now();
  const SearchOutcome out = run_tuning_job(job);
  EXPECT_EQ(out.seeds.size(), 1u);
  EXPECT_LT(Clock::now() - began, std::chrono::seconds(20));  // not the 30 s budget
  ASSERT_TRUE(out.best.has_value());
  // Greedy's own pick, or a seed the model predicts cheaper.
  SearchBudget one_pass;
  one_pass.iterations = 1;
  SearchContext ctx = testing::analytic_context(job.graph, *job.space);
  ctx.seed = job.seed;  // greedy samples children: the job's seed
  EXPECT_LE(out.best_cost_seconds, make_search("greedy")->run(ctx, one_pass).best_cost);
}

}  // namespace
}  // namespace protuner
