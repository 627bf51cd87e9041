// Compiling a candidate ahead of time and running it in protuner-measure-runner
// (compiled_candidate.h).
#include "measurer/compiled_candidate.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/errors.h"
#include "measurer/child_protocol.h"
#include "measurer/run_plan.h"
#include "measurer/timing_json.h"

extern char **environ;

namespace protuner {
namespace {

namespace fs = std::filesystem;

// The compiled function's name, and the runner's file names, inside the candidate's folder.
constexpr char kFunction[] = "candidate";

std::string read_text(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs `argv` (its first word found on PATH when it has no slash) with stdout and stderr
// into files; returns the wait status.
int spawn_and_wait(const std::vector<std::string> &argv, const fs::path &out, const fs::path &err) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char *> args;
  for (const std::string &a : argv) args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw IoError("cannot start '" + argv[0] + "': " + std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw IoError(std::string("waitpid: ") + std::strerror(errno));
  }
  return status;
}

// protuner-measure-runner, beside this process's executable.
std::string runner_executable() {
  return (fs::read_symlink("/proc/self/exe").parent_path() / "protuner-measure-runner").string();
}

PlannedArgument planned_buffer(PlannedArgument::Kind kind, const Halide::Buffer<> &buffer) {
  const halide_buffer_t *raw = buffer.raw_buffer();
  PlannedArgument a;
  a.kind = kind;
  a.type = raw->type;
  a.dims.assign(raw->dim, raw->dim + raw->dimensions);
  if (kind == PlannedArgument::Kind::kInput) {
    const uint64_t bytes = allocation_bytes(a.type, a.dims);
    a.data.assign(raw->host, raw->host + bytes);
  }
  return a;
}

}  // namespace

CompiledCandidate::CompiledCandidate(Halide::Pipeline &pipeline, const Halide::Target &target,
                                     std::string dir, const std::string &linker)
    : dir_(std::move(dir)), arguments_(pipeline.infer_arguments()) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) throw IoError("cannot create '" + dir_ + "': " + ec.message());
  const std::string prefix = (fs::path(dir_) / kFunction).string();
  pipeline.compile_to_static_library(prefix, arguments_, kFunction, target);
  shared_object_ = prefix + ".so";
  const int status = spawn_and_wait({linker, "-shared", "-o", shared_object_, "-Wl,--whole-archive",
                                     prefix + ".a", "-Wl,--no-whole-archive", "-lpthread", "-ldl"},
                                    fs::path(dir_) / "link.out", fs::path(dir_) / "link.err");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw IoError("linking the compiled candidate with '" + linker +
                  "' failed: " + read_text(fs::path(dir_) / "link.err"));
  }
}

void CompiledCandidate::plan(const std::vector<BoundInput> &inputs,
                             const Halide::Realization &outputs) {
  std::vector<PlannedArgument> planned;
  for (const Halide::Argument &arg : arguments_) {
    const auto bound = std::find_if(inputs.begin(), inputs.end(),
                                    [&](const BoundInput &b) { return b.name == arg.name; });
    if (bound == inputs.end()) {
      throw ConfigError("the compiled candidate's argument '" + arg.name + "' is not bound");
    }
    if (arg.is_buffer()) {
      planned.push_back(planned_buffer(PlannedArgument::Kind::kInput, bound->buffer));
      continue;
    }
    PlannedArgument a;
    a.kind = PlannedArgument::Kind::kScalar;
    a.type = arg.type;
    a.data.assign(sizeof(halide_scalar_value_t), 0);
    std::memcpy(a.data.data(), bound->param.scalar_address(), arg.type.bytes());
    planned.push_back(std::move(a));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    planned.push_back(planned_buffer(PlannedArgument::Kind::kOutput, outputs[i]));
  }
  write_run_plan((fs::path(dir_) / "plan").string(), planned);
}

