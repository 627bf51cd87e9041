// Training data: the dataset file format (round trip, a truncated tail, malformed lines,
// versions), the random pipeline generator (valid, deterministic, varied, every building
// block, random schedules computing the root schedule's bits), and `protuner dataset build`
// (only ok results stored, resumed without measuring anything twice), `dataset remeasure`
// and `dataset agreement`.
#include <gtest/gtest.h>
#include <unistd.h>

#include <Halide.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <sstream>

#include "apps/random_pipeline/random_pipeline_blocks.h"
#include "common/app.h"
#include "common/errors.h"
#include "common/host_target.h"
#include "common/pipeline/pipeline_graph.h"
#include "common/pipeline_io.h"
#include "common/schedule/apply_schedule.h"
#include "common/schedule/schedule_json.h"
#include "coordinator/dataset_build.h"
#include "coordinator/dataset_remeasure.h"
#include "measurer/measurement.h"
#include "searcher/cost/dataset.h"
#include "searcher/space/search_space.h"
#include "tests/searcher/guarded_allocations.h"
#include "tests/support/run_command.h"

namespace protuner {
namespace {

namespace fs = std::filesystem;
namespace rp = protuner_random_pipeline;

constexpr int kSeeds = 30;

// A fresh directory per test process, removed by the environment at exit.
const fs::path &scratch_dir() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("protuner_dataset_test_" + std::to_string(getpid()));
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

class ScratchCleanup : public ::testing::Environment {
 public:
  void TearDown() override { fs::remove_all(scratch_dir()); }
};
[[maybe_unused]] const auto *const kCleanup =
    ::testing::AddGlobalTestEnvironment(new ScratchCleanup);

std::string fresh_path(const std::string &name) {
  const fs::path p = scratch_dir() / name;
  fs::remove(p);
  fs::remove_all(p.string() + ".failed");
  return p.string();
}

void append_text(const std::string &path, const std::string &text) {
  std::ofstream(path, std::ios::binary | std::ios::app) << text;
}

DatasetSample example_sample(int i) {
  DatasetSample s;
  s.app = {"random_" + std::to_string(i),
           "libprotuner_random_pipeline.so",
           "random_pipeline",
           {{"seed", std::to_string(i)}}};
  s.pipeline_id = "random_" + std::to_string(i);
  s.schedule_json = R"({"format":"protuner-schedule","version":1,"pipeline":[],"decisions":[)" +
                    std::to_string(i) + "]}";
  s.samples_ms = {1.5 + i, 1.25 + i, 1.75 + i};
  s.min_ms = 1.25 + i;
  s.median_ms = 1.5 + i;
  s.stddev_ms = 0.25;
  s.host_class = "AMD EPYC 9R14 x2, avx512, smt off";
  s.target = "x86-64-linux-avx2";
  return s;
}

std::string canonical(const std::string &json_text) {
  return nlohmann::json::parse(json_text).dump();
}

void expect_same(const DatasetSample &a, const DatasetSample &b) {
  EXPECT_EQ(a.app.name, b.app.name);
  EXPECT_EQ(a.app.library, b.app.library);
  EXPECT_EQ(a.app.generator, b.app.generator);
  EXPECT_EQ(a.app.params, b.app.params);
  EXPECT_EQ(a.pipeline_id, b.pipeline_id);
  EXPECT_EQ(canonical(a.schedule_json), canonical(b.schedule_json));
  EXPECT_EQ(a.samples_ms, b.samples_ms);
  EXPECT_EQ(a.min_ms, b.min_ms);
  EXPECT_EQ(a.median_ms, b.median_ms);
  EXPECT_EQ(a.stddev_ms, b.stddev_ms);
  EXPECT_EQ(a.host_class, b.host_class);
  EXPECT_EQ(a.target, b.target);
}

// The message of the ConfigError `f` throws, or "" when it throws none.
template <class F>
std::string config_error_of(F &&f) {
  try {
    f();
  } catch (const ConfigError &e) {
    return e.what();
  }
  return "";
}

// --- The file format ---

TEST(DatasetFile, SampleRoundTripsThroughOneJsonLine) {
  const DatasetSample s = example_sample(3);
  const std::string line = sample_to_json_line(s);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_EQ(line.rfind(R"({"format":"protuner-sample","version":1,)", 0), 0u) << line;
  expect_same(sample_from_json_line(line), s);
}

TEST(DatasetFile, WriterAppendsAndReaderReadsEverySample) {
  const std::string path = fresh_path("three.jsonl");
  DatasetWriter writer(path);
  for (int i = 0; i < 3; ++i) writer.append(example_sample(i));
  const std::vector<DatasetSample> read = read_dataset(path);
  ASSERT_EQ(read.size(), 3u);
  for (int i = 0; i < 3; ++i) expect_same(read[i], example_sample(i));
  DatasetWriter(path).append(example_sample(3));  // a second writer appends, too
  EXPECT_EQ(read_dataset(path).size(), 4u);
}

TEST(DatasetFile, TruncatedLastLineIsSkippedAndCutByTheNextWriter) {
  const std::string path = fresh_path("truncated.jsonl");
  DatasetWriter(path).append(example_sample(0));
  DatasetWriter(path).append(example_sample(1));
  const std::string third = sample_to_json_line(example_sample(2));
  append_text(path, third.substr(0, third.size() / 2));  // a builder killed mid-line
  ASSERT_EQ(read_dataset(path).size(), 2u);

  DatasetWriter(path).append(example_sample(3));
  const std::vector<DatasetSample> read = read_dataset(path);
  ASSERT_EQ(read.size(), 3u);
  expect_same(read[2], example_sample(3));
}

TEST(DatasetFile, CompleteLastLineWithoutItsNewlineIsKept) {
  const std::string path = fresh_path("no_newline.jsonl");
  append_text(path, sample_to_json_line(example_sample(0)) + "\n" +
                        sample_to_json_line(example_sample(1)));  // edited by hand
  ASSERT_EQ(read_dataset(path).size(), 2u);
  DatasetWriter(path).append(example_sample(2));
  EXPECT_EQ(read_dataset(path).size(), 3u);
}

TEST(DatasetFile, MalformedMiddleLineIsAnErrorNamingFileAndLine) {
  const std::string path = fresh_path("malformed.jsonl");
  append_text(path, sample_to_json_line(example_sample(0)) + "\n{\"format\": \"protuner-sa\n" +
                        sample_to_json_line(example_sample(1)) + "\n");
  const std::string error = config_error_of([&] { read_dataset(path); });
  EXPECT_NE(error.find(path + ":2: malformed JSON"), std::string::npos) << error;
}

TEST(DatasetFile, MalformedLastLineWithItsNewlineIsAnError) {
  const std::string path = fresh_path("malformed_last.jsonl");
  append_text(path, sample_to_json_line(example_sample(0)) + "\nnot json\n");
  const std::string error = config_error_of([&] { read_dataset(path); });
  EXPECT_NE(error.find(path + ":2:"), std::string::npos) << error;
}

TEST(DatasetFile, OtherFormatOrVersionIsRefused) {
  nlohmann::json j = nlohmann::json::parse(sample_to_json_line(example_sample(0)));
  j["version"] = kDatasetFormatVersion + 1;
  std::string error = config_error_of([&] { sample_from_json_line(j.dump()); });
  EXPECT_NE(error.find("version 2; this build reads version 1"), std::string::npos) << error;
  j["version"] = kDatasetFormatVersion;
  j["format"] = "protuner-schedule";
  error = config_error_of([&] { sample_from_json_line(j.dump()); });
  EXPECT_NE(error.find("not a protuner sample"), std::string::npos) << error;
}

TEST(DatasetFile, MissingMistypedOrUnknownFieldsAreRefused) {
  const nlohmann::json good = nlohmann::json::parse(sample_to_json_line(example_sample(0)));
  const std::vector<std::pair<std::function<void(nlohmann::json &)>, std::string>> cases = {
      {[](nlohmann::json &j) { j.erase("min_ms"); }, "missing field 'min_ms'"},
      {[](nlohmann::json &j) { j["median_ms"] = "1.5"; }, "field 'median_ms' is not a number"},
      {[](nlohmann::json &j) { j["schedule"] = "{}"; }, "field 'schedule' is not an object"},
      {[](nlohmann::json &j) { j["samples_ms"].push_back(nullptr); }, "non-number"},
      {[](nlohmann::json &j) { j["app"]["params"]["seed"] = 3; }, "param 'seed' is not a string"},
      {[](nlohmann::json &j) { j["runtime_ms"] = 1; }, "unknown field 'runtime_ms'"},
  };
  for (const auto &[mutate, expected] : cases) {
    nlohmann::json j = good;
    mutate(j);
    const std::string error = config_error_of([&] { sample_from_json_line(j.dump()); });
    EXPECT_NE(error.find(expected), std::string::npos) << expected << " in: " << error;
  }
}

TEST(DatasetFile, MergeKeepsTheFirstMeasurementOfEachScheduleAndOnlyAppends) {
  const std::string out = fresh_path("merge_out.jsonl");
  const std::string a = fresh_path("merge_a.jsonl");
  const std::string b = fresh_path("merge_b.jsonl");
  DatasetWriter(out).append(example_sample(1));
  DatasetSample remeasured = example_sample(1);  // out's schedule, measured again
  remeasured.min_ms = 0.5;
  DatasetSample other_pipeline = example_sample(1);  // the same schedule text, another pipeline
  other_pipeline.pipeline_id = "random_1_large";
  DatasetWriter wa(a);
  wa.append(remeasured);
  wa.append(example_sample(2));
  wa.append(other_pipeline);
  DatasetSample second_run = example_sample(2);
  second_run.min_ms = 9.0;
  DatasetWriter wb(b);
  wb.append(second_run);
  wb.append(example_sample(3));

  const DatasetMergeSummary summary = merge_datasets({a, b}, out);
  EXPECT_EQ(summary.appended, 3u);
  EXPECT_EQ(summary.duplicates, 2u);
  const std::vector<DatasetSample> merged = read_dataset(out);
  ASSERT_EQ(merged.size(), 4u);
  expect_same(merged[0], example_sample(1));  // out's own sample stays first, untouched
  expect_same(merged[1], example_sample(2));  // the first input's measurement, not b's
  expect_same(merged[2], other_pipeline);
  expect_same(merged[3], example_sample(3));
  EXPECT_EQ(merge_datasets({a, b}, out).appended, 0u);  // a rerun adds nothing
}

TEST(DatasetFile, MergeWithAMalformedInputWritesNothing) {
  const std::string out = fresh_path("merge_kept.jsonl");
  const std::string good = fresh_path("merge_good.jsonl");
  const std::string bad = fresh_path("merge_bad.jsonl");
  DatasetWriter(out).append(example_sample(1));
  DatasetWriter(good).append(example_sample(2));
  append_text(bad, sample_to_json_line(example_sample(3)) + "\n{not json}\n" +
                       sample_to_json_line(example_sample(4)) + "\n");
  const std::string error = config_error_of([&] { merge_datasets({good, bad}, out); });
  EXPECT_NE(error.find(bad + ":2"), std::string::npos) << error;
  const std::vector<DatasetSample> kept = read_dataset(out);
  ASSERT_EQ(kept.size(), 1u);
  expect_same(kept[0], example_sample(1));
}

TEST(DatasetFile, MissingFileIsAnIoError) {
  EXPECT_THROW(read_dataset(fresh_path("absent.jsonl")), IoError);
  EXPECT_THROW(DatasetWriter((scratch_dir() / "no_such_dir" / "x.jsonl").string()), IoError);
}

// --- The random pipeline generator ---

AppSpec random_spec(uint32_t seed, int stages = 0, bool scans = false) {
  AppSpec spec{"random_" + std::to_string(seed),
               PROTUNER_RANDOM_PIPELINE_LIBRARY,
               "random_pipeline",
               {{"seed", std::to_string(seed)}}};
  if (stages > 0) spec.params["stages"] = std::to_string(stages);
  if (scans) spec.params["scans"] = "true";
  return spec;
}

Halide::Target strict_host() { return host_target().with_feature(Halide::Target::StrictFloat); }

struct BuiltPipeline {
  PipelineGraph graph;
  std::vector<FuncSignature> signature;
};

BuiltPipeline build(uint32_t seed, bool scans = false) {
  AppInstance app = AppInstance::create(random_spec(seed, 0, scans), host_target());
  BuiltPipeline b{analyze_pipeline(app.pipeline()), {}};
  b.signature = pipeline_signature(b.graph);
  return b;
}

// The 30 seeds' pipelines, built once for the tests below.
const std::vector<BuiltPipeline> &thirty_pipelines() {
  static const std::vector<BuiltPipeline> pipelines = [] {
    std::vector<BuiltPipeline> v;
    for (uint32_t seed = 0; seed < kSeeds; ++seed) v.push_back(build(seed));
    return v;
  }();
  return pipelines;
}

// What tells two pipelines apart: Func names, types and producers, and every root region.
std::string fingerprint(const PipelineGraph &g) {
  std::string f;
  for (const FuncNode &n : g.funcs) {
    f += stable_func_name(n.name) + "(";
    for (const std::string &t : n.value_types) f += t + ",";
    for (int p : n.producers) f += std::to_string(p) + ",";
    for (const Span &s : n.root_region)
      f += std::to_string(s.min) + ":" + std::to_string(s.max) + ",";
    f += ")";
  }
  return f;
}

// The blocks of a random pipeline, "<kind>_<block>": one block may make several Funcs
// ("reduce_3_max", "reduce_3"), and Halide may suffix names ("conv_2$3").
std::set<std::string> block_names(const PipelineGraph &g) {
  std::set<std::string> blocks;
  for (const FuncNode &f : g.funcs) {
    const std::string name = stable_func_name(f.name);
    const std::string kind = rp::block_kind_of(name);
    if (!kind.empty()) blocks.insert(name.substr(0, name.find('_', kind.size() + 1)));
  }
  return blocks;
}

TEST(RandomPipeline, ThirtySeedsBuildPipelinesWithEstimates) {
  for (uint32_t seed = 0; seed < kSeeds; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    AppInstance app = AppInstance::create(random_spec(seed), host_target());
    EXPECT_NO_THROW(bind_random_inputs(app.pipeline(), 1));  // every input has estimates
    const std::vector<std::vector<int>> outputs = estimated_output_extents(app.pipeline());
    ASSERT_EQ(outputs.size(), 1u);
    for (int extent : outputs[0]) EXPECT_GT(extent, 0);
    const PipelineGraph &g = thirty_pipelines()[seed].graph;
    EXPECT_GE(g.funcs.size(), 4u);
    EXPECT_TRUE(g.funcs[0].is_output);
  }
}

TEST(RandomPipeline, SameSeedGivesTheSamePipeline) {
  for (uint32_t seed : {0u, 7u, 19u}) {
    const BuiltPipeline again = build(seed);
    EXPECT_EQ(again.signature, thirty_pipelines()[seed].signature) << "seed " << seed;
    EXPECT_EQ(fingerprint(again.graph), fingerprint(thirty_pipelines()[seed].graph));
  }
}

TEST(RandomPipeline, DifferentSeedsGiveDifferentPipelines) {
  std::set<std::string> distinct;
  for (const BuiltPipeline &b : thirty_pipelines()) distinct.insert(fingerprint(b.graph));
  EXPECT_EQ(distinct.size(), static_cast<size_t>(kSeeds));
}

// Scan blocks only with the `scans` param: every other kind shows up without it.
TEST(RandomPipeline, ThirtySeedsUseEveryBuildingBlock) {
  std::map<std::string, int> blocks;  // kind -> blocks of that kind over all seeds
  for (const BuiltPipeline &b : thirty_pipelines()) {
    for (const std::string &block : block_names(b.graph)) ++blocks[rp::block_kind_of(block)];
  }
  for (const char *kind : rp::kBlockKinds) {
    if (std::string(kind) == "scan") {
      EXPECT_EQ(blocks[kind], 0) << "scan blocks without the scans param";
    } else {
      EXPECT_GT(blocks[kind], 0) << "no '" << kind << "' block in " << kSeeds << " seeds";
    }
  }
}

// With `scans`, every pipeline has a scan block, so each seed makes another pipeline.
TEST(RandomPipeline, ScansParamPutsAScanInEveryPipeline) {
  for (uint32_t seed = 0; seed < 10; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const BuiltPipeline b = build(seed, true);
    int scans = 0;
    for (const std::string &block : block_names(b.graph)) {
      scans += rp::block_kind_of(block) == "scan";
    }
    EXPECT_GE(scans, 1);
    EXPECT_NE(fingerprint(b.graph), fingerprint(thirty_pipelines()[seed].graph));
  }
}

TEST(RandomPipeline, StagesParamSetsTheNumberOfBlocks) {
  AppInstance app = AppInstance::create(random_spec(5, 3), host_target());
  EXPECT_EQ(block_names(analyze_pipeline(app.pipeline())).size(), 3u);
}

Halide::Buffer<> run_with(AppInstance &app) {
  Halide::Pipeline &p = app.pipeline();
  bind_random_inputs(p, 5);
  Halide::Realization out = allocate_estimated_outputs(p);
  p.realize(out, strict_host());
  return out[0];
}

Halide::Buffer<> run_root(uint32_t seed, bool scans = false) {
  AppInstance app = AppInstance::create(random_spec(seed, 0, scans), strict_host());
  apply_root_schedule(app.pipeline());
  return run_with(app);
}

// One schedule of each of three four-block pipelines: a random schedule takes 5-50 s to
// compile (unrolled, vectorized stencils and reductions), so more would make a slow test.
// Three-level splits go inner tile first: split outer first, tiled lookup tables store
// past their buffers (see split_directives) and crash the test only now and then; the
// guard zones make such a store fail the test on every run.
// The fourth, with scans: a scan's updates (an RVar in place of x or y) split, reordered
// and parallelized by the space.
TEST(RandomPipeline, RandomSchedulesComputeTheRootSchedulesBits) {
  const SearchSpace space(SearchSpaceOptions::for_target(strict_host()));
  for (auto [seed, scans] : {std::pair{2u, false}, {10u, false}, {24u, false}, {1u, true}}) {
    SCOPED_TRACE("seed " + std::to_string(seed) + (scans ? " with scans" : ""));
    AppInstance root = AppInstance::create(random_spec(seed, 4, scans), strict_host());
    auto graph = std::make_shared<const PipelineGraph>(analyze_pipeline(root.pipeline()));
    apply_root_schedule(root.pipeline());
    const Halide::Buffer<> expected = run_with(root);
    std::mt19937_64 rng(seed);
    ScheduleState state(graph);
    ASSERT_TRUE(space.random_rollout(state, rng));
    AppInstance app = AppInstance::create(random_spec(seed, 4, scans), strict_host());
    apply_schedule(state, app.pipeline());
    testing::GuardedAllocations::install(app.pipeline());
    EXPECT_EQ(first_bitwise_difference(expected, run_with(app)), std::nullopt)
        << schedule_source(state, "failing");
    EXPECT_EQ(testing::GuardedAllocations::take_overrun(), "") << schedule_source(state, "failing");
  }
}

TEST(RandomPipeline, ExpertScheduleComputesTheRootSchedulesBits) {
  // Seed 3: convolutions, a matmul, pooling, a reduce; seed 12: a conv, LUTs, a matmul.
  // Seed 5 with scans: the expert schedule keeps to the pure variables a scan's update has.
  for (auto [seed, scans] : {std::pair{3u, false}, {12u, false}, {5u, true}}) {
    AppInstance app =
        AppInstance::create(random_spec(seed, 0, scans), strict_host(), GeneratorSchedule::kOwn);
    EXPECT_EQ(first_bitwise_difference(run_root(seed, scans), run_with(app)), std::nullopt)
        << "seed " << seed << (scans ? " with scans" : "");
  }
}

// --- Building a dataset ---

// Answers without running anything: ok with fixed timings, or wrong_output for every
// `fail_every`-th request.
class FakeMeasurer : public MeasurementBackend {
 public:
  explicit FakeMeasurer(int fail_every) : fail_every_(fail_every) {}
  MeasureResult measure(const MeasureRequest &request) override {
    ++calls;
    MeasureResult r;
    EXPECT_EQ(request.schedule.kind, ScheduleKind::kProtuner);
    if (fail_every_ > 0 && calls % fail_every_ == 0) {
      r.status = MeasureStatus::kWrongOutput;
      r.error = "differs at (0, 0, 0)";
      return r;
    }
    r.status = MeasureStatus::kOk;
    r.timing.samples_ms = {min_ms + 1, min_ms, min_ms + 2};
    r.timing.min_ms = min_ms;
    r.timing.median_ms = min_ms + 1;
    r.host.cpu_model = "Fake CPU";
    r.host.smt = "off";
    r.cpus = {0, 1};
    return r;
  }
  int calls = 0;
  double min_ms = 1.0;  // of every ok result

