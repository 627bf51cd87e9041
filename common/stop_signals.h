// How every daemon of the farm hears that it should stop: SIGINT and SIGTERM both run one
// handler, which asks the daemon to finish or hand back what it holds and exit 0.
#pragma once

#include <signal.h>

namespace protuner {

// Installs `handler` (async-signal-safe: an atomic store) for SIGINT and SIGTERM.
inline void install_stop_handler(void (*handler)(int)) {
  struct sigaction action {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

}  // namespace protuner
