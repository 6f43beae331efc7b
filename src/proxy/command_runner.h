// runCommand: runs a program to completion, feeding it a string on stdin and collecting its
// stdout and stderr. The proxy drives iptables-restore / iptables-save / iptables through it.
//
// Thread-safe (no shared state); the child gets an empty signal mask so a parent that blocks
// SIGTERM for sigwait() does not pass that on.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace minik8s::proxy {

struct CommandOutput {
  int exitCode = 0;  // 128 + signal when killed by a signal
  std::string out;
  std::string err;
};

// argv[0] is looked up on PATH. Fails only when the program cannot be started; a non-zero exit
// is reported in exitCode.
Result<CommandOutput> runCommand(const std::vector<std::string>& argv,
                                 const std::string& input = "");

}  // namespace minik8s::proxy
