// The stop signals of a long-running command (server, agent, proxy, ...): SIGINT and SIGTERM are
// blocked in the calling thread before any other thread starts, so every thread inherits the
// mask and only waitForStopSignal() sees them; SIGPIPE is ignored (a peer that hangs up is an
// error on the write, not the end of the process).
#pragma once

#include <signal.h>

namespace minik8s::cli {

sigset_t blockStopSignals();

// Blocks until SIGINT or SIGTERM (or another signal of `set`) arrives; returns it. While it
// waits, it returns freed heap pages to the kernel (malloc_trim) now and then.
int waitForStopSignal(const sigset_t& set);

}  // namespace minik8s::cli
