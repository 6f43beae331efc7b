// Running a program and capturing what it prints: fork/exec without a shell (arguments are
// passed as they are), optional text on its stdin, stdout and stderr captured together.
// Used for iproute2, iptables and mount helpers. Thread-safe (no shared state).
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace minik8s {

struct CommandResult {
  int exitCode = -1;   // -1 when killed by a signal
  std::string output;  // stdout and stderr, interleaved
};

// Runs argv[0] (looked up on PATH) to completion. Fails only when it cannot be started.
Result<CommandResult> runProgram(const std::vector<std::string>& argv,
                                 const std::string& stdinText = "");

// Like runProgram, but a non-zero exit is an error whose message has the command and its output.
Result<std::string> runChecked(const std::vector<std::string>& argv,
                               const std::string& stdinText = "");

// Ends a daemon an earlier, killed owner left running: the PID in `pidFile`, only if its command
// line mentions `marker` (guards against a reused PID). SIGTERM, up to 2 s, then SIGKILL when
// `killAfterGrace`. Returns at once when the file or the process is missing.
void stopLeftoverProcess(const std::string& pidFile, const std::string& marker,
                         bool killAfterGrace);

// "ip link add ..." for messages.
std::string commandLine(const std::vector<std::string>& argv);

}  // namespace minik8s
