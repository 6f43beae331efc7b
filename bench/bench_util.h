// What the scenario benchmarks share: starting the real binaries as children that die with the
// bench, the machine's load average printed beside every figure, a free loopback port, a
// process's memory and CPU from /proc, percentiles, a private network namespace, and sweeping
// the run directories a killed bench left behind.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace minik8s::bench {

struct SpawnOptions {
  int deathSignal = SIGKILL;  // sent to the child when the bench dies
  uid_t uid = 0;              // 0: the bench's own; otherwise the child's uid and gid
};

// Starts `args` (args[0] looked up in PATH) with stdout and stderr to `log`, the signal mask
// cleared (a bench blocking signals for its own handler must not pass that on); -1 on failure.
pid_t spawn(const std::vector<std::string>& args, const std::string& log,
            const SpawnOptions& options = {});

std::string loadAverage();  // "1.23 0.98 0.75", as /proc/loadavg gives it

int freePort();  // a loopback TCP port that was free a moment ago (0 if none could be bound)

// A field of /proc/PID/status in KiB ("VmRSS", "RssAnon", "RssFile"); -1 if unreadable.
long statusKiB(pid_t pid, const std::string& field);
inline long rssKiB(pid_t pid) { return statusKiB(pid, "VmRSS"); }
long pssKiB(pid_t pid);        // from /proc/PID/smaps_rollup; -1 if unreadable
double cpuSeconds(pid_t pid);  // user + system time so far; 0 if unreadable

// The p-th percentile (0-100, nearest rank) of `values`; 0 when there are none.
double percentile(std::vector<double> values, double p);

// Moves the calling process into a new network namespace (root only); ignores SIGPIPE.
bool enterPrivateNetns();

// Removes TMPDIR/<prefix><pid>... directories whose owning bench process is gone.
void removeStaleRunDirs(const std::string& prefix);

}  // namespace minik8s::bench
