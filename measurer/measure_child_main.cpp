// `protuner-measure-child`: the helper process the isolated measurer spawns for each
// measurement (protocol in child_protocol.h). A candidate that crashes, hangs or eats
// memory takes down this process, never the measurer.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <iterator>
#include <new>
#include <string>

#include "measurer/child_protocol.h"
#include "measurer/measure_child.h"
#include "measurer/measure_json.h"

namespace {

namespace cp = protuner::child_protocol;

void write_status_line(const std::string &line) {
  const std::string text = line + "\n";
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(cp::kStatusFd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the parent is gone; nobody is listening
    done += static_cast<size_t>(n);
  }
}

// operator new failed under the address-space limit: there may be no memory left to
// build a result, so exit with the code the parent reads as out_of_memory.
void out_of_memory() {
  static const char kMessage[] = "protuner-measure-child: operator new failed: out of memory\n";
  (void)!write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
  _exit(cp::kExitOutOfMemory);
}

}  // namespace

int main(int argc, char **argv) {
  std::set_new_handler(out_of_memory);
  protuner::ChildMeasureOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--cache-dir" && i + 1 < argc) {
      options.cache_dir = argv[++i];
    } else {
      std::cerr << cp::kExecutableName << ": unknown argument '" << arg
                << "' (usage: " << cp::kExecutableName
                << " --cache-dir DIR < request.json, status on fd " << cp::kStatusFd << ")\n";
      return 2;
    }
  }
  if (options.cache_dir.empty()) {
    std::cerr << cp::kExecutableName << ": --cache-dir is required\n";
    return 2;
  }
  const std::string request((std::istreambuf_iterator<char>(std::cin)),
                            std::istreambuf_iterator<char>());
  const protuner::MeasureResult result = protuner::measure_in_this_process(
      request, options,
      [](const char *phase) { write_status_line(std::string(cp::kPhasePrefix) + phase); });
  write_status_line(cp::kResultPrefix + protuner::result_to_json(result));
  std::cout.flush();
  std::cerr.flush();
  // Skip static destructors: Halide's thread pool and JIT state have nothing to save, and
  // a candidate's corrupted heap must not turn a finished measurement into a crash.
  _exit(0);
}
