// The serialized form of requests and results: round trips, defaults, and refusals that
// name the field, since the child process, the wire and the cache all depend on it.
#include <gtest/gtest.h>

#include "common/errors.h"
#include "measurer/measure_json.h"

namespace protuner {
namespace {

MeasureRequest sample_request() {
  MeasureRequest r;
  r.app = {"blur", "/lib/libx.so", "test_blur", {{"expert", "false"}, {"size", "64"}}};
  r.schedule = {ScheduleKind::kProtuner, R"({"format":"protuner-schedule"})"};
  r.target = "x86-64-linux-avx2";
  r.settings.timing.warmup_runs = 3;
  r.settings.timing.set_samples(12);
  r.settings.timing.max_samples = 20;
  r.settings.timing.min_sample_seconds = 0.01;
  r.settings.timing.stop_above_ms = 42.5;
  r.settings.timing.early_stop_samples = 2;
  r.settings.timing.early_stop_factor = 3;
  r.settings.timing.confirming_samples = 4;
  r.settings.timing.confirm_within = 0.02;
  r.settings.compile_timeout_seconds = 7.5;
  r.settings.run_timeout_seconds = 9;
  r.settings.memory_limit_mb = 512;
  r.settings.require_smt_off = true;
  r.settings.check_output = false;
  r.library_sha256 = std::string(64, 'e');
  return r;
}

std::string error_of(const std::function<void()> &f) {
  try {
    f();
  } catch (const ConfigError &e) {
    return e.what();
  }
  return "(no error)";
}

TEST(MeasureJson, RequestRoundTripsEveryField) {
  const MeasureRequest a = sample_request();
  const MeasureRequest b = request_from_json(request_to_json(a));
  EXPECT_EQ(b.app.name, a.app.name);
  EXPECT_EQ(b.app.library, a.app.library);
  EXPECT_EQ(b.app.generator, a.app.generator);
  EXPECT_EQ(b.app.params, a.app.params);
  EXPECT_EQ(b.schedule.kind, a.schedule.kind);
  EXPECT_EQ(b.schedule.schedule_json, a.schedule.schedule_json);
  EXPECT_EQ(b.target, a.target);
  EXPECT_EQ(b.settings.timing.warmup_runs, 3);
  EXPECT_EQ(b.settings.timing.samples, 12);
  EXPECT_EQ(b.settings.timing.max_samples, 20);
  EXPECT_EQ(b.settings.timing.confirming_samples, 4);
  EXPECT_DOUBLE_EQ(b.settings.timing.confirm_within, 0.02);
  EXPECT_DOUBLE_EQ(b.settings.timing.min_sample_seconds, 0.01);
  EXPECT_DOUBLE_EQ(b.settings.timing.stop_above_ms, 42.5);
  EXPECT_EQ(b.settings.timing.early_stop_samples, 2);
  EXPECT_DOUBLE_EQ(b.settings.timing.early_stop_factor, 3);
  EXPECT_DOUBLE_EQ(b.settings.compile_timeout_seconds, 7.5);
  EXPECT_DOUBLE_EQ(b.settings.run_timeout_seconds, 9);
  EXPECT_EQ(b.settings.memory_limit_mb, 512);
  EXPECT_TRUE(b.settings.require_smt_off);
  EXPECT_FALSE(b.settings.check_output);
  EXPECT_EQ(b.library_sha256, a.library_sha256);
  EXPECT_EQ(request_to_json(b), request_to_json(a));
}

TEST(MeasureJson, EveryScheduleKindRoundTrips) {
  for (ScheduleKind k : {ScheduleKind::kOwn, ScheduleKind::kDefault, ScheduleKind::kRoot}) {
    MeasureRequest r = sample_request();
    r.schedule = {k, ""};
    EXPECT_EQ(request_from_json(request_to_json(r)).schedule.kind, k);
  }
}

TEST(MeasureJson, AnAutoschedulerRequestRoundTripsWithItsPlugin) {
  MeasureRequest r = sample_request();
  r.schedule = {ScheduleKind::kAutoscheduler, "", "Mullapudi2016", ""};
  const MeasureRequest b = request_from_json(request_to_json(r));
  EXPECT_EQ(b.schedule.kind, ScheduleKind::kAutoscheduler);
  EXPECT_EQ(b.schedule.autoscheduler, "Mullapudi2016");
  EXPECT_TRUE(b.schedule.autoscheduler_plugin.empty());
  EXPECT_EQ(request_to_json(b), request_to_json(r));
  // Halide's plugin of that name, unless the request names another file.
  EXPECT_NE(autoscheduler_plugin_path(b.schedule).find("libautoschedule_mullapudi2016.so"),
            std::string::npos);
  r.schedule = {ScheduleKind::kAutoscheduler, "", "Mine", "/opt/libautoschedule_mine.so"};
  const MeasureRequest c = request_from_json(request_to_json(r));
  EXPECT_EQ(c.schedule.autoscheduler, "Mine");
  EXPECT_EQ(c.schedule.autoscheduler_plugin, "/opt/libautoschedule_mine.so");
  EXPECT_EQ(autoscheduler_plugin_path(c.schedule), "/opt/libautoschedule_mine.so");
}

TEST(MeasureJson, AutoschedulerFieldsAreCheckedAgainstTheKind) {
  const auto request_with = [](const std::string &schedule) {
    return error_of([&] {
      request_from_json(R"({"app": {"library": "l", "generator": "g"}, "schedule": )" + schedule +
                        "}");
    });
  };
  EXPECT_EQ(request_with(R"({"kind": "autoscheduler"})"),
            "request.schedule.autoscheduler is required for kind 'autoscheduler'");
  EXPECT_EQ(request_with(R"({"kind": "root", "autoscheduler": "Adams2019"})"),
            "request.schedule.autoscheduler is only allowed for kind 'autoscheduler'");
  EXPECT_EQ(request_with(R"({"kind": "own", "plugin": "/p.so"})"),
            "request.schedule.plugin is only allowed for kind 'autoscheduler'");
  const std::string unknown = request_with(R"({"kind": "autoscheduler", "autoscheduler": "Fast"})");
  EXPECT_NE(unknown.find("request.schedule.autoscheduler unknown autoscheduler 'Fast'"),
            std::string::npos)
      << unknown;
  EXPECT_NE(unknown.find("Adams2019, Mullapudi2016, Li2018"), std::string::npos) << unknown;
}

TEST(MeasureJson, OmittedSettingsTakeTheDefaults) {
  const MeasureRequest r = request_from_json(
      R"({"app": {"library": "/l.so", "generator": "g", "params": {"expert": true, "n": 3}},
          "schedule": {"kind": "own"}})");
  const MeasureSettings defaults;
  EXPECT_EQ(r.app.name, "g");  // the generator names an app without a name
  EXPECT_EQ(r.app.params.at("expert"), "true");
  EXPECT_EQ(r.app.params.at("n"), "3");
  EXPECT_EQ(r.target, "host");
  EXPECT_EQ(r.settings.timing.samples, defaults.timing.samples);
  EXPECT_EQ(r.settings.timing.max_samples, defaults.timing.max_samples);
  EXPECT_EQ(r.settings.memory_limit_mb, defaults.memory_limit_mb);
  EXPECT_DOUBLE_EQ(r.settings.run_timeout_seconds, defaults.run_timeout_seconds);
  EXPECT_EQ(r.settings.timing.stop_above_ms, 0);
  // A request without a stop line does not name one (its cache key stays as it was).
  EXPECT_EQ(request_to_json(r).find("stop_above_ms"), std::string::npos);
  EXPECT_EQ(request_to_json(r).find("early_stop"), std::string::npos);
}

TEST(MeasureJson, SamplesAboveTheDefaultMaximumRaiseIt) {
  const MeasureRequest r = request_from_json(
      R"({"app": {"library": "/l.so", "generator": "g"}, "schedule": {"kind": "root"},
          "settings": {"samples": 60}})");
  EXPECT_EQ(r.settings.timing.samples, 60);
  EXPECT_EQ(r.settings.timing.max_samples, 60);
  EXPECT_EQ(error_of([] {
              request_from_json(R"({"app": {"library": "l", "generator": "g"},
                                    "schedule": {"kind": "root"},
                                    "settings": {"samples": 12, "max_samples": 11}})");
            }),
            "request.settings.max_samples must be at least samples");
}

