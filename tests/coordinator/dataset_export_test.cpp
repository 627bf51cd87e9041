// `export_farm_dataset` against a real redis-server: the ok candidates of submitted suites
// become dataset samples that name a fetched, hash-checked copy of the app's library; a
// schedule is exported once however many suites or exports hold it; a bad suite id writes
// nothing.
#include "coordinator/dataset_export.h"

#include <Halide.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "common/farm/app_state.h"
#include "common/farm/library_store.h"
#include "common/host_target.h"
#include "common/redis_client.h"
#include "coordinator/submit.h"
#include "measurer/measure_json.h"
#include "searcher/cost/dataset.h"
#include "tests/support/loopback.h"

namespace protuner {
namespace {

namespace fs = std::filesystem;

const std::string kLibrary = PROTUNER_TEST_GENERATOR_LIBRARY;

class DatasetExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("protuner_export_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Submits a suite of one app, blur, and queues it so that candidates count.
  farm::SuiteRecord submit_blur() {
    const std::string path = (dir_ / "suite.yaml").string();
    std::ofstream(path) << "suite: export test\napps:\n  - {name: blur, library: " << kLibrary
                        << ", generator: test_blur, budget_minutes: 1}\n";
    const farm::SuiteRecord suite = submit_suite(redis_, parse_suite_file(path));
    farm::queue_app(redis_, suite.id, "blur", 60000, {});
    return suite;
  }

  // A candidate as a searcher records it: `min_ms` ok, or failed when negative.
  farm::MeasuredCandidate candidate(const std::string &schedule_json, double min_ms) {
    MeasureResult r;
    r.status = min_ms >= 0 ? MeasureStatus::kOk : MeasureStatus::kRuntimeCrash;
    if (r.ok()) {
      r.timing.samples_ms = {min_ms, min_ms * 1.01, min_ms * 1.02};
      r.timing.min_ms = min_ms;
      r.timing.median_ms = min_ms * 1.01;
    } else {
      r.error = "Input buffer input is accessed at -2";
    }
    r.host.cpu_model = "Test CPU";
    r.host.smt = "off";
    r.host.halide_target = host_target().to_string();
    r.cpus = {1};
    farm::MeasuredCandidate c;
    c.key = farm::candidate_key(schedule_json);
    c.schedule_json = schedule_json;
    c.status = status_name(r.status);
    if (r.ok()) c.min_ms = c.median_ms = min_ms;
    c.error = r.error;
    c.searcher = "searcher-a";
    c.result_json = result_to_json(r);
    return c;
  }

  testing::RedisServer server_;
  RedisClient redis_{"127.0.0.1", server_.port()};
  fs::path dir_;
};

TEST_F(DatasetExportTest, OkCandidatesBecomeSamplesOnceWithTheirFetchedLibrary) {
  const farm::SuiteRecord first = submit_blur();
  const farm::SuiteRecord second = submit_blur();
  const std::string a = R"({"schedule": "a"})", b = R"({"schedule": "b"})";
  const std::string failed = R"({"schedule": "failed"})";
  farm::record_candidate(redis_, first.id, "blur", candidate(a, 1.5));
  farm::record_candidate(redis_, first.id, "blur", candidate(failed, -1));
  // The second suite measured `a` again (another night) and `b`.
  farm::record_candidate(redis_, second.id, "blur", candidate(a, 1.7));
  farm::record_candidate(redis_, second.id, "blur", candidate(b, 2.5));

  DatasetExportOptions options;
  options.out = (dir_ / "farm.jsonl").string();
  const DatasetExportSummary s = export_farm_dataset(redis_, options);
  EXPECT_EQ(s.suites, 2u);
  EXPECT_EQ(s.apps, 2u);
  EXPECT_EQ(s.exported, 2u);
  EXPECT_EQ(s.already, 1u);
  EXPECT_EQ(s.not_samples, 1u);

  const std::vector<DatasetSample> samples = read_dataset(options.out);
  ASSERT_EQ(samples.size(), 2u);
  // Samples hold the schedule as a JSON object: compare its canonical text.
  const auto canonical = [](const std::string &text) { return nlohmann::json::parse(text).dump(); };
  std::map<std::string, DatasetSample> by_schedule;
  for (const DatasetSample &d : samples) by_schedule[d.schedule_json] = d;
  const std::string a_text = canonical(a), b_text = canonical(b);
  ASSERT_EQ(by_schedule.count(a_text), 1u);
  ASSERT_EQ(by_schedule.count(b_text), 1u);
  // The oldest suite's measurement of `a` is kept.
  EXPECT_DOUBLE_EQ(by_schedule[a_text].min_ms, 1.5);
  EXPECT_EQ(by_schedule[a_text].samples_ms.size(), 3u);
  EXPECT_DOUBLE_EQ(by_schedule[b_text].min_ms, 2.5);
  for (const DatasetSample &d : samples) {
    // One pipeline: the same app in two suites.
    EXPECT_EQ(d.pipeline_id, farm_pipeline_id(first.apps[0]));
    EXPECT_EQ(d.pipeline_id.rfind("blur@", 0), 0u) << d.pipeline_id;
    EXPECT_EQ(d.app.generator, "test_blur");
    EXPECT_EQ(d.target, host_target().to_string());
    EXPECT_EQ(d.host_class.rfind("Test CPU x1, ", 0), 0u) << d.host_class;
    // The library is the submitted one, fetched beside the dataset.
    EXPECT_TRUE(fs::path(d.app.library).is_absolute()) << d.app.library;
    EXPECT_EQ(fs::path(d.app.library).parent_path(),
              fs::absolute(options.out + ".libraries"));
    EXPECT_EQ(farm::sha256_of_file(d.app.library), farm::sha256_of_file(kLibrary));
  }

  // A second export appends nothing; one of a single suite neither.
  const DatasetExportSummary again = export_farm_dataset(redis_, options);
  EXPECT_EQ(again.exported, 0u);
  EXPECT_EQ(again.already, 3u);
  options.suites = {second.id};
  EXPECT_EQ(export_farm_dataset(redis_, options).exported, 0u);
  EXPECT_EQ(read_dataset(options.out).size(), 2u);
}

TEST_F(DatasetExportTest, AnUnknownSuiteWritesNothing) {
  const farm::SuiteRecord suite = submit_blur();
  farm::record_candidate(redis_, suite.id, "blur", candidate(R"({"schedule": "a"})", 1.5));
  DatasetExportOptions options;
  options.out = (dir_ / "farm.jsonl").string();
  options.suites = {suite.id, "no_such_suite"};
  try {
    export_farm_dataset(redis_, options);
    FAIL() << "an unknown suite was exported";
  } catch (const ConfigError &e) {
    EXPECT_NE(std::string(e.what()).find("no_such_suite"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(options.out));
}

}  // namespace
}  // namespace protuner