CompiledCandidate::RunnerEnd CompiledCandidate::run_runner(
    const std::string &app_library, const std::vector<std::string> &extra) const {
  std::vector<std::string> argv = {runner_executable(),
                                   "--candidate",
                                   shared_object_,
                                   "--function",
                                   kFunction,
                                   "--plan",
                                   (fs::path(dir_) / "plan").string(),
                                   "--app-library",
                                   app_library};
  argv.insert(argv.end(), extra.begin(), extra.end());
  RunnerEnd end;
  end.wait_status =
      spawn_and_wait(argv, fs::path(dir_) / "runner.out", fs::path(dir_) / "runner.err");
  end.out = read_text(fs::path(dir_) / "runner.out");
  end.err = read_text(fs::path(dir_) / "runner.err");
  return end;
}

std::optional<RunnerFailure> CompiledCandidate::failure_of(const RunnerEnd &end) const {
  const int s = end.wait_status;
  if (WIFEXITED(s) && WEXITSTATUS(s) == 0) return std::nullopt;
  const std::string said = end.err.empty() ? std::string() : ": " + end.err;
  if (WIFSIGNALED(s)) {
    // SIGKILL not sent by us (the parent kills the whole group at a deadline) is the
    // kernel's OOM killer.
    if (WTERMSIG(s) == SIGKILL) {
      return RunnerFailure{MeasureStatus::kOutOfMemory, "the candidate was killed" + said};
    }
    return RunnerFailure{MeasureStatus::kRuntimeCrash,
                         "the candidate died of signal " + std::to_string(WTERMSIG(s)) + " (" +
                             strsignal(WTERMSIG(s)) + ") while running" + said};
  }
  if (WEXITSTATUS(s) == 1) {
    const bool oom = end.err.find("Out of memory") != std::string::npos ||
                     end.err.find("out of memory") != std::string::npos;
    return RunnerFailure{oom ? MeasureStatus::kOutOfMemory : MeasureStatus::kRuntimeCrash,
                         "the candidate failed" + said};
  }
  if (WEXITSTATUS(s) == child_protocol::kExitOutOfMemory) {
    return RunnerFailure{MeasureStatus::kOutOfMemory, "the candidate ran out of memory" + said};
  }
  if (WEXITSTATUS(s) == 3) {
    return RunnerFailure{MeasureStatus::kCompileError,
                         "the compiled candidate does not load" + said};
  }
  return RunnerFailure{MeasureStatus::kMeasurerError, "protuner-measure-runner exited with " +
                                                          std::to_string(WEXITSTATUS(s)) + said};
}

std::optional<RunnerFailure> CompiledCandidate::run_once(const std::string &app_library,
                                                         Halide::Realization &outputs) const {
  const std::string path = (fs::path(dir_) / "outputs").string();
  if (auto failure = failure_of(run_runner(app_library, {"--outputs", path}))) return failure;
  const std::vector<PlannedArgument> back = read_run_plan(path);
  size_t k = 0;
  for (const PlannedArgument &a : back) {
    if (a.kind != PlannedArgument::Kind::kOutput) continue;
    halide_buffer_t *raw = outputs[k++].raw_buffer();
    if (a.data.size() != allocation_bytes(raw->type, a.dims)) {
      throw ConfigError("the runner returned an output of another size");
    }
    std::memcpy(raw->host, a.data.data(), a.data.size());
  }
  return std::nullopt;
}

std::optional<RunnerFailure> CompiledCandidate::time(const std::string &app_library,
                                                     const TimingSettings &s,
                                                     TimingResult &timing) const {
  const RunnerEnd end = run_runner(app_library, {"--time", timing_settings_to_json(s)});
  if (auto failure = failure_of(end)) return failure;
  try {
    timing = timing_result_from_json(end.out);
  } catch (const ConfigError &e) {
    return RunnerFailure{MeasureStatus::kMeasurerError,
                         "protuner-measure-runner printed no timing: " + std::string(e.what())};
  }
  return std::nullopt;
}

}  // namespace protuner
