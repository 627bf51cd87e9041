// Dataset files: one JSON object per line (dataset.h has the format). Lines are written
// with ordered keys so a person reading the file sees format and app first; reading is
// strict (unknown keys, missing or mistyped fields are errors), because a sample that
// silently lost its runtime would poison training.
#include "searcher/cost/dataset.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <utility>

#include "common/errors.h"

namespace protuner {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

constexpr const char *kFormat = "protuner-sample";

const Json &field(const Json &j, const char *key, Json::value_t type, const char *type_name) {
  const auto it = j.find(key);
  if (it == j.end()) throw ConfigError(std::string("missing field '") + key + "'");
  const bool ok = type == Json::value_t::number_float ? it->is_number() : it->type() == type;
  if (!ok) throw ConfigError(std::string("field '") + key + "' is not " + type_name);
  return *it;
}

std::string string_field(const Json &j, const char *key) {
  return field(j, key, Json::value_t::string, "a string").get<std::string>();
}

double number_field(const Json &j, const char *key) {
  return field(j, key, Json::value_t::number_float, "a number").get<double>();
}

void refuse_unknown_keys(const Json &j, const std::set<std::string> &known, const char *where) {
  for (const auto &item : j.items()) {
    if (known.count(item.key()) == 0) {
      throw ConfigError(std::string("unknown field '") + item.key() + "' in " + where);
    }
  }
}

AppSpec app_from_json(const Json &j) {
  refuse_unknown_keys(j, {"name", "library", "generator", "params"}, "'app'");
  AppSpec app{
      string_field(j, "name"), string_field(j, "library"), string_field(j, "generator"), {}};
  for (const auto &item : field(j, "params", Json::value_t::object, "an object").items()) {
    if (!item.value().is_string()) {
      throw ConfigError("app param '" + item.key() + "' is not a string");
    }
    app.params[item.key()] = item.value().get<std::string>();
  }
  return app;
}

std::vector<double> samples_from_json(const Json &j) {
  std::vector<double> samples;
  for (const Json &v : field(j, "samples_ms", Json::value_t::array, "an array")) {
    if (!v.is_number()) throw ConfigError("field 'samples_ms' holds a non-number");
    samples.push_back(v.get<double>());
  }
  return samples;
}

void check_version(const Json &j) {
  const auto format = j.find("format");
  if (format == j.end() || *format != kFormat) {
    throw ConfigError(std::string("not a protuner sample (\"format\" must be \"") + kFormat +
                      "\")");
  }
  const auto version = j.find("version");
  if (version == j.end() || !version->is_number_integer() ||
      version->get<int>() != kDatasetFormatVersion) {
    throw ConfigError("sample format version " +
                      (version == j.end() ? "missing" : version->dump()) +
                      "; this build reads version " + std::to_string(kDatasetFormatVersion));
  }
}

[[noreturn]] void throw_io(const std::string &what, const std::string &path) {
  throw IoError(what + " '" + path + "': " + std::strerror(errno));
}

void write_all(int fd, const std::string &text, const std::string &path) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_io("cannot write dataset", path);
    done += static_cast<size_t>(n);
  }
}

bool tail_is_a_sample(const std::string &line) {
  try {
    sample_from_json_line(line);
    return true;
  } catch (const ConfigError &) {
    return false;
  }
}

void append_line_end(const std::string &path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) throw_io("cannot open dataset", path);
  write_all(fd, "\n", path);
  ::close(fd);
}

// A builder killed mid-line leaves a last line without its newline. Appending after it
// would glue the next sample onto it and turn a skippable tail into a malformed middle
// line, so the writer cuts the file back to its last complete line first.
void drop_truncated_tail(const std::string &path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  std::streamoff end = in.tellg();
  if (!in || end <= 0) return;
  // Backwards in blocks to the last newline: lines are a few kilobytes, files gigabytes.
  std::streamoff keep = 0;
  char block[4096];
  for (std::streamoff pos = end; pos > 0 && keep == 0;) {
    const std::streamoff n = std::min<std::streamoff>(pos, sizeof(block));
    pos -= n;
    in.seekg(pos);
    in.read(block, n);
    for (std::streamoff i = n - 1; i >= 0; --i) {
      if (block[i] == '\n') {
        keep = pos + i + 1;
        break;
      }
    }
  }
  if (keep == end) return;
  std::string tail(static_cast<size_t>(end - keep), '\0');
  in.clear();
  in.seekg(keep);
  in.read(tail.data(), end - keep);
  if (tail_is_a_sample(tail)) {  // complete but for its newline (edited by hand): keep it
    append_line_end(path);
    return;
  }
  spdlog::warn("{}: dropping a truncated last line ({} bytes)", path, end - keep);
  if (::truncate(path.c_str(), static_cast<off_t>(keep)) != 0) {
    throw_io("cannot truncate dataset", path);
  }
}

}  // namespace

