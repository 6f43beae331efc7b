// A private network namespace for the whole test process, entered during static initialisation
// (before any thread exists, so every thread of the process is in it): nothing a test does reaches
// the host's rules, and nothing is left behind when the process exits. Needs root; tests that
// need it start with REQUIRE_NETNS().
#pragma once

#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include "common/command.h"

namespace minik8s::testing {

inline bool enterPrivateNetns() {
  ::signal(SIGPIPE, SIG_IGN);
  if (::geteuid() != 0 || ::unshare(CLONE_NEWNET) != 0) return false;
  auto up = runProgram({"ip", "link", "set", "lo", "up"});
  return up.ok() && up->exitCode == 0;
}

inline const bool kInPrivateNetns = enterPrivateNetns();

}  // namespace minik8s::testing

#define REQUIRE_NETNS()                     \
  if (!::minik8s::testing::kInPrivateNetns) \
  GTEST_SKIP() << "needs root (a private network namespace)"
