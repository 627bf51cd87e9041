#include "coordinator/train_command.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include "common/errors.h"
#include "coordinator/text_table.h"
#include "searcher/cost/analytic_calibration.h"
#include "searcher/cost/analytic_model.h"
#include "searcher/cost/learned/dataset_loader.h"
#include "searcher/cost/learned/trainer.h"

namespace protuner {

struct LearnedCommands::Args {
  std::vector<std::string> data;
  std::string model = "gcn", out, weights;
  std::vector<std::string> train_data;  // evaluate --leave-one-out-apps: always trained on
  TrainerOptions trainer;
  LearnedModelOptions model_options;
  double test_pipelines = 0;  // train: share of whole pipelines never trained on, then tested
  bool json = false, leave_one_out = false;
  std::string predictions;  // evaluate: per-sample CSV
  size_t calibrate_on = 0;  // evaluate --model analytic: samples per pipeline calibrated on
};

namespace {

std::vector<TrainingSample> load_data(const std::vector<std::string> &paths) {
  std::cerr << "protuner: reading and featurizing " << paths.size() << " dataset file(s)..."
            << std::endl;
  std::vector<TrainingSample> samples = load_training_samples(paths);
  if (samples.empty()) throw ConfigError("the dataset has no samples");
  return samples;
}

std::set<std::string> apps_of(const std::vector<TrainingSample> &samples) {
  std::set<std::string> apps;
  for (const TrainingSample &s : samples) apps.insert(s.app);
  return apps;
}

// train_model's std::invalid_argument is a bad dataset or option from the user's view.
LearnedNetwork train_or_refuse(LearnedModelKind kind, const LearnedModelOptions &model,
                               const std::vector<TrainingSample> &samples, const TrainerOptions &o,
                               TrainingReport *report) {
  try {
    return train_model(kind, model, samples, o, report);
  } catch (const std::invalid_argument &e) {
    throw ConfigError(std::string("cannot train: ") + e.what());
  }
}

std::string percent(double v) { return std::isnan(v) ? "-" : format_fixed(100 * v, 1); }
std::string plain(double v) { return std::isnan(v) ? "-" : format_fixed(v, 3); }

void print_table(const EvaluationReport &r, std::ostream &out) {
  TextTable table({"app", "samples", "pairs", "MAPE %", "max error %", "R^2 (log)", "ranking %"});
  auto row = [&table](const std::string &name, const EvaluationMetrics &m) {
    table.add_row({name, std::to_string(m.samples), std::to_string(m.pairs), percent(m.mape),
                   percent(m.max_error), plain(m.r2), percent(m.ranking_accuracy)});
  };
  for (const auto &[app, m] : r.per_app) row(app, m);
  row("overall", r.overall);
  table.print(out);
}

nlohmann::json number(double v) { return std::isnan(v) ? nlohmann::json() : nlohmann::json(v); }

nlohmann::json metrics_json(const EvaluationMetrics &m) {
  return {{"samples", m.samples},   {"pairs", m.pairs},
          {"mape", number(m.mape)}, {"max_error", number(m.max_error)},
          {"r2_log", number(m.r2)}, {"ranking_accuracy", number(m.ranking_accuracy)}};
}

// The analytic model's predictions (it needs no weights): the baseline every learned
// model must beat on the same samples.
std::vector<double> analytic_predictions(const std::vector<TrainingSample> &samples) {
  const MachineModel machine;  // the one the loader featurized for
  std::vector<double> predicted;
  predicted.reserve(samples.size());
  for (const TrainingSample &s : samples) {
    double total = 0;
    for (double c : analytic_stage_costs(s.features, machine)) total += c;
    predicted.push_back(total);
  }
  return predicted;
}

EvaluationReport evaluate_analytic(const std::vector<TrainingSample> &samples) {
  return evaluate_predictions(analytic_predictions(samples), samples);
}

// One row per sample, for finding the schedules a model gets wrong: the record number is
// the sample's place among the records (non-blank lines) of the dataset files, from 0.
void write_predictions(const std::string &path, const std::vector<double> &predicted,
                       const std::vector<TrainingSample> &samples) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) throw IoError("--predictions '" + path + "': cannot create the file");
  out << "record,app,pipeline_id,measured_ms,predicted_ms\n";
  for (size_t i = 0; i < samples.size(); ++i) {
    out << samples[i].record << ',' << samples[i].app << ',' << samples[i].pipeline_id << ','
        << format_fixed(samples[i].runtime_s * 1e3, 6) << ',' << format_fixed(predicted[i] * 1e3, 6)
        << '\n';
  }
  out.flush();
  if (!out) throw IoError("--predictions '" + path + "': writing failed");
}