TEST(MeasureJson, BadRequestsNameTheField) {
  EXPECT_NE(error_of([] { request_from_json("{not json"); }).find("not valid JSON"),
            std::string::npos);
  EXPECT_EQ(error_of([] { request_from_json(R"({"schedule": {"kind": "root"}})"); }),
            "request.app is missing");
  EXPECT_EQ(error_of([] {
              request_from_json(R"({"app": {"library": "l", "generator": 3},
                                    "schedule": {"kind": "root"}})");
            }),
            "request.app.generator must be a string");
  EXPECT_EQ(error_of([] {
              request_from_json(R"({"app": {"library": "l", "generator": "g"},
                                    "schedule": {"kind": "protuner"}})");
            }),
            "request.schedule.json is required for kind 'protuner'");
  EXPECT_NE(error_of([] {
              request_from_json(R"({"app": {"library": "l", "generator": "g"},
                                    "schedule": {"kind": "fast"}})");
            }).find("request.schedule.kind 'fast' is not one of"),
            std::string::npos);
  EXPECT_EQ(error_of([] {
              request_from_json(R"({"app": {"library": "l", "generator": "g"},
                                    "schedule": {"kind": "root"}, "settings": {"samples": 0}})");
            }),
            "request.settings.samples is out of range (0; must be >= 1)");
  EXPECT_EQ(error_of([] {
              request_from_json(R"({"app": {"library": "l", "generator": "g"},
                                    "schedule": {"kind": "root"},
                                    "settings": {"early_stop_factor": 0.5}})");
            }),
            "request.settings.early_stop_factor must be at least 1");
  EXPECT_EQ(error_of([] {
              request_from_json(R"({"app": {"library": "l", "generator": "g"},
                                    "schedule": {"kind": "root"}, "setings": {}})");
            }),
            "request.setings is not a known field");
  EXPECT_EQ(error_of([] { request_from_json("[1, 2]"); }), "request must be a JSON object");
}

