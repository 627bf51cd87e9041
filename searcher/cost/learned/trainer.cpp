#include "searcher/cost/learned/trainer.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <tuple>

#include "common/errors.h"
#include "searcher/cost/learned/network_modules.h"

namespace protuner {
namespace {

using Indices = std::vector<size_t>;

void check_samples(const std::vector<TrainingSample> &samples) {
  if (samples.empty()) throw std::invalid_argument("no training samples");
  for (const TrainingSample &s : samples) {
    if (!(s.runtime_s > 0) || !(s.stddev_s >= 0)) {
      throw std::invalid_argument("sample of pipeline '" + s.pipeline_id +
                                  "' has a runtime <= 0 or a negative stddev");
    }
  }
}

// Sample indices per pipeline id, in first-seen order of the ids.
std::vector<Indices> group_by_pipeline(const std::vector<TrainingSample> &samples) {
  std::map<std::string, size_t> group_of;
  std::vector<Indices> groups;
  for (size_t i = 0; i < samples.size(); ++i) {
    auto [it, inserted] = group_of.emplace(samples[i].pipeline_id, groups.size());
    if (inserted) groups.emplace_back();
    groups[it->second].push_back(i);
  }
  return groups;
}

// The early-stopping share. With kMinPipelinesForWholeHoldout pipelines or more, whole
// pipelines (a seeded `fraction` of them, at least one) are held out: the model is for
// pipelines it has never seen, and samples of pipelines it trains on said nothing about
// that (held out that way, training on random pipelines keeps improving the held-out loss
// while the ranking of unseen pipelines falls below the untrained model's). With fewer
// (fine-tuning on one app), per pipeline a seeded `fraction` of its samples, keeping at
// least one of every pipeline for training.
constexpr size_t kMinPipelinesForWholeHoldout = 5;

std::pair<std::vector<Indices>, Indices> split_holdout(const std::vector<TrainingSample> &samples,
                                                       double fraction, std::mt19937_64 &rng) {
  std::vector<Indices> groups = group_by_pipeline(samples);
  std::vector<Indices> train;
  Indices holdout;
  if (groups.size() >= kMinPipelinesForWholeHoldout && fraction > 0) {
    std::shuffle(groups.begin(), groups.end(), rng);
    const size_t held = std::max<size_t>(
        1, static_cast<size_t>(std::round(fraction * static_cast<double>(groups.size()))));
    for (size_t g = 0; g < groups.size(); ++g) {
      if (g < held)
        holdout.insert(holdout.end(), groups[g].begin(), groups[g].end());
      else
        train.push_back(std::move(groups[g]));
    }
    return {train, holdout};
  }
  for (Indices group : groups) {
    std::shuffle(group.begin(), group.end(), rng);
    size_t held = static_cast<size_t>(std::round(fraction * static_cast<double>(group.size())));
    held = std::min(held, group.size() - 1);
    holdout.insert(holdout.end(), group.begin(), group.begin() + static_cast<long>(held));
    train.emplace_back(group.begin() + static_cast<long>(held), group.end());
  }
  return {train, holdout};
}

// One epoch's batches: pipelines in a seeded order, `pipelines_per_batch` at a time, each
// batch split into chunks of at most max_batch_samples.
std::vector<Indices> epoch_batches(std::vector<Indices> pipelines, const TrainerOptions &o,
                                   std::mt19937_64 &rng) {
  std::shuffle(pipelines.begin(), pipelines.end(), rng);
  std::vector<Indices> batches;
  for (size_t p = 0; p < pipelines.size(); p += static_cast<size_t>(o.pipelines_per_batch)) {
    Indices batch;
    const size_t end = std::min(pipelines.size(), p + static_cast<size_t>(o.pipelines_per_batch));
    for (size_t q = p; q < end; ++q)
      batch.insert(batch.end(), pipelines[q].begin(), pipelines[q].end());
    std::shuffle(batch.begin(), batch.end(), rng);
    for (size_t k = 0; k < batch.size(); k += static_cast<size_t>(o.max_batch_samples)) {
      const size_t stop = std::min(batch.size(), k + static_cast<size_t>(o.max_batch_samples));
      batches.emplace_back(batch.begin() + static_cast<long>(k),
                           batch.begin() + static_cast<long>(stop));
    }
  }
  return batches;
}

std::vector<const PipelineFeatures *> features_of(const std::vector<TrainingSample> &samples,
                                                  const Indices &indices) {
  std::vector<const PipelineFeatures *> out;
  out.reserve(indices.size());
  for (size_t i : indices) out.push_back(&samples[i].features);
  return out;
}

torch::Tensor column(const Indices &indices, const std::function<double(size_t)> &value) {
  std::vector<float> v;
  v.reserve(indices.size());
  for (size_t i : indices) v.push_back(static_cast<float>(value(i)));
  return torch::from_blob(v.data(), {static_cast<int64_t>(v.size())}, torch::kFloat32).clone();
}

std::string save_parameters(CostNetwork &net) {
  std::ostringstream out;
  torch::serialize::OutputArchive archive;
  net.save(archive);
  archive.save_to(out);
  return out.str();
}

void restore_parameters(CostNetwork &net, const std::string &bytes) {
  std::istringstream in(bytes);
  torch::serialize::InputArchive archive;
  archive.load_from(in);
  net.load(archive);
}

// The loss's relative error, for training's tensors and the held-out loss's doubles alike
// (abs and log found by argument lookup for tensors).
template <typename T>
T relative_error(RelativeError kind, const T &predicted, const T &measured) {
  using std::abs, std::log;
  return kind == RelativeError::kLogRatio ? abs(log(predicted / measured))
                                          : abs(predicted / measured - 1);
}

// Pairs (faster, slower) of schedules of one pipeline among `indices`, as positions in
// it, whose measured runtimes differ by more than kMinRankedRatio.
std::pair<std::vector<int64_t>, std::vector<int64_t>> ranked_pairs(
    const std::vector<TrainingSample> &samples, const Indices &indices) {
  std::vector<int64_t> faster, slower;
  for (size_t a = 0; a < indices.size(); ++a) {
    const TrainingSample &x = samples[indices[a]];
    for (size_t b = a + 1; b < indices.size(); ++b) {
      const TrainingSample &y = samples[indices[b]];
      if (x.pipeline_id != y.pipeline_id) continue;
      const double ratio = x.runtime_s / y.runtime_s;
      if (ratio < kMinRankedRatio && 1 / ratio < kMinRankedRatio) continue;
      faster.push_back(static_cast<int64_t>(ratio < 1 ? a : b));
      slower.push_back(static_cast<int64_t>(ratio < 1 ? b : a));
    }
  }
  return {faster, slower};
}

double softplus(double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::abs(x))); }