// evaluate --model analytic --calibrate-on N: per pipeline, the analytic model's term
// weights fitted to its first N samples in record order (the order tune measured them
// in, as tune fits them: analytic_calibration.h), and its other samples predicted by the
// model with and without them.
struct CalibratedEvaluation {
  std::vector<TrainingSample> held_out;
  std::vector<double> uncalibrated, calibrated;
};

CalibratedEvaluation calibrated_predictions(const std::vector<TrainingSample> &samples,
                                            size_t calibrate_on) {
  const MachineModel machine;  // the one the loader featurized for
  std::map<std::string, std::vector<CalibrationSample>> fitted;
  std::vector<std::pair<size_t, AnalyticTerms>> rest;  // sample index, its terms
  for (size_t i = 0; i < samples.size(); ++i) {
    const AnalyticTerms terms = analytic_terms(samples[i].features, machine);
    std::vector<CalibrationSample> &mine = fitted[samples[i].pipeline_id];
    if (mine.size() < calibrate_on) {
      mine.push_back({terms, samples[i].runtime_s});
    } else {
      rest.emplace_back(i, terms);
    }
  }
  std::map<std::string, AnalyticTerms> weights;
  for (const auto &[id, fit] : fitted) weights[id] = fit_term_weights(fit);
  CalibratedEvaluation out;
  const AnalyticTerms unit = unit_term_weights();
  for (const auto &[i, terms] : rest) {
    out.held_out.push_back(samples[i]);
    out.uncalibrated.push_back(weighed_seconds(terms, unit));
    out.calibrated.push_back(weighed_seconds(terms, weights.at(samples[i].pipeline_id)));
  }
  if (out.held_out.empty()) {
    throw ConfigError("--calibrate-on " + std::to_string(calibrate_on) +
                      " leaves no sample to evaluate: every pipeline has at most that many");
  }
  return out;
}

nlohmann::json report_json(const EvaluationReport &report) {
  nlohmann::json apps = nlohmann::json::object();
  for (const auto &[app, m] : report.per_app) apps[app] = metrics_json(m);
  return {{"apps", apps}, {"overall", metrics_json(report.overall)}};
}

int run_calibrated_evaluation(const LearnedCommands::Args &a) {
  const std::vector<TrainingSample> samples = load_data(a.data);
  const CalibratedEvaluation e = calibrated_predictions(samples, a.calibrate_on);
  if (!a.predictions.empty()) write_predictions(a.predictions, e.calibrated, e.held_out);
  const EvaluationReport calibrated = evaluate_predictions(e.calibrated, e.held_out);
  const EvaluationReport uncalibrated = evaluate_predictions(e.uncalibrated, e.held_out);
  if (a.json) {
    nlohmann::json j = report_json(calibrated);
    j["weights"] = nullptr;
    j["model"] = "analytic";
    j["mode"] = "calibrated";
    j["calibrate_on"] = a.calibrate_on;
    j["uncalibrated"] = report_json(uncalibrated);
    std::cout << j.dump() << "\n";
    return 0;
  }
  std::cout << "protuner evaluate: analytic model, its term weights fitted per pipeline to the "
               "first "
            << a.calibrate_on << " samples; the other " << e.held_out.size()
            << " samples predicted\n\nUncalibrated:\n";
  print_table(uncalibrated, std::cout);
  std::cout << "\nCalibrated:\n";
  print_table(calibrated, std::cout);
  return 0;
}

int run_train(const LearnedCommands::Args &a) {
  const LearnedModelKind kind = parse_model_kind(a.model);
  const std::vector<TrainingSample> all = load_data(a.data);
  auto [samples, test] = split_pipelines(all, a.test_pipelines, a.trainer.seed);
  if (samples.empty()) throw ConfigError("--test-pipelines left no pipeline to train on");
  std::cout << "protuner train: " << model_kind_name(kind) << " model (loss "
            << relative_error_name(a.trainer.relative_error.value_or(default_relative_error(kind)))
            << (a.trainer.ranking_weight > 0
                    ? " + " + plain(a.trainer.ranking_weight) + " x pairwise ranking"
                    : std::string())
            << (a.trainer.correction_penalty > 0
                    ? " + " + plain(a.trainer.correction_penalty) + " x squared correction"
                    : std::string())
            << ") on " << samples.size() << " samples of " << apps_of(samples).size() << " apps";
  if (a.test_pipelines > 0) {
    std::cout << "; " << test.size() << " samples of " << apps_of(test).size()
              << " apps held out for testing";
  }
  std::cout << std::endl;
  TrainerOptions o = a.trainer;
  o.on_epoch = [](int epoch, double train, double holdout) {
    std::cout << "  epoch " << epoch + 1 << ": training loss " << plain(train) << ", held-out loss "
              << plain(holdout) << std::endl;
  };
  TrainingReport report;
  const LearnedNetwork network = train_or_refuse(kind, a.model_options, samples, o, &report);
  network.save(a.out);
  std::cout << "kept epoch " << report.best_epoch + 1 << " of " << report.train_loss.size() << " ("
            << report.train_samples << " training, " << report.holdout_samples
            << " early-stopping samples)";
  if (report.member_best_epochs.size() > 1) {
    std::cout << "; the ensemble's " << report.member_best_epochs.size() << " members kept epochs";
    for (int e : report.member_best_epochs) std::cout << ' ' << e + 1;
  }
  std::cout << "; wrote " << a.out << "\n\nOn the training pipelines:\n";
  print_table(evaluate(network, samples), std::cout);
  if (!test.empty()) {
    std::cout << "\nOn the held-out pipelines (never trained on):\n";
    print_table(evaluate(network, test), std::cout);
    std::cout << "\nThe analytic model on the same held-out pipelines:\n";
    print_table(evaluate_analytic(test), std::cout);
  }
  return 0;
}