TEST(MeasureJson, ResultRoundTripsEveryField) {
  MeasureResult a;
  a.status = MeasureStatus::kWrongOutput;
  a.compile_seconds = 1.25;
  a.timing.samples_ms = {2.5, 2.25, 3};
  a.timing.min_ms = 2.25;
  a.timing.median_ms = 2.5;
  a.timing.relative_spread = 0.1111;
  a.timing.runs_per_sample = 4;
  a.timing.confirmed = true;
  a.timing.stopped_above = true;
  a.host = {"AMD EPYC", 2, 2, "off", "performance", "x86-64-linux-avx2"};
  a.cpus = {0, 1};
  a.error = "output 'out' differs at (3, 4)";
  a.from_cache = true;
  const MeasureResult b = result_from_json(result_to_json(a));
  EXPECT_EQ(b.status, a.status);
  EXPECT_DOUBLE_EQ(b.compile_seconds, a.compile_seconds);
  EXPECT_EQ(b.timing.samples_ms, a.timing.samples_ms);
  EXPECT_DOUBLE_EQ(b.timing.min_ms, a.timing.min_ms);
  EXPECT_DOUBLE_EQ(b.timing.median_ms, a.timing.median_ms);
  EXPECT_DOUBLE_EQ(b.timing.relative_spread, a.timing.relative_spread);
  EXPECT_EQ(b.timing.runs_per_sample, 4);
  EXPECT_TRUE(b.timing.confirmed);
  EXPECT_TRUE(b.timing.stopped_above);
  EXPECT_EQ(b.host.cpu_model, "AMD EPYC");
  EXPECT_EQ(b.host.logical_cpus, 2);
  EXPECT_EQ(b.host.physical_cores, 2);
  EXPECT_EQ(b.host.smt, "off");
  EXPECT_EQ(b.host.governor, "performance");
  EXPECT_EQ(b.host.halide_target, "x86-64-linux-avx2");
  EXPECT_EQ(b.cpus, a.cpus);
  EXPECT_EQ(b.error, a.error);
  EXPECT_TRUE(b.from_cache);
}

TEST(MeasureJson, ResultWithOnlyAStatusIsAccepted) {
  const MeasureResult r = result_from_json(R"({"status": "timeout", "error": "too slow"})");
  EXPECT_EQ(r.status, MeasureStatus::kTimeout);
  EXPECT_EQ(r.error, "too slow");
  EXPECT_TRUE(r.timing.samples_ms.empty());
}

TEST(MeasureJson, BadResultsNameTheField) {
  EXPECT_NE(error_of([] { result_from_json(R"({"status": "fine"})"); })
                .find("result.status unknown measurement status 'fine'"),
            std::string::npos);
  EXPECT_EQ(error_of([] { result_from_json(R"({"status": "ok", "samples_ms": [1, "x"]})"); }),
            "result.samples_ms must be an array of numbers");
  EXPECT_EQ(error_of([] { result_from_json(R"({"error": ""})"); }), "result.status is missing");
}

TEST(MeasureJson, NonUtf8ErrorTextDoesNotThrow) {
  MeasureResult r;
  r.status = MeasureStatus::kRuntimeCrash;
  r.error = std::string("stderr: \xff\xfe tail");
  const MeasureResult back = result_from_json(result_to_json(r));
  EXPECT_NE(back.error.find("tail"), std::string::npos);
}

TEST(MeasureStatusNames, EveryStatusRoundTripsThroughItsName) {
  for (MeasureStatus s : {MeasureStatus::kOk, MeasureStatus::kCompileError,
                          MeasureStatus::kRuntimeCrash, MeasureStatus::kTimeout,
                          MeasureStatus::kOutOfMemory, MeasureStatus::kWrongOutput,
                          MeasureStatus::kBadRequest}) {
    EXPECT_EQ(parse_status(status_name(s)), s);
  }
  EXPECT_THROW(parse_status("OK"), ConfigError);
}

}  // namespace
}  // namespace protuner
