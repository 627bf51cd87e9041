// The parent side of isolation against scripted stand-ins for protuner-measure-child: how
// the child is started (process group, CPUs, threads, memory limit), how each way of ending
// maps to a status, that nothing it leaves behind survives, and that measurements never
// overlap. No Halide here, so these run in milliseconds.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "measurer/isolated_measurer.h"

namespace protuner {
namespace {

class FakeChildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("protuner_fake_child_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A measurer whose helper is a shell script with `body` (status lines go to fd 3).
  IsolatedMeasurer measurer_running(const std::string &body, std::vector<int> cpus = {}) {
    const std::string path = (dir_ / "child.sh").string();
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    chmod(path.c_str(), 0755);
    IsolatedMeasurerOptions o;
    o.child_executable = path;
    o.cache_dir = (dir_ / "cache").string();
    o.use_result_cache = false;
    o.cpus = std::move(cpus);
    return IsolatedMeasurer(o);
  }

  static MeasureRequest any_request() {
    MeasureRequest r;
    r.app = {"fake", "/fake/lib.so", "fake", {}};
    r.schedule = {ScheduleKind::kOwn, ""};
    r.target = "host";
    r.settings.compile_timeout_seconds = 10;
    r.settings.run_timeout_seconds = 10;
    r.settings.memory_limit_mb = 1234;
    return r;
  }

  std::string read(const std::string &name) {
    std::ifstream in(dir_ / name);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  std::filesystem::path dir_;
};

#define EXPECT_STATUS(result, expected) \
  EXPECT_EQ(status_name((result).status), std::string(status_name(expected))) << (result).error

TEST_F(FakeChildTest, TheChildRunsPinnedWithItsThreadCountAndMemoryLimit) {
  IsolatedMeasurer m = measurer_running(
      "cpus=$(grep Cpus_allowed_list /proc/self/status | cut -f2)\n"
      "echo \"result {\\\"status\\\": \\\"ok\\\", \\\"error\\\": "
      "\\\"threads=$HL_NUM_THREADS cpus=$cpus vmem=$(ulimit -v) pgid=$(ps -o pgid= $$ | tr -d ' ') "
      "pid=$$\\\"}\" >&3",
      {0});
  const MeasureResult r = m.measure(any_request());
  EXPECT_STATUS(r, MeasureStatus::kOk);
  EXPECT_NE(r.error.find("threads=1 cpus=0 vmem=" + std::to_string(1234 * 1024)), std::string::npos)
      << r.error;
  // Its own process group: pgid == pid.
  const auto pgid = r.error.find("pgid="), pid = r.error.find("pid=", pgid + 5);
  ASSERT_NE(pgid, std::string::npos);
  EXPECT_EQ(r.error.substr(pgid + 5, r.error.find(' ', pgid) - pgid - 5), r.error.substr(pid + 4))
      << r.error;
  EXPECT_EQ(r.cpus, std::vector<int>{0});
}

TEST_F(FakeChildTest, SigkillNotSentByTheMeasurerIsOutOfMemory) {
  IsolatedMeasurer m = measurer_running("echo 'phase run' >&3\nkill -KILL $$");
  const MeasureResult r = m.measure(any_request());
  EXPECT_STATUS(r, MeasureStatus::kOutOfMemory);
  EXPECT_NE(r.error.find("OOM killer"), std::string::npos) << r.error;
}

TEST_F(FakeChildTest, DyingWhileCompilingIsACompileErrorWithTheOutputTail) {
  IsolatedMeasurer m = measurer_running(
      "echo 'phase compile' >&3\necho 'LLVM ERROR: Cannot select: a bad node' >&2\nkill -ABRT $$");
  const MeasureResult r = m.measure(any_request());
  EXPECT_STATUS(r, MeasureStatus::kCompileError);
  EXPECT_NE(r.error.find("signal 6"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("while compiling"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("LLVM ERROR: Cannot select"), std::string::npos) << r.error;
}

TEST_F(FakeChildTest, DyingWhileRunningWithAnOutOfMemoryMessageIsOutOfMemory) {
  IsolatedMeasurer m = measurer_running(
      "echo 'phase run' >&3\necho \"terminate called after throwing an instance of "
      "'std::bad_alloc'\" >&2\nkill -ABRT $$");
  EXPECT_STATUS(m.measure(any_request()), MeasureStatus::kOutOfMemory);
}

TEST_F(FakeChildTest, ExitingWithoutAResultIsACrash) {
  IsolatedMeasurer m = measurer_running("echo 'phase run' >&3\nexit 3");
  const MeasureResult r = m.measure(any_request());
  EXPECT_STATUS(r, MeasureStatus::kRuntimeCrash);
  EXPECT_NE(r.error.find("exited with code 3 without a result while running"), std::string::npos)
      << r.error;
}

TEST_F(FakeChildTest, AnUnreadableResultIsACrash) {
  IsolatedMeasurer m = measurer_running("echo 'result {not json' >&3");
  const MeasureResult r = m.measure(any_request());
  EXPECT_STATUS(r, MeasureStatus::kRuntimeCrash);
  EXPECT_NE(r.error.find("unreadable result"), std::string::npos) << r.error;
}

TEST_F(FakeChildTest, EachPhaseHasItsOwnDeadline) {
  // 0.6 s in each of load and compile, both under their 1 s limit; then run hangs.
  IsolatedMeasurer m = measurer_running(
      "echo 'phase load' >&3\nsleep 0.6\necho 'phase compile' >&3\nsleep 0.6\n"
      "echo 'phase run' >&3\nsleep 100");
  MeasureRequest r = any_request();
  r.settings.compile_timeout_seconds = 1;
  r.settings.run_timeout_seconds = 0.5;
  const MeasureResult result = m.measure(r);
  EXPECT_STATUS(result, MeasureStatus::kTimeout);
  EXPECT_NE(result.error.find("while running (the run phase limit is 0.5 s"), std::string::npos)
      << result.error;
}

TEST_F(FakeChildTest, WhatTheChildLeavesBehindIsKilledWithItsGroup) {
  // The grandchild keeps the child's pipes open; the measurer must still notice the
  // child's exit and kill the grandchild with the process group.
  IsolatedMeasurer m = measurer_running("sleep 100 &\necho $! > " + (dir_ / "orphan").string() +
                                        "\necho 'result {\"status\": \"ok\"}' >&3\nexit 0");
  const auto start = std::chrono::steady_clock::now();
  EXPECT_STATUS(m.measure(any_request()), MeasureStatus::kOk);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  const pid_t orphan = std::stoi(read("orphan"));
  // Dead means gone, or a zombie nobody has reaped yet (kill(0) still answers for those).
  auto dead = [&] {
    if (kill(orphan, 0) != 0) return true;
    std::ifstream stat("/proc/" + std::to_string(orphan) + "/stat");
    std::string pid_s, comm, state;
    return stat >> pid_s >> comm >> state && state == "Z";
  };
  bool gone = false;
  for (int i = 0; i < 100 && !(gone = dead()); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(gone) << "the grandchild " << orphan << " survived";
}

TEST_F(FakeChildTest, MeasurementsFromSeveralThreadsNeverOverlap) {
  const std::string log = (dir_ / "log").string();
  IsolatedMeasurer m = measurer_running("echo start >> " + log + "\nsleep 0.2\necho end >> " +
                                        log + "\necho 'result {\"status\": \"ok\"}' >&3");
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([&] { EXPECT_STATUS(m.measure(any_request()), MeasureStatus::kOk); });
  }
  for (auto &t : threads) t.join();
  EXPECT_EQ(read("log"), "start\nend\nstart\nend\nstart\nend\n");
}

}  // namespace
}  // namespace protuner