// The ranking term over `predicted` seconds of the samples at `indices`: training's tensor
// and the held-out loss's doubles. 0 without a ranked pair.
torch::Tensor ranking_term(const torch::Tensor &predicted,
                           const std::vector<TrainingSample> &samples, const Indices &indices) {
  auto [faster, slower] = ranked_pairs(samples, indices);
  if (faster.empty()) return torch::zeros({}, predicted.options());
  const torch::Tensor log_predicted = torch::log(predicted);
  const auto index = [](std::vector<int64_t> &v) {
    return torch::from_blob(v.data(), {static_cast<int64_t>(v.size())}, torch::kInt64).clone();
  };
  return torch::softplus(log_predicted.index_select(0, index(faster)) -
                         log_predicted.index_select(0, index(slower)))
      .mean();
}

double ranking_term(const std::vector<double> &predicted,
                    const std::vector<TrainingSample> &samples, const Indices &indices) {
  const auto [faster, slower] = ranked_pairs(samples, indices);
  double sum = 0;
  for (size_t k = 0; k < faster.size(); ++k) {
    sum += softplus(std::log(predicted[static_cast<size_t>(faster[k])]) -
                    std::log(predicted[static_cast<size_t>(slower[k])]));
  }
  return faster.empty() ? 0 : sum / static_cast<double>(faster.size());
}

// What one training run works on.
struct TrainingData {
  const std::vector<TrainingSample> &samples;
  RelativeError relative_error;
  std::vector<double> weights;
  std::vector<Indices> train;  // per pipeline
  Indices holdout;
};

