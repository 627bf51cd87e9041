// Training and evaluating the learned cost models.
//
// Loss (004_* section III.C), per sample s of pipeline p:
//   loss = |predicted / measured - 1|                  relative error (or |log(p / m)|)
//        x best runtime of p / measured                good schedules matter more
//        x 1 / max(relative stddev, kMinRelativeStddev) precise measurements matter more
// summed over a batch and divided by the batch's total weight (the last two factors), so it
// reads as a weighted mean relative error whatever the batch. We use the stddev relative
// to the runtime, not in seconds as 004_* writes: in seconds a 10 ms pipeline's noise would
// weigh 1000x a 10 us one's for the same precision. The floor keeps a stddev of 0 (one
// sample, or a timer quantum) from making a weight infinite; 1% is about the repeatability
// of our measurer's minima (`build/bin/measurer_benchmark` measures it).
//
// The relative error as 004_* writes it is lopsided: a prediction 10x too slow costs 9, one
// 10x too fast at most 1, and as a prediction goes to 0 its gradient does too, so samples
// a model finds hard are pushed toward 0 and stay there. |log(predicted / measured)| is
// the same to first order and symmetric. Which one trains the better ranking differs by
// model (`--loss` and the leave-one-out evaluation compare them), so it is an option:
// kRatio for the feed-forward model, kLogRatio for the GCN (default_relative_error).
//
// With a ranking weight r > 0 the loss adds r x a pairwise ranking term (RankNet's
// logistic loss): over pairs (f, s) of schedules of one pipeline in a batch, f measured
// faster than s by more than the measurer's noise (kMinRankedRatio),
//   mean of log(1 + predicted_f / predicted_s)      = softplus(log p_f - log p_s)
// which only an order, not a scale, can lower. A search needs the order of schedules of
// one pipeline; the regression term keeps the scale that partial schedules and the
// search's UCB averages compare.
//
// With a correction penalty c > 0 (the GCN with the analytic prior) the loss adds c x the
// mean squared log correction the network applies to the analytic model's stage costs.
//
// Training: Adam over batches of pipelines (all their training samples, in chunks), a
// held-out share of the pipelines (of each pipeline's samples when there are fewer than
// five) for early stopping, judged by the loss or by pairwise ranking accuracy, the best
// held-out parameters restored at the end. Seeded: the same data and options give the
// same model. An ensemble (LearnedModelOptions::members) trains each member so, apart and
// in parallel (one thread per core): member k draws its early-stopping split and batch
// order from seed + k, and its initial parameters after member k - 1's from seed (so
// member 0 is the network a single model of that seed is); they share the first
// member's feature normalization.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "searcher/cost/featurizer.h"
#include "searcher/cost/learned/learned_network.h"