 private:
  int fail_every_;
};

DatasetBuildOptions small_build(const std::string &out) {
  DatasetBuildOptions o;
  o.out = out;
  o.pipelines = 2;
  o.first_seed = 4;
  o.schedules_per_pipeline = 3;
  o.random_library = PROTUNER_RANDOM_PIPELINE_LIBRARY;
  return o;
}

TEST(DatasetBuild, StoresOnlyOkResultsAndResumesWithoutMeasuringTwice) {
  const DatasetBuildOptions options = small_build(fresh_path("fake.jsonl"));
  std::ostringstream progress;
  FakeMeasurer failing_every_third(3);
  const DatasetBuildSummary first = build_dataset(options, failing_every_third, progress);
  EXPECT_EQ(failing_every_third.calls, 6);
  EXPECT_EQ(first.stored, 4);
  EXPECT_EQ(first.failed, 2);
  const std::vector<DatasetSample> samples = read_dataset(options.out);
  ASSERT_EQ(samples.size(), 4u);
  for (const DatasetSample &s : samples) {
    EXPECT_TRUE(s.pipeline_id == "random_4" || s.pipeline_id == "random_5") << s.pipeline_id;
    EXPECT_EQ(s.app.params.at("seed"), s.pipeline_id.substr(7));
    EXPECT_EQ(s.host_class.rfind("Fake CPU x2, ", 0), 0u) << s.host_class;
    EXPECT_EQ(s.stddev_ms, 1.0);
  }
  // Each failed schedule is kept, as schedule JSON, to reproduce the failure with.
  std::vector<fs::path> kept;
  for (const auto &entry : fs::directory_iterator(options.out + ".failed")) {
    kept.push_back(entry.path());
  }
  ASSERT_EQ(kept.size(), 2u);
  for (const auto &path : kept) {
    EXPECT_TRUE(path.filename().string().rfind("random_", 0) == 0) << path;
    std::ifstream in(path);
    const nlohmann::json schedule = nlohmann::json::parse(in);
    EXPECT_TRUE(schedule.is_object()) << path;
    for (const DatasetSample &s : samples) {
      EXPECT_NE(nlohmann::json::parse(s.schedule_json), schedule) << path;
    }
  }

  FakeMeasurer all_ok(0);  // the rerun measures only what failed
  const DatasetBuildSummary second = build_dataset(options, all_ok, progress);
  EXPECT_EQ(all_ok.calls, 2);
  EXPECT_EQ(second.skipped, 4);
  EXPECT_EQ(read_dataset(options.out).size(), 6u);
  // Both measured fine this time: their failure files are gone.
  for (const auto &path : kept) EXPECT_FALSE(fs::exists(path)) << path;

  FakeMeasurer untouched(0);
  EXPECT_EQ(build_dataset(options, untouched, progress).skipped, 6);
  EXPECT_EQ(untouched.calls, 0);
}

// A stored sample's schedule is a complete schedule of the pipeline its app spec builds.
void expect_schedule_applies_to_its_pipeline(const DatasetSample &s) {
  AppSpec spec = s.app;
  spec.library = PROTUNER_RANDOM_PIPELINE_LIBRARY;
  AppInstance app = AppInstance::create(spec, host_target());
  auto graph = std::make_shared<const PipelineGraph>(analyze_pipeline(app.pipeline()));
  EXPECT_TRUE(schedule_from_json(s.schedule_json, graph).complete()) << s.pipeline_id;
}

TEST(DatasetBuild, StoredSchedulesApplyToTheirPipeline) {
  const DatasetBuildOptions options = small_build(fresh_path("apply.jsonl"));
  std::ostringstream progress;
  FakeMeasurer ok(0);
  build_dataset(options, ok, progress);
  for (const DatasetSample &s : read_dataset(options.out)) {
    expect_schedule_applies_to_its_pipeline(s);
  }
}

// With scans the same seeds make other pipelines: other ids, the param stored with them,
// so a sample rebuilds the pipeline it was measured on.
TEST(DatasetBuild, ScanPipelinesHaveTheirOwnIdsAndParam) {
  DatasetBuildOptions options = small_build(fresh_path("scans.jsonl"));
  options.scans = true;
  std::ostringstream progress;
  FakeMeasurer ok(0);
  EXPECT_EQ(build_dataset(options, ok, progress).stored, 6);
  for (const DatasetSample &s : read_dataset(options.out)) {
    EXPECT_TRUE(s.pipeline_id == "random_scans_4" || s.pipeline_id == "random_scans_5")
        << s.pipeline_id;
    EXPECT_EQ(s.app.params.at("scans"), "true");
    expect_schedule_applies_to_its_pipeline(s);
  }
}

TEST(DatasetBuild, StatsCountPipelinesAndRuntimes) {
  std::vector<DatasetSample> samples = {example_sample(1), example_sample(1), example_sample(2)};
  samples[1].min_ms = 9.0;
  const DatasetStats stats = dataset_stats(samples);
  EXPECT_EQ(stats.samples, 3);
  ASSERT_EQ(stats.pipelines.size(), 2u);
  EXPECT_EQ(stats.pipelines[0].samples, 2);
  EXPECT_EQ(stats.pipelines[0].fastest_ms, 2.25);
  EXPECT_EQ(stats.pipelines[0].slowest_ms, 9.0);
  EXPECT_EQ(stats.fastest_ms, 2.25);
  EXPECT_EQ(stats.slowest_ms, 9.0);
}

// The command line, measuring for real: 2 pipelines x 2 schedules, then a rerun.
TEST(DatasetBuild, CommandLineWritesValidLinesAndARerunAddsNothing) {
  const std::string out = fresh_path("cli.jsonl");
  const std::string command = std::string(PROTUNER_CLI) +
                              " dataset build --pipelines 2 --schedules-per-pipeline 2"
                              " --samples 2 --out " +
                              out + " --cache-dir " + (scratch_dir() / "cache").string();
  const testing::CommandResult first = testing::run_command(command);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(first.output, m, std::regex(R"(stored (\d+), skipped 0 .*failed (\d+))")))
      << first.output;
  const int stored = std::stoi(m[1]), failed = std::stoi(m[2]);
  EXPECT_EQ(stored + failed, 4) << first.output;
  const std::vector<DatasetSample> samples = read_dataset(out);
  EXPECT_EQ(static_cast<int>(samples.size()), stored);
  for (const DatasetSample &s : samples) {
    EXPECT_TRUE(s.pipeline_id == "random_0" || s.pipeline_id == "random_1") << s.pipeline_id;
    EXPECT_EQ(s.samples_ms.size(), 2u);
    EXPECT_GT(s.min_ms, 0);
    EXPECT_LE(s.min_ms, s.median_ms);
  }