// One network trained alone: a whole model, or one member of an ensemble.
struct Trainee {
  CostNetwork &net;
  const FeatureNormalizer &normalizer;
};

double train_epoch(const Trainee &t, torch::optim::Optimizer &optimizer, const TrainingData &data,
                   const TrainerOptions &o, std::mt19937_64 &rng) {
  CostNetwork &net = t.net;
  net.train();
  double loss_sum = 0, weight_sum = 0;
  for (const Indices &batch : epoch_batches(data.train, o, rng)) {
    const FeatureBatch fb = make_feature_batch(features_of(data.samples, batch), t.normalizer);
    if (fb.invariant.size(0) < 2) continue;  // batch norm needs two nodes
    const torch::Tensor runtime =
        column(batch, [&](size_t i) { return data.samples[i].runtime_s; });
    const torch::Tensor weight = column(batch, [&](size_t i) { return data.weights[i]; });
    const torch::Tensor predicted = net.forward(fb);
    const torch::Tensor weighted =
        (relative_error(data.relative_error, predicted, runtime) * weight).sum();
    torch::Tensor loss = weighted / weight.sum();
    if (o.ranking_weight > 0)
      loss = loss + o.ranking_weight * ranking_term(predicted, data.samples, batch);
    if (o.correction_penalty > 0)
      loss = loss + o.correction_penalty * net.mean_squared_correction();
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    loss_sum += weighted.item<double>();
    weight_sum += weight.sum().item<double>();
  }
  net.eval();
  return weight_sum > 0 ? loss_sum / weight_sum : std::numeric_limits<double>::quiet_NaN();
}

double holdout_loss(const Trainee &t, const TrainingData &data, const TrainerOptions &o) {
  if (data.holdout.empty()) return std::numeric_limits<double>::quiet_NaN();
  const std::vector<const PipelineFeatures *> features = features_of(data.samples, data.holdout);
  std::vector<double> predicted;
  for (size_t k = 0; k < features.size(); k += static_cast<size_t>(o.max_batch_samples)) {
    const size_t end = std::min(features.size(), k + static_cast<size_t>(o.max_batch_samples));
    const auto part = predict_seconds(
        t.net, t.normalizer,
        {features.begin() + static_cast<long>(k), features.begin() + static_cast<long>(end)});
    predicted.insert(predicted.end(), part.begin(), part.end());
  }
  if (o.stop_on_ranking) {
    std::vector<double> measured;
    std::vector<std::string> ids;
    for (size_t i : data.holdout) {
      measured.push_back(data.samples[i].runtime_s);
      ids.push_back(data.samples[i].pipeline_id);
    }
    const double accuracy = pairwise_ranking_accuracy(predicted, measured, ids);
    // Without a pair (held-out pipelines of one sample each) there is nothing to rank.
    return std::isnan(accuracy) ? 0 : 1 - accuracy;
  }
  double loss = 0, weight = 0;
  for (size_t k = 0; k < data.holdout.size(); ++k) {
    const size_t i = data.holdout[k];
    loss += relative_error<double>(data.relative_error, predicted[k], data.samples[i].runtime_s) *
            data.weights[i];
    weight += data.weights[i];
  }
  loss /= weight;
  if (o.ranking_weight > 0)
    loss += o.ranking_weight * ranking_term(predicted, data.samples, data.holdout);
  return loss;
}

