// The farm measurer's backend against a real redis-server: it measures only libraries
// stored by hash, from its own cache, and refuses a request that names a path, or a hash
// Redis does not hold, without loading anything; Redis being away is the measurer's
// problem (measurer_error), not the candidate's.
#include "measurer/library_fetching_backend.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/farm/library_store.h"
#include "common/farm/redis_schema.h"
#include "tests/support/loopback.h"

namespace protuner {
namespace {

namespace fs = std::filesystem;

// Answers ok and keeps the last request it was given.
class RecordingBackend : public MeasurementBackend {
 public:
  explicit RecordingBackend(MeasureRequest *last) : last_(last) {}
  MeasureResult measure(const MeasureRequest &request) override {
    *last_ = request;
    MeasureResult r;
    r.status = MeasureStatus::kOk;
    return r;
  }

 private:
  MeasureRequest *last_;
};

class LibraryFetchingBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("protuner_fetching_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "libapp.so") << "not really a library, but bytes with a hash";
    RedisClient redis("127.0.0.1", server_.port());
    farm::check_layout(redis);
    sha_ = farm::store_library(redis, (dir_ / "libapp.so").string());
    RedisOptions options;
    options.host = "127.0.0.1";
    options.port = server_.port();
    backend_ = std::make_unique<LibraryFetchingBackend>(
        std::make_unique<RecordingBackend>(&last_), options, (dir_ / "cache").string());
  }
  void TearDown() override { fs::remove_all(dir_); }

  MeasureRequest request(const std::string &sha) {
    MeasureRequest r;
    r.app.name = "app";
    r.app.library = "/somewhere/the/request/names.so";
    r.app.generator = "g";
    r.library_sha256 = sha;
    return r;
  }

  testing::RedisServer server_;
  fs::path dir_;
  std::string sha_;
  MeasureRequest last_;
  std::unique_ptr<LibraryFetchingBackend> backend_;
};

TEST_F(LibraryFetchingBackendTest, MeasuresTheLibraryStoredUnderTheHashNotThePathNamed) {
  const MeasureResult r = backend_->measure(request(sha_));
  EXPECT_EQ(r.status, MeasureStatus::kOk) << r.error;
  EXPECT_EQ(fs::path(last_.app.library).parent_path(), dir_ / "cache");
  std::ifstream in(last_.app.library);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}),
            "not really a library, but bytes with a hash");
}

TEST_F(LibraryFetchingBackendTest, RefusesARequestWithoutAHashOrWithAnUnknownOne) {
  MeasureResult r = backend_->measure(request(""));
  EXPECT_EQ(r.status, MeasureStatus::kBadRequest);
  EXPECT_NE(r.error.find("names the path '/somewhere/the/request/names.so'"), std::string::npos)
      << r.error;
  r = backend_->measure(request(std::string(64, 'a')));
  EXPECT_EQ(r.status, MeasureStatus::kBadRequest);
  EXPECT_NE(r.error.find("holds no library " + std::string(64, 'a')), std::string::npos) << r.error;
  r = backend_->measure(request("../../etc/passwd"));
  EXPECT_EQ(r.status, MeasureStatus::kBadRequest);
  EXPECT_TRUE(last_.app.library.empty()) << "the inner backend was called";
}

TEST_F(LibraryFetchingBackendTest, RedisAwayIsTheMeasurersErrorNotTheCandidates) {
  server_.stop();
  const MeasureResult r = backend_->measure(request(sha_));
  EXPECT_EQ(r.status, MeasureStatus::kMeasurerError) << r.error;
  EXPECT_TRUE(last_.app.library.empty());
}

}  // namespace
}  // namespace protuner