std::string sample_to_json_line(const DatasetSample &sample) {
  OrderedJson schedule;
  try {
    schedule = OrderedJson::parse(sample.schedule_json);
  } catch (const OrderedJson::parse_error &e) {
    throw ConfigError("the sample's schedule is not JSON: " + std::string(e.what()));
  }
  OrderedJson j;
  j["format"] = kFormat;
  j["version"] = kDatasetFormatVersion;
  j["app"] = {{"name", sample.app.name},
              {"library", sample.app.library},
              {"generator", sample.app.generator},
              {"params", sample.app.params}};
  j["pipeline_id"] = sample.pipeline_id;
  j["schedule"] = std::move(schedule);
  j["samples_ms"] = sample.samples_ms;
  j["min_ms"] = sample.min_ms;
  j["median_ms"] = sample.median_ms;
  j["stddev_ms"] = sample.stddev_ms;
  j["host_class"] = sample.host_class;
  j["target"] = sample.target;
  return j.dump();
}

DatasetSample sample_from_json_line(const std::string &line) {
  Json j;
  try {
    j = Json::parse(line);
  } catch (const Json::parse_error &e) {
    throw ConfigError(std::string("malformed JSON: ") + e.what());
  }
  if (!j.is_object()) throw ConfigError("a sample must be a JSON object");
  check_version(j);
  refuse_unknown_keys(j,
                      {"format", "version", "app", "pipeline_id", "schedule", "samples_ms",
                       "min_ms", "median_ms", "stddev_ms", "host_class", "target"},
                      "the sample");
  DatasetSample s;
  s.app = app_from_json(field(j, "app", Json::value_t::object, "an object"));
  s.pipeline_id = string_field(j, "pipeline_id");
  s.schedule_json = field(j, "schedule", Json::value_t::object, "an object").dump();
  s.samples_ms = samples_from_json(j);
  s.min_ms = number_field(j, "min_ms");
  s.median_ms = number_field(j, "median_ms");
  s.stddev_ms = number_field(j, "stddev_ms");
  s.host_class = string_field(j, "host_class");
  s.target = string_field(j, "target");
  return s;
}

DatasetWriter::DatasetWriter(std::string path) : path_(std::move(path)) {
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0) drop_truncated_tail(path_);
  const int fd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw_io("cannot open dataset", path_);
  ::close(fd);
}

void DatasetWriter::append(const DatasetSample &sample) {
  // The whole line in one write, then fsync: a crash loses at most this line, and a
  // reader never sees half of an earlier one.
  const std::string line = sample_to_json_line(sample) + "\n";
  const int fd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw_io("cannot open dataset", path_);
  try {
    write_all(fd, line, path_);
    if (::fsync(fd) != 0) throw_io("cannot flush dataset", path_);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) throw_io("cannot close dataset", path_);
}

std::vector<DatasetSample> read_dataset(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_io("cannot read dataset", path);
  std::vector<DatasetSample> samples;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const bool complete = !in.eof();  // getline hit the end before a newline
    if (line.empty()) continue;
    try {
      samples.push_back(sample_from_json_line(line));
    } catch (const ConfigError &e) {
      // Only the last line can lack its newline, and only a writer cut off mid-line
      // leaves one that does not parse.
      if (!complete) {
        spdlog::warn("{}:{}: skipping a truncated last line ({})", path, number, e.what());
        break;
      }
      throw ConfigError(path + ":" + std::to_string(number) + ": " + e.what());
    }
  }
  if (in.bad()) throw_io("cannot read dataset", path);
  return samples;
}

DatasetMergeSummary merge_datasets(const std::vector<std::string> &inputs, const std::string &out) {
  std::set<std::pair<std::string, std::string>> held;  // (pipeline id, schedule JSON)
  struct stat st {};
  if (::stat(out.c_str(), &st) == 0) {
    for (const DatasetSample &s : read_dataset(out)) held.emplace(s.pipeline_id, s.schedule_json);
  }
  std::vector<DatasetSample> fresh;
  DatasetMergeSummary summary;
  for (const std::string &path : inputs) {
    for (DatasetSample &s : read_dataset(path)) {
      if (held.emplace(s.pipeline_id, s.schedule_json).second) {
        fresh.push_back(std::move(s));
      } else {
        ++summary.duplicates;
      }
    }
  }
  DatasetWriter writer(out);
  for (const DatasetSample &s : fresh) writer.append(s);
  summary.appended = fresh.size();
  return summary;
}

}  // namespace protuner