TrainingReport run_training(const Trainee &t, const TrainingData &data, const TrainerOptions &o,
                            double learning_rate, std::mt19937_64 &rng) {
  CostNetwork &net = t.net;
  torch::optim::Adam optimizer(
      net.parameters(), torch::optim::AdamOptions(learning_rate).weight_decay(o.weight_decay));
  TrainingReport report;
  for (const Indices &p : data.train) report.train_samples += p.size();
  report.holdout_samples = data.holdout.size();
  double best = std::numeric_limits<double>::infinity();
  std::string best_parameters;
  for (int epoch = 0; epoch < o.epochs; ++epoch) {
    report.train_loss.push_back(train_epoch(t, optimizer, data, o, rng));
    report.holdout_loss.push_back(holdout_loss(t, data, o));
    if (o.on_epoch) o.on_epoch(epoch, report.train_loss.back(), report.holdout_loss.back());
    if (data.holdout.empty()) {
      report.best_epoch = epoch;
      continue;
    }
    if (report.holdout_loss.back() < best) {
      best = report.holdout_loss.back();
      report.best_epoch = epoch;
      best_parameters = save_parameters(net);
    } else if (epoch - report.best_epoch >= o.patience) {
      break;
    }
  }
  if (!best_parameters.empty()) restore_parameters(net, best_parameters);
  net.eval();
  return report;
}

void check_options(const TrainerOptions &o) {
  if (o.epochs < 0 || o.pipelines_per_batch < 1 || o.max_batch_samples < 1 ||
      o.holdout_fraction < 0 || o.holdout_fraction >= 1 || o.patience < 1 ||
      !(o.learning_rate > 0) || !(o.ranking_weight >= 0) || !(o.correction_penalty >= 0) ||
      !(o.weight_decay >= 0)) {
    throw std::invalid_argument(
        "trainer options out of range (epochs >= 0, batches >= 1, holdout in [0, 1), patience >= "
        "1, learning rate > 0, ranking weight, correction penalty and weight decay >= 0)");
  }
}