namespace protuner {

// One measured schedule, featurized.
struct TrainingSample {
  std::string app;          // for per-app reports and leave-one-out
  std::string pipeline_id;  // samples with one id are schedules of one pipeline
  PipelineFeatures features;
  double runtime_s = 0;  // the measured runtime (the measurer's minimum), > 0
  double stddev_s = 0;   // stddev of the timed samples, >= 0
  // Its record's place among the dataset's records, counted from 0 over the files in the
  // order given (what errors call "dataset sample N"); skipped records keep their numbers.
  size_t record = 0;
};

constexpr double kMinRelativeStddev = 0.01;
// Two schedules of one pipeline are ranked by the ranking term only when their measured
// runtimes differ by more than this factor: closer, their order is the measurer's noise.
constexpr double kMinRankedRatio = 1.02;

enum class RelativeError {
  kRatio,     // |predicted / measured - 1|, 004_*'s
  kLogRatio,  // |log(predicted / measured)|
};
RelativeError default_relative_error(LearnedModelKind kind);
// "ratio" or "log-ratio" (the CLI's --loss); parse throws ConfigError naming the choices.
const char *relative_error_name(RelativeError e);
RelativeError parse_relative_error(const std::string &name);

struct TrainerOptions {
  int epochs = 100;
  double learning_rate = 1e-3;    // Adam
  double weight_decay = 1e-4;     // 004_*'s value
  int pipelines_per_batch = 4;    // pipelines whose samples make one batch
  int max_batch_samples = 64;     // larger batches are split: more, smaller Adam steps
  // Held out for early stopping: this share of the pipelines, or of each pipeline's samples
  // when there are fewer than five pipelines; 0 disables early stopping.
  double holdout_fraction = 0.2;
  int patience = 10;              // epochs without a better held-out loss before stopping
  // Early stopping judges the held-out share by its pairwise ranking accuracy (the
  // "held-out loss" is then 1 - accuracy), not by the training loss: what a search needs
  // of the model is the order of schedules.
  bool stop_on_ranking = false;
  uint64_t seed = 0;  // initialization, holdout split and batch order (ensembles: seed + k)
  // The loss's relative error; unset: default_relative_error of the model's kind.
  std::optional<RelativeError> relative_error;
  // The pairwise ranking term's weight (see the file comment); 0: regression alone.
  double ranking_weight = 0;
  // The GCN with the analytic prior: adds this x the mean squared per-stage log
  // correction of the analytic model to the training loss, so a stage's correction grows
  // only as far as the data pays for it; on an app unlike the training data, a smaller
  // correction leaves more of the analytic model's ranking. 0: none.
  double correction_penalty = 0;
  // fine_tune() multiplies the learning rate by this (002_*'s autotuning mode adapts a
  // trained model to one app's measurements without forgetting what it learned).
  double fine_tune_learning_rate_scale = 0.1;
  // Called after each epoch (for progress output); may be empty.
  std::function<void(int epoch, double train_loss, double holdout_loss)> on_epoch;
};

struct TrainingReport {
  std::vector<double> train_loss, holdout_loss;  // per epoch run (holdout: NaN without one)
  int best_epoch = -1;  // whose parameters were kept (the last one without a holdout)
  size_t train_samples = 0, holdout_samples = 0;
  std::vector<int> member_best_epochs;  // of every member of an ensemble, the first's first
};

// Whole pipelines set aside for testing, never trained on: a pipeline is held out when a
// seeded hash of its id falls below `fraction`, so the split depends neither on the order
// nor on the number of samples, and a pipeline stays on its side as a dataset grows.
// Returns (training samples, test samples), each in the input's order.
std::pair<std::vector<TrainingSample>, std::vector<TrainingSample>> split_pipelines(
    const std::vector<TrainingSample> &samples, double fraction, uint64_t seed);

// The per-sample weights of the loss (best / measured x 1 / relative stddev), in order.
std::vector<double> loss_weights(const std::vector<TrainingSample> &samples);
// The loss of `predicted` seconds against the samples (see the file comment).
double weighted_relative_error(const std::vector<double> &predicted,
                               const std::vector<TrainingSample> &samples);

// The pairwise ranking term (see the file comment) of `predicted` seconds against the
// samples; 0 without a ranked pair.
double pairwise_ranking_loss(const std::vector<double> &predicted,
                             const std::vector<TrainingSample> &samples);

// A new model of `kind`, normalization fitted on the training share. Throws
// std::invalid_argument for an empty dataset or a non-positive runtime.
LearnedNetwork train_model(LearnedModelKind kind, const LearnedModelOptions &model_options,
                           const std::vector<TrainingSample> &samples,
                           const TrainerOptions &options, TrainingReport *report = nullptr);

// Continues training `network` (normalization unchanged) on `samples`, typically one app's
// own measurements, at the learning rate scaled by fine_tune_learning_rate_scale.
TrainingReport fine_tune(LearnedNetwork &network, const std::vector<TrainingSample> &samples,
                         const TrainerOptions &options);

// Predicted seconds for every sample, in chunks of max_batch_samples.
std::vector<double> predict_samples(const LearnedNetwork &network,
                                    const std::vector<TrainingSample> &samples,
                                    int max_batch_samples = 256);

struct EvaluationMetrics {
  size_t samples = 0;
  double mape = 0;       // mean |predicted / measured - 1|
  double max_error = 0;  // max |predicted / measured - 1|
  // Coefficient of determination of log(predicted) against log(measured): runtimes span
  // orders of magnitude, and R^2 in seconds would only say how the slowest ones fit.
  double r2 = 0;
  // Share of pairs of schedules of one pipeline (measured runtimes differing) that the
  // predictions order the same way; a predicted tie counts one half. NaN without pairs.
  double ranking_accuracy = 0;
  size_t pairs = 0;
};

struct EvaluationReport {
  std::vector<std::pair<std::string, EvaluationMetrics>> per_app;  // sorted by app name
  EvaluationMetrics overall;
};

EvaluationMetrics evaluation_metrics(const std::vector<double> &predicted,
                                     const std::vector<double> &measured,
                                     const std::vector<std::string> &pipeline_ids);
// Pairwise ranking accuracy alone (see EvaluationMetrics); `pairs` receives the count.
double pairwise_ranking_accuracy(const std::vector<double> &predicted,
                                 const std::vector<double> &measured,
                                 const std::vector<std::string> &pipeline_ids,
                                 size_t *pairs = nullptr);
// Per app and overall, of `predicted` seconds (one per sample).
EvaluationReport evaluate_predictions(const std::vector<double> &predicted,
                                      const std::vector<TrainingSample> &samples);
EvaluationReport evaluate(const LearnedNetwork &network,
                          const std::vector<TrainingSample> &samples);

}  // namespace protuner
