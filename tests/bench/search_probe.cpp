// What the searches find for one suite app by the cost model alone, and what the model
// predicts for schedules given as files (say, an expert schedule written as schedule JSON):
// when a search loses to an expert schedule, this tells whether the model ranks the expert
// schedule worse (a model problem) or the search never reached it (a search problem).
// Prints one row per search, per seed schedule tuning starts from (the compute-root
// fallback, the strip, root-strip, register-blocked, block-in-tile and sliced seeds) and per file,
// and writes the searches' and seeds' schedules to --out so `protuner measure --schedule` can time
// them.
//
// Usage: search_probe APP [--algorithms beam,greedy,mcts_1s] [--seconds 20] [--seed 1]
//                         [--iterations N] [--out DIR] [--schedule FILE]... [--features NAME,...]
//                         [--machine host|reference] [--assembly DIR] [--library LIB]
// --iterations runs each search in its deterministic mode (SearchBudget::iterations, no
// deadline) instead of for --seconds: with the same --seed, two builds that behave the same
// print the same table and write the same schedules (how a refactor is checked).
// --features prints, per file, those scheduled features (featurizer.h names) of each stage:
// where the model's time for a stage comes from, to set beside a profile of the schedule.
// --machine reference models the machine class the training data was measured on
// (MachineModel's defaults, as `protuner evaluate` does) instead of this host.
// --assembly writes, per file, the code Halide compiles the schedule to (DIR/NAME.s, for the
// host target) and the statement it lowers it to (DIR/NAME.stmt): whether an accumulator
// stays in registers, or a gather is one instruction, is read there, not guessed from
// runtimes.
// APP is a suite app name (library libprotuner_app_APP.so in the build's lib/), or a generator
// name in the library --library names (a user's or the corpus' generators).
#include <Halide.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <utility>

#include "common/app.h"
#include "common/host_target.h"
#include "common/schedule/apply_schedule.h"
#include "common/schedule/schedule_json.h"
#include "coordinator/text_table.h"
#include "searcher/cost/analytic_model.h"
#include "searcher/search/search_registry.h"
#include "searcher/seeds/blocked_schedule.h"
#include "searcher/seeds/fallback_schedule.h"
#include "searcher/seeds/sliced_schedule.h"
#include "searcher/seeds/strip_schedule.h"
#include "searcher/space/search_space.h"