// Runs work(k) for k in [0, n) on up to one thread per core; rethrows the first
// member's exception, if any, once all have finished.
void for_each_in_parallel(size_t n, const std::function<void(size_t)> &work) {
  const size_t threads =
      std::min<size_t>(n, std::max<size_t>(1, std::thread::hardware_concurrency()));
  std::atomic<size_t> next{0};
  std::vector<std::exception_ptr> errors(n);
  const auto run = [&] {
    for (size_t k; (k = next++) < n;) {
      try {
        work(k);
      } catch (...) {
        errors[k] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(run);
  run();
  for (std::thread &t : pool) t.join();
  for (const std::exception_ptr &e : errors)
    if (e) std::rethrow_exception(e);
}

// Member k's early-stopping split, and the stream its batch order continues from: both
// come from seed + k, so an ensemble's member 0 trains exactly as the single network of
// that seed, on the share its feature normalization was fitted to (train_model).
struct MemberDraw {
  std::mt19937_64 rng;
  std::vector<Indices> train;
  Indices holdout;
};
MemberDraw member_draw(const std::vector<TrainingSample> &samples, const TrainerOptions &options,
                       size_t k) {
  MemberDraw d{std::mt19937_64(options.seed + k), {}, {}};
  std::tie(d.train, d.holdout) = split_holdout(samples, options.holdout_fraction, d.rng);
  return d;
}

// Trains `network`, or each member of an ensemble apart and in parallel (trainer.h).
// Reports the first member's training, with every member's kept epoch; only the first
// member reports its epochs to on_epoch.
TrainingReport train_members(LearnedNetwork &network, const std::vector<TrainingSample> &samples,
                             const TrainerOptions &options, double learning_rate) {
  std::vector<std::shared_ptr<CostNetwork>> members = network.impl().net->members();
  if (members.empty()) members.push_back(network.impl().net);
  const RelativeError error =
      options.relative_error.value_or(default_relative_error(network.kind()));
  const std::vector<double> weights = loss_weights(samples);
  std::vector<TrainingReport> reports(members.size());
  for_each_in_parallel(members.size(), [&](size_t k) {
    TrainerOptions o = options;
    if (k > 0) o.on_epoch = nullptr;
    MemberDraw draw = member_draw(samples, options, k);
    const TrainingData data{samples, error, weights, std::move(draw.train),
                            std::move(draw.holdout)};
    reports[k] =
        run_training({*members[k], network.normalizer()}, data, o, learning_rate, draw.rng);
  });
  network.impl().net->eval();
  TrainingReport report = reports[0];
  for (const TrainingReport &r : reports) report.member_best_epochs.push_back(r.best_epoch);
  return report;
}

}  // namespace

RelativeError default_relative_error(LearnedModelKind kind) {
  return kind == LearnedModelKind::kGcn ? RelativeError::kLogRatio : RelativeError::kRatio;
}

const char *relative_error_name(RelativeError e) {
  return e == RelativeError::kLogRatio ? "log-ratio" : "ratio";
}

RelativeError parse_relative_error(const std::string &name) {
  if (name == "ratio") return RelativeError::kRatio;
  if (name == "log-ratio") return RelativeError::kLogRatio;
  throw ConfigError("unknown relative error '" + name + "' (ratio or log-ratio)");
}

std::pair<std::vector<TrainingSample>, std::vector<TrainingSample>> split_pipelines(
    const std::vector<TrainingSample> &samples, double fraction, uint64_t seed) {
  if (!(fraction >= 0 && fraction <= 1)) {
    throw std::invalid_argument("the share of pipelines held out must be in [0, 1]");
  }
  const auto held_out = [&](const std::string &id) {
    uint64_t h = 1469598103934665603ull ^ (seed * 0x9e3779b97f4a7c15ull);  // FNV-1a, seeded
    for (unsigned char ch : id) h = (h ^ ch) * 1099511628211ull;
    h ^= h >> 33;  // FNV's low bits mix poorly; fold the high ones in
    return static_cast<double>(h % 1000000) / 1e6 < fraction;
  };
  std::pair<std::vector<TrainingSample>, std::vector<TrainingSample>> out;
  for (const TrainingSample &s : samples) {
    (held_out(s.pipeline_id) ? out.second : out.first).push_back(s);
  }
  return out;
}

std::vector<double> loss_weights(const std::vector<TrainingSample> &samples) {
  std::map<std::string, double> best;
  for (const TrainingSample &s : samples) {
    auto [it, inserted] = best.emplace(s.pipeline_id, s.runtime_s);
    if (!inserted) it->second = std::min(it->second, s.runtime_s);
  }
  std::vector<double> w;
  w.reserve(samples.size());
  for (const TrainingSample &s : samples) {
    const double relative_stddev = std::max(s.stddev_s / s.runtime_s, kMinRelativeStddev);
    w.push_back(best.at(s.pipeline_id) / s.runtime_s / relative_stddev);
  }
  return w;
}

double weighted_relative_error(const std::vector<double> &predicted,
                               const std::vector<TrainingSample> &samples) {
  const std::vector<double> w = loss_weights(samples);
  double loss = 0, weight = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    loss += std::abs(predicted.at(i) / samples[i].runtime_s - 1) * w[i];
    weight += w[i];
  }
  return loss / weight;
}

double pairwise_ranking_loss(const std::vector<double> &predicted,
                             const std::vector<TrainingSample> &samples) {
  Indices all(samples.size());
  std::iota(all.begin(), all.end(), 0);
  return ranking_term(predicted, samples, all);
}

LearnedNetwork train_model(LearnedModelKind kind, const LearnedModelOptions &model_options,
                           const std::vector<TrainingSample> &samples,
                           const TrainerOptions &options, TrainingReport *report) {
  check_samples(samples);
  check_options(options);
  // The normalization of the first member's training share serves every member: they
  // share one feature batch.
  const std::vector<Indices> train = member_draw(samples, options, 0).train;
  std::vector<const PipelineFeatures *> train_features;
  std::vector<double> train_runtimes;
  for (const Indices &p : train) {
    for (size_t i : p) {
      train_features.push_back(&samples[i].features);
      train_runtimes.push_back(samples[i].runtime_s);
    }
  }
  LearnedNetwork network(kind, model_options,
                         FeatureNormalizer::fit(train_features, train_runtimes), options.seed);
  TrainingReport r = train_members(network, samples, options, options.learning_rate);
  if (report) *report = std::move(r);
  return network;
}

TrainingReport fine_tune(LearnedNetwork &network, const std::vector<TrainingSample> &samples,
                         const TrainerOptions &options) {
  check_samples(samples);
  check_options(options);
  return train_members(network, samples, options,
                       options.learning_rate * options.fine_tune_learning_rate_scale);
}

std::vector<double> predict_samples(const LearnedNetwork &network,
                                    const std::vector<TrainingSample> &samples,
                                    int max_batch_samples) {
  std::vector<double> out;
  out.reserve(samples.size());
  const size_t chunk = static_cast<size_t>(std::max(1, max_batch_samples));
  for (size_t k = 0; k < samples.size(); k += chunk) {
    std::vector<const PipelineFeatures *> batch;
    for (size_t i = k; i < std::min(samples.size(), k + chunk); ++i)
      batch.push_back(&samples[i].features);
    const auto part = network.predict(batch);
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

double pairwise_ranking_accuracy(const std::vector<double> &predicted,
                                 const std::vector<double> &measured,
                                 const std::vector<std::string> &pipeline_ids, size_t *pairs) {
  std::map<std::string, Indices> groups;
  for (size_t i = 0; i < measured.size(); ++i) groups[pipeline_ids.at(i)].push_back(i);
  double correct = 0;
  size_t count = 0;
  for (const auto &[id, g] : groups) {
    for (size_t a = 0; a < g.size(); ++a) {
      for (size_t b = a + 1; b < g.size(); ++b) {
        const double dm = measured[g[a]] - measured[g[b]];
        if (dm == 0) continue;  // no order to get right
        const double dp = predicted.at(g[a]) - predicted.at(g[b]);
        correct += dp == 0 ? 0.5 : ((dp > 0) == (dm > 0) ? 1.0 : 0.0);
        ++count;
      }
    }
  }
  if (pairs) *pairs = count;
  return count ? correct / static_cast<double>(count) : std::numeric_limits<double>::quiet_NaN();
}

EvaluationMetrics evaluation_metrics(const std::vector<double> &predicted,
                                     const std::vector<double> &measured,
                                     const std::vector<std::string> &pipeline_ids) {
  if (predicted.size() != measured.size() || measured.size() != pipeline_ids.size()) {
    throw std::invalid_argument(
        "evaluation_metrics: predictions, measurements and ids differ in count");
  }
  EvaluationMetrics m;
  m.samples = measured.size();
  if (m.samples == 0) return m;
  double log_mean = 0;
  for (double y : measured) log_mean += std::log(y);
  log_mean /= static_cast<double>(m.samples);
  double ss_res = 0, ss_tot = 0;
  for (size_t i = 0; i < m.samples; ++i) {
    const double error = std::abs(predicted[i] / measured[i] - 1);
    m.mape += error;
    m.max_error = std::max(m.max_error, error);
    const double ly = std::log(measured[i]);
    // A prediction of 0 s would be -inf in log space; 1e-12 s is far below any runtime.
    const double lp = std::log(std::max(predicted[i], 1e-12));
    ss_res += (lp - ly) * (lp - ly);
    ss_tot += (ly - log_mean) * (ly - log_mean);
  }
  m.mape /= static_cast<double>(m.samples);
  m.r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : std::numeric_limits<double>::quiet_NaN();
  m.ranking_accuracy = pairwise_ranking_accuracy(predicted, measured, pipeline_ids, &m.pairs);
  return m;
}

EvaluationReport evaluate_predictions(const std::vector<double> &predicted,
                                      const std::vector<TrainingSample> &samples) {
  struct Columns {
    std::vector<double> predicted, measured;
    std::vector<std::string> ids;
  };
  std::map<std::string, Columns> per_app;
  Columns all;
  for (size_t i = 0; i < samples.size(); ++i) {
    for (Columns *c : {&per_app[samples[i].app], &all}) {
      c->predicted.push_back(predicted.at(i));
      c->measured.push_back(samples[i].runtime_s);
      c->ids.push_back(samples[i].pipeline_id);
    }
  }
  EvaluationReport report;
  for (const auto &[app, c] : per_app) {
    report.per_app.emplace_back(app, evaluation_metrics(c.predicted, c.measured, c.ids));
  }
  report.overall = evaluation_metrics(all.predicted, all.measured, all.ids);
  return report;
}

EvaluationReport evaluate(const LearnedNetwork &network,
                          const std::vector<TrainingSample> &samples) {
  return evaluate_predictions(predict_samples(network, samples), samples);
}

}  // namespace protuner