// Per app of `samples`, a model trained on every other app and on `always_trained`; the
// per-app rows are those models' results and the overall row is over all their
// predictions together.
std::vector<double> leave_one_out(const LearnedNetwork &like,
                                  const std::vector<TrainingSample> &samples,
                                  const std::vector<TrainingSample> &always_trained,
                                  const TrainerOptions &o) {
  const std::set<std::string> apps = apps_of(samples);
  if (apps.size() + (always_trained.empty() ? 0 : 1) < 2) {
    throw ConfigError("--leave-one-out-apps needs samples of two apps or more");
  }
  std::vector<double> predicted(samples.size());
  for (const std::string &app : apps) {
    std::vector<TrainingSample> train = always_trained, test;
    std::vector<size_t> test_index;
    for (size_t i = 0; i < samples.size(); ++i) {
      if (samples[i].app == app) {
        test.push_back(samples[i]);
        test_index.push_back(i);
      } else {
        train.push_back(samples[i]);
      }
    }
    std::cerr << "protuner: training without '" << app << "' (" << train.size() << " samples)..."
              << std::endl;
    const LearnedNetwork net = train_or_refuse(like.kind(), like.options(), train, o, nullptr);
    const std::vector<double> p = predict_samples(net, test);
    for (size_t k = 0; k < test.size(); ++k) predicted[test_index[k]] = p[k];
  }
  return predicted;
}

int run_evaluate(const LearnedCommands::Args &a) {
  const bool analytic = a.weights.empty();
  if (analytic && a.model != "analytic") {
    throw ConfigError("evaluate needs --weights FILE (a learned model) or --model analytic");
  }
  if (!analytic && a.model == "analytic") {
    throw ConfigError("--model analytic takes no --weights: the analytic model has none");
  }
  if (analytic && a.leave_one_out) {
    throw ConfigError("--leave-one-out-apps trains models; the analytic model is not trained");
  }
  if (!a.train_data.empty() && !a.leave_one_out) {
    throw ConfigError("--train-data is for --leave-one-out-apps");
  }
  if (a.calibrate_on > 0) {
    if (!analytic) throw ConfigError("--calibrate-on is for --model analytic");
    return run_calibrated_evaluation(a);
  }
  std::optional<LearnedNetwork> network;
  if (!analytic) network = LearnedNetwork::load(a.weights);
  const std::vector<TrainingSample> samples = load_data(a.data);
  std::vector<double> predicted;
  if (analytic) {
    predicted = analytic_predictions(samples);
  } else if (a.leave_one_out) {
    const std::vector<TrainingSample> extra =
        a.train_data.empty() ? std::vector<TrainingSample>{} : load_data(a.train_data);
    predicted = leave_one_out(*network, samples, extra, a.trainer);
  } else {
    predicted = predict_samples(*network, samples);
  }
  if (!a.predictions.empty()) write_predictions(a.predictions, predicted, samples);
  const EvaluationReport report = evaluate_predictions(predicted, samples);
  const std::string mode = analytic          ? "analytic"
                           : a.leave_one_out ? "leave-one-out-apps"
                                             : "weights";
  const std::string model = analytic ? "analytic" : model_kind_name(network->kind());
  if (a.json) {
    nlohmann::json j = report_json(report);
    j["weights"] = analytic ? nlohmann::json() : nlohmann::json(a.weights);
    j["model"] = model;
    j["mode"] = mode;
    std::cout << j.dump() << "\n";
    return 0;
  }
  std::cout << "protuner evaluate: " << model << " model" << (analytic ? "" : " " + a.weights)
            << (a.leave_one_out ? ", each app predicted by a model trained without it" : "")
            << "\n\n";
  print_table(report, std::cout);
  return 0;
}

