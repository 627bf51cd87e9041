// The real `protuner-measurerd` executable, as child processes on loopback, measuring real
// small candidates (the test blur generator, root / default / own schedules) through the
// client: a batch over two daemons survives one of them being SIGKILLed mid-batch, and a
// daemon exports metrics and exits cleanly on SIGTERM.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <regex>

#include "searcher/measurement/measurer_client.h"
#include "tests/measurer/quick_request.h"
#include "tests/measurer/service_test_support.h"
#include "tests/support/loopback.h"

namespace protuner {
namespace {

using namespace std::chrono_literals;

// Reference outputs shared by every daemon of the test run (in the build tree); results are
// never cached (--no-cache), so a request retried elsewhere is really measured again.
std::string test_cache_dir() { return PROTUNER_SERVICE_TEST_CACHE_DIR; }

// One protuner-measurerd child process, SIGKILLed in the destructor if still running.
class MeasurerdProcess {
 public:
  MeasurerdProcess()
      : port_(testing::free_loopback_port()), metrics_port_(testing::free_loopback_port()) {
    const std::string bind = "tcp://127.0.0.1:" + std::to_string(port_);
    const std::string metrics = std::to_string(metrics_port_);
    const std::string cache = test_cache_dir();
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      execl(PROTUNER_MEASURERD, PROTUNER_MEASURERD, "--bind", bind.c_str(), "--metrics-port",
            metrics.c_str(), "--cache-dir", cache.c_str(), "--no-cache",
            "--heartbeat-ms", "200", "--log-level", "warn", static_cast<char *>(nullptr));
      _exit(127);
    }
  }
  ~MeasurerdProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  MeasurerdProcess(const MeasurerdProcess &) = delete;
  MeasurerdProcess &operator=(const MeasurerdProcess &) = delete;

  std::string endpoint() const { return "tcp://127.0.0.1:" + std::to_string(port_); }
  void signal(int sig) const { ::kill(pid_, sig); }
  // The exit status (waitpid's), or nullopt if it is still running after `timeout`.
  std::optional<int> wait(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    do {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return status;
      }
      std::this_thread::sleep_for(20ms);
    } while (std::chrono::steady_clock::now() < deadline);
    return std::nullopt;
  }

  // The /metrics page, retried while the daemon starts; "" if it never answers.
  std::string metrics() const {
    for (int i = 0; i < 100; ++i) {
      try {
        return testing::http_get(metrics_port_, "/metrics");
      } catch (const std::exception &) {
        std::this_thread::sleep_for(50ms);
      }
    }
    return "";
  }

 private:
  int port_;
  int metrics_port_;
  pid_t pid_ = -1;
};

double metric(const std::string &page, const std::string &name) {
  const std::regex re("\n" + std::regex_replace(name, std::regex(R"([{}])"), R"(\$&)") +
                      R"( ([0-9.e+-]+))");
  std::smatch m;
  return std::regex_search(page, m, re) ? std::stod(m[1]) : -1;
}

// Statuses are what this test checks, not runtimes: short timing.
MeasureRequest blur(ScheduleKind kind) {
  return quick_request(PROTUNER_TEST_GENERATOR_LIBRARY, "test_blur", {kind});
}

ClientOptions process_client() {
  ClientOptions o;
  o.heartbeat_interval = 200ms;
  o.no_measurer_timeout = 30s;
  return o;
}

TEST(MeasurerdProcess, BatchSurvivesOneDaemonKilledMidBatch) {
  MeasurerdProcess a, b;
  MeasurerClient client({a.endpoint(), b.endpoint()}, process_client());
  const ScheduleKind kinds[] = {ScheduleKind::kRoot, ScheduleKind::kDefault, ScheduleKind::kOwn};
  std::vector<MeasureRequest> batch;
  for (int i = 0; i < 8; ++i) batch.push_back(blur(kinds[i % 3]));

  std::vector<MeasureResult> results;
  std::thread searcher([&] { results = client.measure_batch(batch); });
  // Kill `a` once it has answered one request and is busy with the next: mid-batch, with a
  // request of ours outstanding there.
  bool killed = false;
  const auto deadline = std::chrono::steady_clock::now() + 90s;
  while (!killed && std::chrono::steady_clock::now() < deadline) {
    const std::string page = a.metrics();
    if (metric(page, "protuner_measurer_requests_total{status=\"ok\"}") >= 1 &&
        metric(page, "protuner_measurer_busy") == 1) {
      a.signal(SIGKILL);
      killed = true;
    } else {
      std::this_thread::sleep_for(20ms);
    }
  }
  searcher.join();
  ASSERT_TRUE(killed) << "measurer a never got to its second request";

  ASSERT_EQ(results.size(), batch.size());
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(status_name(results[i].status), std::string("ok")) << i << ": " << results[i].error;
    EXPECT_GT(results[i].timing.min_ms, 0) << i;
  }
  const auto stats = client.stats();
  EXPECT_GE(stats.deaths, 1);
  EXPECT_GE(stats.retried, 1);
  EXPECT_GE(stats.answered[0], 1);
  EXPECT_GE(stats.answered[1], 1);
  EXPECT_EQ(stats.answered[0] + stats.answered[1], static_cast<int64_t>(batch.size()));
}

TEST(MeasurerdProcess, ExportsMetricsAndExitsCleanlyOnSigterm) {
  MeasurerdProcess d;
  MeasurerClient client({d.endpoint()}, process_client());
  MeasureRequest bad = blur(ScheduleKind::kRoot);
  bad.app.generator = "no_such_generator";
  const auto results = client.measure_batch({blur(ScheduleKind::kRoot), bad});
  EXPECT_EQ(status_name(results[0].status), std::string("ok")) << results[0].error;
  EXPECT_NE(results[1].status, MeasureStatus::kOk);

  const std::string page = d.metrics();
  EXPECT_EQ(metric(page, "protuner_measurer_requests_total{status=\"ok\"}"), 1) << page;
  EXPECT_EQ(metric(page, "protuner_measurer_busy"), 0) << page;
  EXPECT_EQ(metric(page, "protuner_measurer_measurement_seconds_count"), 2) << page;

  d.signal(SIGTERM);
  const auto status = d.wait(5s);
  ASSERT_TRUE(status) << "protuner-measurerd still running 5 s after SIGTERM";
  EXPECT_TRUE(WIFEXITED(*status)) << "status " << *status;
  EXPECT_EQ(WEXITSTATUS(*status), 0);
}

}  // namespace
}  // namespace protuner
