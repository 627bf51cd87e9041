// `submit_suite` against a real redis-server: a good suite is stored whole (libraries by
// hash, the record, the index), a suite with one bad app stores nothing.
#include "coordinator/submit.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/errors.h"
#include "common/farm/library_store.h"
#include "common/farm/redis_schema.h"
#include "common/redis_client.h"
#include "tests/support/loopback.h"

namespace protuner {
namespace {

namespace fs = std::filesystem;

class SubmitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("protuner_submit_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  Suite write_suite(const std::string &apps_yaml) {
    const std::string path = (dir_ / "suite.yaml").string();
    std::ofstream(path) << "suite: nightly run\n"
                        << "defaults: {budget_minutes: 2, seeds: 2}\n"
                        << "apps:\n"
                        << apps_yaml;
    return parse_suite_file(path);
  }

  testing::RedisServer server_;
  RedisClient redis_{"127.0.0.1", server_.port()};
  fs::path dir_;
};

const std::string kLibrary = PROTUNER_TEST_GENERATOR_LIBRARY;

TEST_F(SubmitTest, StoresTheWholeSuite) {
  const Suite suite = write_suite("  - {name: blur, library: " + kLibrary +
                                  ", generator: test_blur}\n"
                                  "  - {name: blur_long, library: " + kLibrary +
                                  ", generator: test_blur, budget_minutes: 0.5, seeds: 1}\n");
  const farm::SuiteRecord record = submit_suite(redis_, suite);
  EXPECT_EQ(record.id.rfind("nightly_run-", 0), 0u) << record.id;
  EXPECT_EQ(record.id.size(), std::string("nightly_run-").size() + 8);
  ASSERT_EQ(record.apps.size(), 2u);
  EXPECT_EQ(record.apps[0].budget_ms, 120000);
  EXPECT_EQ(record.apps[0].seeds, 2);
  EXPECT_EQ(record.apps[1].budget_ms, 30000);
  EXPECT_EQ(record.apps[1].seeds, 1);
  EXPECT_EQ(record.apps[0].library_sha256, farm::sha256_of_file(kLibrary));
  EXPECT_EQ(record.apps[0].library_file, fs::path(kLibrary).filename().string());
  // The record reads back as written, the index names it, the library is there once.
  const auto stored = redis_.get(farm::suite_key(record.id));
  ASSERT_TRUE(stored);
  EXPECT_EQ(farm::suite_from_json(*stored, "test"), record);
  EXPECT_EQ(redis_.command({"ZSCORE", farm::suites_index(), record.id}).str,
            std::to_string(record.submitted_ms));
  EXPECT_TRUE(farm::library_stored(redis_, record.apps[0].library_sha256));
  EXPECT_EQ(redis_.command({"KEYS", "protuner:v*:library:*"}).elements.size(), 1u);
  // A second submission is a second suite.
  EXPECT_NE(submit_suite(redis_, suite).id, record.id);
}

TEST_F(SubmitTest, OneBadAppStoresNothingAndNamesFileAndLine) {
  const Suite suite = write_suite("  - {name: blur, library: " + kLibrary +
                                  ", generator: test_blur}\n"
                                  "  - {name: typo, library: " + kLibrary +
                                  ", generator: no_such_generator}\n");
  try {
    submit_suite(redis_, suite);
    FAIL() << "a suite with an unknown generator was submitted";
  } catch (const ConfigError &e) {
    EXPECT_NE(std::string(e.what()).find("suite.yaml:5:"), std::string::npos) << e.what();
  }
  EXPECT_EQ(redis_.command({"DBSIZE"}).integer, 0);
}

TEST(SuiteId, KeepsSafeCharactersOfTheName) {
  const std::string id = new_suite_id("my suite:v2");
  EXPECT_EQ(id.substr(0, 12), "my_suite_v2-");
  EXPECT_NE(new_suite_id("x"), new_suite_id("x"));
}

}  // namespace
}  // namespace protuner
