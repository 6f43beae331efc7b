#include "cli/malloc_tuning.h"

#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string_view>
#include <thread>

namespace minik8s::cli {
namespace {

constexpr const char* kTunables = "glibc.malloc.tcache_count=128";
// Set beside GLIBC_TUNABLES for the second start: the tunables are ours to remove.
constexpr const char* kMarker = "MINIK8S_MALLOC_TUNED";

// The control plane's commands. A node's (agent, proxy) keep glibc's cache: there the larger one
// cost 1.2 MiB of the agent's RSS with 30 pods (kubelet_pod_start_bench), and memory is what
// counts on a node.
bool controlPlane(int argc, char** argv) {
  if (argc < 2) return false;
  const std::string_view command = argv[1];
  return command == "server" || command == "scheduler" || command == "controller-manager";
}

// The commands that run for long: their freed memory is given back to the kernel now and then.
bool longRunning(int argc, char** argv) {
  if (controlPlane(argc, argv)) return true;
  const std::string_view command = argc < 2 ? "" : argv[1];
  return command == "agent" || command == "proxy";
}

constexpr std::chrono::seconds kTrimPeriod{10};
constexpr size_t kTrimAbove = 8 << 20;  // free bytes in the arenas

// glibc keeps the free chunks inside its arenas resident (only what is free at an arena's top goes
// back); malloc_trim(0) returns every whole free page among them to the kernel, as Go's scavenger
// does for Go programs. It holds each arena's lock while it works (3 ms on an idle server, up to
// ~100 ms once after 10,000 pods were created and listed), so it runs only when at least 8 MiB
// are free. Detached: it sleeps until the process exits.
void startHeapTrimmer() {
  std::thread([] {
    for (;;) {
      std::this_thread::sleep_for(kTrimPeriod);
      if (mallinfo2().fordblks >= kTrimAbove) malloc_trim(0);
    }
  }).detach();
}

}  // namespace

void tuneMalloc(int argc, char** argv) {
  if (std::getenv(kMarker) != nullptr) {
    unsetenv(kMarker);
    unsetenv("GLIBC_TUNABLES");
  } else if (controlPlane(argc, argv) && std::getenv("GLIBC_TUNABLES") == nullptr &&
             std::getenv("LD_PRELOAD") == nullptr) {
    setenv("GLIBC_TUNABLES", kTunables, 1);
    setenv(kMarker, "1", 1);
    execv("/proc/self/exe", argv);
    unsetenv(kMarker);  // not executed (no /proc?): go on with glibc's cache
    unsetenv("GLIBC_TUNABLES");
  }
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, 2);
  if (longRunning(argc, argv)) startHeapTrimmer();
}

}  // namespace minik8s::cli