  const testing::CommandResult rerun = testing::run_command(command);
  ASSERT_EQ(rerun.exit_code, 0) << rerun.output;
  EXPECT_NE(rerun.output.find("stored 0, skipped " + std::to_string(stored)), std::string::npos)
      << rerun.output;
  EXPECT_EQ(read_dataset(out).size(), samples.size());

  const testing::CommandResult stats =
      testing::run_command(std::string(PROTUNER_CLI) + " dataset stats " + out);
  EXPECT_EQ(stats.exit_code, 0) << stats.output;
  EXPECT_NE(stats.output.find(std::to_string(stored) + " samples of "), std::string::npos)
      << stats.output;
}

// --- Measuring a dataset again, and comparing two measurements ---

DatasetRemeasureOptions remeasure_of(const std::string &data, const std::string &out) {
  DatasetRemeasureOptions o;
  o.data = data;
  o.out = out;
  return o;
}

// A dataset of 2 random pipelines x 3 schedules, measured by a fake at 1 ms each.
std::string six_sample_dataset(const std::string &name) {
  const DatasetBuildOptions options = small_build(fresh_path(name));
  std::ostringstream progress;
  FakeMeasurer ok(0);
  EXPECT_EQ(build_dataset(options, ok, progress).stored, 6);
  return options.out;
}

TEST(DatasetRemeasure, MeasuresEveryStoredScheduleAgainAndResumes) {
  const std::string data = six_sample_dataset("remeasure_in.jsonl");
  const DatasetRemeasureOptions options = remeasure_of(data, fresh_path("remeasure_out.jsonl"));
  std::ostringstream progress;
  FakeMeasurer five_ms(0);
  five_ms.min_ms = 5.0;
  const DatasetRemeasureSummary first = remeasure_dataset(options, five_ms, progress);
  EXPECT_EQ(five_ms.calls, 6);
  EXPECT_EQ(first.stored, 6);
  const std::vector<DatasetSample> before = read_dataset(data), after = read_dataset(options.out);
  ASSERT_EQ(after.size(), before.size());
  for (size_t i = 0; i < after.size(); ++i) {  // the same schedules, in the file's order
    EXPECT_EQ(after[i].pipeline_id, before[i].pipeline_id);
    EXPECT_EQ(after[i].app.params, before[i].app.params);
    EXPECT_EQ(canonical(after[i].schedule_json), canonical(before[i].schedule_json));
    EXPECT_EQ(after[i].min_ms, 5.0);  // this run's measurement, not the stored one
    EXPECT_EQ(before[i].min_ms, 1.0);
  }
  EXPECT_NE(progress.str().find("ok 5.000 ms (stored 1.000 ms)"), std::string::npos)
      << progress.str();

  FakeMeasurer untouched(0);
  const DatasetRemeasureSummary rerun = remeasure_dataset(options, untouched, progress);
  EXPECT_EQ(untouched.calls, 0);
  EXPECT_EQ(rerun.skipped, 6);
  EXPECT_EQ(read_dataset(options.out).size(), 6u);

  DatasetRemeasureOptions one = remeasure_of(data, fresh_path("remeasure_one.jsonl"));
  one.pipelines = {"random_5"};
  FakeMeasurer ok(0);
  EXPECT_EQ(remeasure_dataset(one, ok, progress).stored, 3);
  for (const DatasetSample &s : read_dataset(one.out)) EXPECT_EQ(s.pipeline_id, "random_5");
}

TEST(DatasetRemeasure, FailedMeasurementsAreKeptApartNotStored) {
  const std::string data = six_sample_dataset("remeasure_fail_in.jsonl");
  const DatasetRemeasureOptions options = remeasure_of(data, fresh_path("remeasure_fail.jsonl"));
  std::ostringstream progress;
  FakeMeasurer failing_every_second(2);
  const DatasetRemeasureSummary s = remeasure_dataset(options, failing_every_second, progress);
  EXPECT_EQ(s.stored, 3);
  EXPECT_EQ(s.failed, 3);
  EXPECT_EQ(read_dataset(options.out).size(), 3u);
  size_t kept = 0;
  for ([[maybe_unused]] const auto &entry : fs::directory_iterator(options.out + ".failed")) ++kept;
  EXPECT_EQ(kept, 3u);
}

TEST(DatasetRemeasure, UnknownPipelineOrMissingLibraryIsRefusedBeforeMeasuring) {
  const std::string data = six_sample_dataset("remeasure_bad_in.jsonl");
  DatasetRemeasureOptions options = remeasure_of(data, fresh_path("remeasure_bad.jsonl"));
  options.pipelines = {"random_5", "random_9"};
  std::ostringstream progress;
  FakeMeasurer never(0);
  std::string error = config_error_of([&] { remeasure_dataset(options, never, progress); });
  EXPECT_NE(error.find(data + ": no samples of pipeline 'random_9'"), std::string::npos) << error;

  const std::string missing = fresh_path("remeasure_missing_library.jsonl");
  DatasetSample sample = read_dataset(data).at(0);
  sample.app.library = "libprotuner_no_such_library.so";
  DatasetWriter(missing).append(sample);
  error = config_error_of(
      [&] { remeasure_dataset(remeasure_of(missing, options.out), never, progress); });
  EXPECT_NE(error.find(missing + ": sample 1 (pipeline 'random_4')"), std::string::npos) << error;
  EXPECT_NE(error.find("libprotuner_no_such_library.so"), std::string::npos) << error;
  EXPECT_EQ(never.calls, 0);
  EXPECT_FALSE(fs::exists(options.out));
}

// Schedule `k` of pipeline `id`, measured at `ms`; `reordered` writes its JSON with the
// keys in another order (the same schedule).
DatasetSample measured(const std::string &id, int k, double ms, bool reordered = false) {
  DatasetSample s = example_sample(0);
  s.pipeline_id = id;
  const std::string decisions = "[" + std::to_string(k) + "]";
  s.schedule_json =
      reordered ? R"({"decisions":)" + decisions +
                      R"(,"version":1,"pipeline":[],"format":"protuner-schedule"})"
                : R"({"format":"protuner-schedule","version":1,"pipeline":[],"decisions":)" +
                      decisions + "}";
  s.samples_ms = {ms};
  s.min_ms = s.median_ms = ms;
  return s;
}

TEST(DatasetAgreement, SharesOfPairsBothMeasurementsOrderTheSame) {
  const std::vector<DatasetSample> first = {
      measured("p", 0, 1), measured("p", 1, 2), measured("p", 2, 3),   // p: 3 pairs
      measured("q", 0, 1), measured("q", 1, 1),                        // a tie: no pair
      measured("w", 0, 1), measured("w", 1, 2), measured("r", 0, 1)};  // not measured again
  const std::vector<DatasetSample> second = {
      measured("p", 2, 2, true), measured("p", 1, 3), measured("p", 0, 1),  // 1 and 2 swap
      measured("q", 0, 1),       measured("q", 1, 2), measured("w", 0, 2),
      measured("w", 1, 2),  // tied again: one half
      measured("s", 0, 1)};
  const DatasetAgreement a = dataset_agreement(first, second);
  ASSERT_EQ(a.pipelines.size(), 2u);
  EXPECT_EQ(a.pipelines[0].pipeline_id, "p");
  EXPECT_EQ(a.pipelines[0].schedules, 3u);
  EXPECT_EQ(a.pipelines[0].pairs, 3u);
  EXPECT_DOUBLE_EQ(a.pipelines[0].agreement, 2.0 / 3);
  EXPECT_EQ(a.pipelines[1].pipeline_id, "w");
  EXPECT_DOUBLE_EQ(a.pipelines[1].agreement, 0.5);
  EXPECT_EQ(a.pairs, 4u);
  EXPECT_DOUBLE_EQ(a.agreement, 2.5 / 4);
  EXPECT_EQ(a.only_in_first, 1u);
  EXPECT_EQ(a.only_in_second, 1u);

  // The command line prints the same.
  const std::string first_file = fresh_path("agreement_first.jsonl");
  const std::string second_file = fresh_path("agreement_second.jsonl");
  for (const DatasetSample &s : first) DatasetWriter(first_file).append(s);
  for (const DatasetSample &s : second) DatasetWriter(second_file).append(s);
  const testing::CommandResult cli = testing::run_command(
      std::string(PROTUNER_CLI) + " dataset agreement " + first_file + " " + second_file);
  ASSERT_EQ(cli.exit_code, 0) << cli.output;
  EXPECT_TRUE(std::regex_search(cli.output, std::regex(R"(overall\s+4\s+62\.5)"))) << cli.output;
  EXPECT_NE(cli.output.find("1 only in the first, 1 only in the second"), std::string::npos)
      << cli.output;
}

}  // namespace
}  // namespace protuner