void add_trainer_options(CLI::App &cmd, TrainerOptions &o) {
  cmd.add_option("--epochs", o.epochs, "training epochs (at most; early stopping may end sooner)")
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--seed", o.seed, "seed of initialization, held-out split and batch order");
  cmd.add_option("--holdout-fraction", o.holdout_fraction,
                 "share of the pipelines (of each one's samples, below five) held out for "
                 "early stopping")
      ->check(CLI::Range(0.0, 0.95));
  cmd.add_option("--learning-rate", o.learning_rate, "Adam learning rate")
      ->check(CLI::PositiveNumber);
  cmd.add_option_function<std::string>(
         "--loss", [&o](const std::string &name) { o.relative_error = parse_relative_error(name); },
         "relative error of the loss: ratio (|p/m - 1|, 004_*'s; feedforward's default) or "
         "log-ratio (|log(p/m)|; gcn's default)")
      ->check(CLI::IsMember({"ratio", "log-ratio"}));
  cmd.add_flag("--stop-on-ranking", o.stop_on_ranking,
               "early stopping keeps the parameters that rank the held-out pipelines best, "
               "not those of the lowest held-out loss");
  cmd.add_option("--weight-decay", o.weight_decay, "Adam weight decay")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd.add_option("--correction-penalty", o.correction_penalty,
                 "gcn with the analytic prior: weight of the mean squared per-stage log "
                 "correction added to the loss (searcher/cost/learned/trainer.h); 0: none")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd.add_option("--ranking-weight", o.ranking_weight,
                 "weight of a pairwise ranking term added to the loss (searcher/cost/learned/"
                 "trainer.h); 0: none")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
}

}  // namespace

LearnedCommands::LearnedCommands(CLI::App &cli) : args_(std::make_unique<Args>()) {
  Args &a = *args_;
  train_ = cli.add_subcommand("train", "train a learned cost model on measured schedules");
  train_->add_option("--data", a.data, "dataset files (JSON Lines), comma-separated")
      ->required()
      ->delimiter(',');
  train_->add_option("--model", a.model, "gcn or feedforward")
      ->check(CLI::IsMember({"gcn", "feedforward"}));
  train_->add_option("--out", a.out, "weights file to write")->required();
  train_
      ->add_option("--test-pipelines", a.test_pipelines,
                   "share of whole pipelines held out (never trained on) and evaluated at the end")
      ->check(CLI::Range(0.0, 0.9));
  train_->add_flag(
      "--no-analytic-prior", [&a](int64_t) { a.model_options.analytic_prior = false; },
      "gcn: predict runtimes from scratch as 004_* does, not as a correction to the analytic "
      "model");
  train_
      ->add_option("--members", a.model_options.members,
                   "an ensemble of this many networks, trained apart from seeds seed, seed + 1, "
                   "...; predicts the geometric mean of theirs")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  add_trainer_options(*train_, a.trainer);

  evaluate_ = cli.add_subcommand("evaluate", "evaluate a learned cost model on measured schedules");
  evaluate_->add_option("--weights", a.weights,
                        "weights file of a learned model (protuner train --out)");
  evaluate_->add_option("--model", a.model, "analytic: evaluate the analytic model (no weights)")
      ->check(CLI::IsMember({"analytic"}));
  evaluate_->add_option("--data", a.data, "dataset files (JSON Lines), comma-separated")
      ->required()
      ->delimiter(',');
  evaluate_->add_flag("--json", a.json, "print one JSON object");
  evaluate_->add_option(
      "--predictions", a.predictions,
      "also write every sample's measured and predicted runtime to this CSV "
      "file (record: its place among the dataset files' non-blank lines, from 0)");
  evaluate_->add_flag("--leave-one-out-apps", a.leave_one_out,
                      "per app, train a fresh model on the other apps and evaluate it on this one "
                      "(with the weights' kind, layer sizes and members)");
  evaluate_
      ->add_option("--train-data", a.train_data,
                   "with --leave-one-out-apps: dataset files always trained on, never left out "
                   "(random pipelines)")
      ->delimiter(',');
  evaluate_
      ->add_option("--calibrate-on", a.calibrate_on,
                   "with --model analytic: per pipeline, fit the model's term weights to "
                   "the first N samples, as tune does while it measures, and evaluate the "
                   "model with and without them on the other samples")
      ->check(CLI::PositiveNumber);
  add_trainer_options(*evaluate_, a.trainer);
}

LearnedCommands::~LearnedCommands() = default;

bool LearnedCommands::parsed() const { return train_->parsed() || evaluate_->parsed(); }

int LearnedCommands::run() const {
  return train_->parsed() ? run_train(*args_) : run_evaluate(*args_);
}

}  // namespace protuner
