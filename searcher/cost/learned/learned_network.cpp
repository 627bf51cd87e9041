// LearnedNetwork and its weights file. The file is a text header, then the network's
// tensors as torch::save writes them:
//
//   protuner-cost-model-weights
//   version 5
//   kind gcn
//   layout 9f1c...                         feature_layout_fingerprint(), hex
//   options 24 40 64 2 1 4                 LearnedModelOptions, in declaration order
//   log_runtime_mean <hexfloat>
//   invariant_mean <count> <hexfloat>...   (likewise invariant_std, scheduled_mean,
//   ...                                     scheduled_std)
//   tensors <byte count>
//   <byte count bytes of torch::serialize::OutputArchive>
//
// Floats are written as hexfloats so a loaded model predicts bit for bit what the saved
// one did. The byte count lets load tell a truncated file from a corrupt one.
#include "searcher/cost/learned/learned_network.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "common/errors.h"
#include "searcher/cost/learned/network_modules.h"

namespace protuner {
namespace {

constexpr const char *kFormatName = "protuner-cost-model-weights";
// 3: the GCN with the analytic prior reads out a correction per stage (network_modules.cpp).
// 4: that correction is bounded (kMaxStageLogCorrection, network_modules.cpp).
// 5: ensembles (the options' members).
constexpr int kFormatVersion = 5;

std::string hexfloat(float v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", static_cast<double>(v));
  return buf;
}

std::string hex64(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

void write_vector(std::ostream &out, const char *name, const std::vector<float> &v) {
  out << name << ' ' << v.size();
  for (float x : v) out << ' ' << hexfloat(x);
  out << '\n';
}

// Reads the header line by line; every failure names the file and what was expected.
class HeaderReader {
 public:
  HeaderReader(std::istream &in, std::string path) : in_(in), path_(std::move(path)) {}

  // The rest of the line after `key` and a space.
  std::istringstream line(const std::string &key) {
    std::string text;
    if (!std::getline(in_, text)) fail("truncated: the header ends before '" + key + "'");
    if (text.rfind(key + ' ', 0) != 0) {
      fail("expected '" + key + "' in the header, found '" + text.substr(0, 60) + "'");
    }
    return std::istringstream(text.substr(key.size() + 1));
  }
  float hex_float(std::istream &in, const std::string &key) {
    std::string word;
    if (!(in >> word)) fail("'" + key + "' has too few values (truncated or corrupt header)");
    char *end = nullptr;
    const double v = std::strtod(word.c_str(), &end);
    if (end == word.c_str() || *end != '\0' || !std::isfinite(v)) {
      fail("'" + key + "' has a value that is not a number: '" + word + "'");
    }
    return static_cast<float>(v);
  }
  std::vector<float> vector(const std::string &key, size_t expected) {
    std::istringstream in = line(key);
    size_t count = 0;
    if (!(in >> count) || count != expected) {
      fail("'" + key + "' has " + std::to_string(count) + " values, expected " +
           std::to_string(expected) + " (another feature layout?)");
    }
    std::vector<float> v(count);
    for (float &x : v) x = hex_float(in, key);
    return v;
  }
  [[noreturn]] void fail(const std::string &what) const {
    throw ConfigError("cost model weights '" + path_ + "': " + what);
  }

 private:
  std::istream &in_;
  std::string path_;
};

LearnedModelKind read_kind(HeaderReader &header, std::optional<LearnedModelKind> expected) {
  std::string name;
  header.line("kind") >> name;
  LearnedModelKind kind;
  try {
    kind = parse_model_kind(name);
  } catch (const ConfigError &) {
    header.fail("unknown model kind '" + name + "'");
  }
  if (expected && kind != *expected) {
    header.fail(std::string("holds a '") + model_kind_name(kind) + "' model, expected '" +
                model_kind_name(*expected) + "'");
  }
  return kind;
}

void read_layout(HeaderReader &header) {
  std::string layout;
  header.line("layout") >> layout;
  const std::string ours = hex64(feature_layout_fingerprint());
  if (layout != ours) {
    header.fail("was trained on another feature layout (fingerprint " + layout +
                ", this build's is " + ours + "); retrain it with `protuner train`");
  }
}

LearnedModelOptions read_options(HeaderReader &header) {
  LearnedModelOptions o;
  std::istringstream in = header.line("options");
  int prior = -1;
  if (!(in >> o.invariant_embedding >> o.scheduled_embedding >> o.hidden >> o.gcn_layers >> prior >>
        o.members) ||
      o.invariant_embedding <= 0 || o.scheduled_embedding <= 0 || o.hidden <= 0 ||
      o.gcn_layers < 0 || (prior != 0 && prior != 1) || o.members < 1) {
    header.fail(
        "bad 'options' line (expected four layer sizes, the analytic prior (0 or 1) and the "
        "number of members (1 or more))");
  }
  o.analytic_prior = prior == 1;
  return o;
}

FeatureNormalizer read_normalizer(HeaderReader &header) {
  FeatureNormalizer n;
  std::istringstream mean = header.line("log_runtime_mean");
  n.log_runtime_mean = header.hex_float(mean, "log_runtime_mean");
  n.invariant_mean = header.vector("invariant_mean", kNumInvariantFeatures);
  n.invariant_std = header.vector("invariant_std", kNumInvariantFeatures);
  n.scheduled_mean = header.vector("scheduled_mean", kNumScheduledFeatures);
  n.scheduled_std = header.vector("scheduled_std", kNumScheduledFeatures);
  return n;
}

// `source` names where `bytes` came from in every error: a file's path, or the name of
// weights built into the binary.
std::unique_ptr<LearnedNetwork::Impl> load_network(const std::string &bytes,
                                                   const std::string &source,
                                                   std::optional<LearnedModelKind> expected) {
  std::istringstream in(bytes);
  HeaderReader header(in, source);
  std::string format;
  if (!std::getline(in, format) || format != kFormatName) {
    header.fail(bytes.empty() ? "the file is empty" : "not a protuner cost model weights file");
  }
  int version = 0;
  header.line("version") >> version;
  if (version != kFormatVersion) {
    header.fail("format version " + std::to_string(version) + ", this build reads version " +
                std::to_string(kFormatVersion));
  }
  const LearnedModelKind kind = read_kind(header, expected);
  read_layout(header);
  const LearnedModelOptions options = read_options(header);
  FeatureNormalizer normalizer = read_normalizer(header);
  size_t size = 0;
  header.line("tensors") >> size;
  const size_t start = static_cast<size_t>(in.tellg());
  if (bytes.size() - start < size) {
    header.fail("truncated: " + std::to_string(bytes.size() - start) + " of " +
                std::to_string(size) + " bytes of tensors");
  }
  // Built without reseeding torch's global generator: its initial values are overwritten.
  auto net = make_cost_network(kind, options, normalizer.log_runtime_mean);
  try {
    std::istringstream tensors(bytes.substr(start, size));
    torch::serialize::InputArchive archive;
    archive.load_from(tensors);
    net->load(archive);
  } catch (const c10::Error &e) {
    header.fail(std::string("the tensors do not load: ") + e.what_without_backtrace());
  }
  net->eval();
  return std::make_unique<LearnedNetwork::Impl>(
      LearnedNetwork::Impl{kind, options, std::move(normalizer), std::move(net)});
}

}  // namespace

std::string read_weights_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw IoError("cost model weights '" + path +
                  "': cannot open the file (missing or unreadable)");
  }
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

const char *model_kind_name(LearnedModelKind kind) {
  return kind == LearnedModelKind::kFeedForward ? "feedforward" : "gcn";
}

LearnedModelKind parse_model_kind(const std::string &name) {
  if (name == "feedforward") return LearnedModelKind::kFeedForward;
  if (name == "gcn") return LearnedModelKind::kGcn;
  throw ConfigError("unknown cost model '" + name + "' (expected feedforward or gcn)");
}

bool LearnedModelOptions::operator==(const LearnedModelOptions &o) const {
  return invariant_embedding == o.invariant_embedding &&
         scheduled_embedding == o.scheduled_embedding && hidden == o.hidden &&
         gcn_layers == o.gcn_layers && analytic_prior == o.analytic_prior && members == o.members;
}

LearnedNetwork::LearnedNetwork(LearnedModelKind kind, LearnedModelOptions options,
                               FeatureNormalizer normalizer, uint64_t seed) {
  if (options.members < 1) throw std::invalid_argument("an ensemble needs 1 member or more");
  torch::manual_seed(seed);
  auto net = make_cost_network(kind, options, normalizer.log_runtime_mean);
  net->eval();
  impl_ = std::make_unique<Impl>(Impl{kind, options, std::move(normalizer), std::move(net)});
}

LearnedNetwork::LearnedNetwork(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LearnedNetwork::LearnedNetwork(LearnedNetwork &&) noexcept = default;
LearnedNetwork &LearnedNetwork::operator=(LearnedNetwork &&) noexcept = default;
LearnedNetwork::~LearnedNetwork() = default;

LearnedModelKind LearnedNetwork::kind() const { return impl_->kind; }
const LearnedModelOptions &LearnedNetwork::options() const { return impl_->options; }
const FeatureNormalizer &LearnedNetwork::normalizer() const { return impl_->normalizer; }

std::vector<double> LearnedNetwork::predict(
    const std::vector<const PipelineFeatures *> &batch) const {
  return predict_seconds(*impl_->net, impl_->normalizer, batch);
}

void LearnedNetwork::save(const std::string &path) const {
  std::ostringstream tensors;
  torch::serialize::OutputArchive archive;
  impl_->net->save(archive);
  archive.save_to(tensors);
  const std::string bytes = tensors.str();

  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw IoError("cost model weights '" + path + "': cannot create the file");
  const LearnedModelOptions &o = impl_->options;
  const FeatureNormalizer &n = impl_->normalizer;
  out << kFormatName << "\nversion " << kFormatVersion << "\nkind " << model_kind_name(impl_->kind)
      << "\nlayout " << hex64(feature_layout_fingerprint()) << "\noptions " << o.invariant_embedding
      << ' ' << o.scheduled_embedding << ' ' << o.hidden << ' ' << o.gcn_layers << ' '
      << (o.analytic_prior ? 1 : 0) << ' ' << o.members << "\nlog_runtime_mean "
      << hexfloat(n.log_runtime_mean) << '\n';
  write_vector(out, "invariant_mean", n.invariant_mean);
  write_vector(out, "invariant_std", n.invariant_std);
  write_vector(out, "scheduled_mean", n.scheduled_mean);
  write_vector(out, "scheduled_std", n.scheduled_std);
  out << "tensors " << bytes.size() << '\n';
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.flush();
  if (!out) throw IoError("cost model weights '" + path + "': writing failed");
}

LearnedNetwork LearnedNetwork::load(const std::string &path) {
  return LearnedNetwork(load_network(read_weights_file(path), path, std::nullopt));
}

LearnedNetwork LearnedNetwork::load(const std::string &path, LearnedModelKind expected_kind) {
  return LearnedNetwork(load_network(read_weights_file(path), path, expected_kind));
}

LearnedNetwork LearnedNetwork::load_bytes(const std::string &bytes, const std::string &source) {
  return LearnedNetwork(load_network(bytes, source, std::nullopt));
}

void predict_on_the_calling_thread_only() { at::set_num_threads(1); }

}  // namespace protuner
