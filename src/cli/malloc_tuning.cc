#include "cli/malloc_tuning.h"

#include <malloc.h>
#include <unistd.h>

#include <cstdlib>
#include <string_view>

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
}

}  // namespace minik8s::cli
