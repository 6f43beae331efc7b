// glibc malloc settings: the control plane's commands (server, scheduler, controller-manager) are
// many threads on few cores that build and drop JSON trees of thousands of small nodes per
// second.
#pragma once

namespace minik8s::cli {

// Call first thing in main. Settings the environment gives (GLIBC_TUNABLES, MALLOC_ARENA_MAX)
// win over these, and a process started with LD_PRELOAD (heaptrack, valgrind, another malloc)
// does not execute itself again:
// - For a control-plane command, a thread's malloc cache keeps up to 128 freed chunks of each
//   size instead of glibc's 7: a tree of a few hundred nodes freed and the next one built then
//   stay in the thread's cache instead of going through the arena's bins (apiserver_api_bench:
//   29% less server CPU per create, the same RSS). glibc reads that only from GLIBC_TUNABLES as
//   the process starts, so the process executes itself again once with it set, and then removes
//   it from its environment: the programs it starts (containerd, runc, CNI plugins) run with
//   glibc's defaults. Other commands (the agent, the CLI) start once, with glibc's cache.
// - For every command, at most two malloc arenas (M_ARENA_MAX) instead of eight per core, each
//   keeping the pages it freed: 20-35 MiB less for a server with 10,000 pods, no slower.
// - For the commands that run for long (server, scheduler, controller-manager, agent, proxy), a
//   thread gives the whole free pages inside the arenas back to the kernel every 10 s
//   (malloc_trim(0)): glibc keeps them resident otherwise. A server on etcd after creating and
//   listing 10,000 pods held 65 MiB of free chunks (206 MiB RSS; 149 MiB after a trim).
// Returns only if it did not execute the program again.
void tuneMalloc(int argc, char** argv);

}  // namespace minik8s::cli
