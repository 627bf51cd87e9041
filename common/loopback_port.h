// A free TCP port on 127.0.0.1, for daemons that `protuner up` and the tests start on
// loopback: the kernel picks it (bind to port 0), and it is released for the caller to bind.
#pragma once

namespace protuner {

// A port on 127.0.0.1 that was free a moment ago. Another process may take it before the
// caller binds it; the daemons that get one fail loudly at bind when that happens.
// Throws IoError when no socket can be bound.
int free_loopback_port();

}  // namespace protuner