namespace {

using namespace protuner;

std::vector<std::string> split(const std::string &s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

std::string read_file(const std::string &path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::cerr
        << "usage: search_probe APP [--algorithms a,b] [--seconds S] [--seed N] [--iterations N] "
           "[--out DIR] [--schedule FILE]... [--features NAMES] [--machine host|reference] "
           "[--assembly DIR] "
           "[--library LIB]\n";
    return 2;
  }
  const std::string app = argv[1];
  std::vector<std::string> algorithms = {"beam", "greedy", "mcts_1s"};
  std::vector<std::string> files, feature_names;
  double seconds = 20;
  uint64_t seed = 1;
  std::optional<int64_t> iterations;
  bool reference_machine = false;
  std::string out_dir = "search-probe-out";
  std::string assembly_dir;
  std::string library = std::string(PROTUNER_APP_LIBRARY_DIR) + "/libprotuner_app_" + app + ".so";
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--algorithms") {
      algorithms = split(value);
    } else if (flag == "--seconds") {
      seconds = std::stod(value);
    } else if (flag == "--seed") {
      seed = std::stoull(value);
    } else if (flag == "--iterations") {
      iterations = std::stoll(value);
    } else if (flag == "--out") {
      out_dir = value;
    } else if (flag == "--schedule") {
      files.push_back(value);
    } else if (flag == "--library") {
      library = value;
    } else if (flag == "--assembly") {
      assembly_dir = value;
    } else if (flag == "--features") {
      feature_names = split(value);
    } else if (flag == "--machine") {
      if (value != "host" && value != "reference") {
        std::cerr << "--machine takes host or reference, not " << value << "\n";
        return 2;
      }
      reference_machine = value == "reference";
    } else {
      std::cerr << "unknown flag " << flag << "\n";
      return 2;
    }
  }
  try {
    const Halide::Target target = host_target();
    AppInstance instance = AppInstance::create(AppSpec{app, library, app, {}}, target);
    auto graph = std::make_shared<const PipelineGraph>(analyze_pipeline(instance.pipeline()));
    const SearchSpace space(SearchSpaceOptions::for_target(target));
    const MachineModel machine = reference_machine ? MachineModel{} : MachineModel::from_host();
    AnalyticModel model(graph, machine);
    std::filesystem::create_directories(out_dir);

    std::cout << app << ": Funcs in decision order:";
    for (size_t f = 0; f < graph->funcs.size(); ++f) {
      std::cout << " " << f << "=" << stable_func_name(graph->funcs[f].name);
    }
    std::cout << "\n\n";
    TextTable table({"schedule", "predicted ms", "evaluations", "search s", "written to"});
    for (const std::string &name : algorithms) {
      SearchContext ctx;
      ctx.graph = graph;
      ctx.space = &space;
      ctx.cost_model = [graph, machine] { return std::make_unique<AnalyticModel>(graph, machine); };
      ctx.seed = seed;
      SearchBudget budget;
      const auto start = std::chrono::steady_clock::now();
      if (iterations) {
        budget.iterations = iterations;
      } else {
        budget.deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                      std::chrono::duration<double>(seconds));
      }
      const SearchResult r = make_search(name)->run(ctx, budget);
      const double took =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const std::string path = out_dir + "/" + app + "_" + name + ".json";
      std::ofstream(path) << schedule_to_json(r.best) << "\n";
      table.add_row({name, format_fixed(1000 * model.predict({&r.best})[0], 3),
                     std::to_string(r.evaluations), format_fixed(took, 1), path});
    }
    // The seeds tuning measures before searching (seed_schedules.h).
    std::vector<ScheduleState> seeds = {fallback_schedule(graph, space.options())};
    std::vector<std::string> names = {"fallback"};
    using Family = std::vector<ScheduleState> (*)(std::shared_ptr<const PipelineGraph>,
                                                  const SearchSpaceOptions &);
    const std::pair<const char *, Family> families[] = {{"strips_", &strip_schedules},
                                                        {"root_strips_", &root_strip_schedules},
                                                        {"blocked_", &blocked_schedules},
                                                        {"in_tile_", &blocked_in_tile_schedules},
                                                        {"sliced_", &sliced_reduction_schedules}};
    for (const auto &[prefix, family] : families) {
      for (ScheduleState &s : family(graph, space.options())) {
        seeds.push_back(std::move(s));
        names.push_back(prefix + std::to_string(names.size()));
      }
    }
    for (size_t k = 0; k < seeds.size(); ++k) {
      const std::string &name = names[k];
      const std::string path = out_dir + "/" + app + "_" + name + ".json";
      std::ofstream(path) << schedule_to_json(seeds[k]) << "\n";
      table.add_row({name, format_fixed(1000 * model.predict({&seeds[k]})[0], 3), "-", "-", path});
    }
    for (const std::string &file : files) {
      const ScheduleState state = schedule_from_json(read_file(file), graph);
      table.add_row({file, format_fixed(1000 * model.predict({&state})[0], 3), "-", "-", "-"});
    }
    table.print(std::cout);
    // Per stage, what the model predicts of each file's schedule (microseconds).
    if (!files.empty()) {
      std::vector<std::string> header = {"stage"};
      std::vector<std::vector<double>> costs;
      std::vector<PipelineFeatures> features;
      for (const std::string &file : files) {
        header.push_back(std::filesystem::path(file).filename().string() + " us");
        features.push_back(
            model.featurizer().featurize(schedule_from_json(read_file(file), graph)));
        costs.push_back(model.stage_costs(features.back()));
      }
      TextTable stages(header);
      for (size_t n = 0; n < features[0].stages.size(); ++n) {
        const StageFeatures &sf = features[0].stages[n];
        std::vector<std::string> row = {stable_func_name(graph->funcs[sf.func].name) + "." +
                                        std::to_string(sf.stage)};
        for (const auto &c : costs) row.push_back(format_fixed(1e6 * c[n], 1));
        stages.add_row(row);
      }
      std::cout << "\n";
      stages.print(std::cout);
      // The chosen features of each stage, per file.
      std::vector<ScheduledFeature> chosen;
      for (const std::string &name : feature_names) {
        int k = 0;
        while (k < kNumScheduledFeatures &&
               name != feature_info(static_cast<ScheduledFeature>(k)).name) {
          ++k;
        }
        if (k == kNumScheduledFeatures) throw std::runtime_error("no scheduled feature " + name);
        chosen.push_back(static_cast<ScheduledFeature>(k));
      }
      for (size_t i = 0; i < files.size() && !chosen.empty(); ++i) {
        std::vector<std::string> columns = {"stage"};
        columns.insert(columns.end(), feature_names.begin(), feature_names.end());
        TextTable table_of_features(columns);
        for (const StageFeatures &sf : features[i].stages) {
          std::vector<std::string> row = {stable_func_name(graph->funcs[sf.func].name) + "." +
                                          std::to_string(sf.stage)};
          for (ScheduledFeature f : chosen) row.push_back(format_fixed(sf[f], 3));
          table_of_features.add_row(row);
        }
        std::cout << "\n" << files[i] << ":\n";
        table_of_features.print(std::cout);
      }
    }
    // The loop nest Halide makes of each file's schedule, on stderr as Halide prints it, and
    // the schedule's Halide source (to set beside an autoscheduler's); after them the app's
    // own expert schedule's loop nest.
    for (const std::string &file : files) {
      AppInstance fresh = AppInstance::create(instance.spec(), target);
      apply_schedule(schedule_from_json(read_file(file), graph), fresh.pipeline());
      std::cerr << "\n" << file << ":\n";
      fresh.pipeline().outputs()[0].print_loop_nest();
      std::cerr << "\n"
                << file << " as Halide source:\n"
                << schedule_source(schedule_from_json(read_file(file), graph), app) << "\n";
      if (!assembly_dir.empty()) {
        std::filesystem::create_directories(assembly_dir);
        const std::string base =
            (std::filesystem::path(assembly_dir) / std::filesystem::path(file).stem()).string();
        Halide::Pipeline &p = fresh.pipeline();
        // One lowering writes both.
        p.compile_to({{Halide::OutputFileType::assembly, base + ".s"},
                      {Halide::OutputFileType::stmt, base + ".stmt"}},
                     p.infer_arguments(), app, target);
        std::cerr << file << " compiled to " << base << ".s and .stmt\n";
      }
    }
    if (!files.empty()) {
      AppInstance own = AppInstance::create(instance.spec(), target, GeneratorSchedule::kOwn);
      std::cerr << "\nown schedule:\n";
      own.pipeline().outputs()[0].print_loop_nest();
    }
  } catch (const std::exception &e) {
    std::cerr << "search_probe: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
