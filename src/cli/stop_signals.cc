#include "cli/stop_signals.h"

#include <malloc.h>
#include <pthread.h>

#include <cerrno>
#include <ctime>

namespace minik8s::cli {

sigset_t blockStopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  return set;
}

int waitForStopSignal(const sigset_t& set) {
  // Meanwhile, the waiting thread hands the pages malloc holds free back to the kernel: soon
  // after start-up (whose transient allocations leave holes in the heap that glibc's own
  // trimming, of the heap's top only, does not return) and then every minute.
  timespec wait = {2, 0};
  while (true) {
    int sig = sigtimedwait(&set, nullptr, &wait);
    if (sig > 0) return sig;
    if (errno == EAGAIN) malloc_trim(0);
    wait = {60, 0};
  }
}

}  // namespace minik8s::cli
