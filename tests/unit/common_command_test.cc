// runProgram: a program's combined output and exit code, its stdin fed while its output is
// drained (no deadlock on full pipes either way), a missing program reported as a shell does,
// and no descriptor of ours leaking into the program.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>

#include "common/command.h"

namespace minik8s {
namespace {

TEST(RunProgramTest, OutputAndExitCode) {
  auto r = runProgram({"sh", "-c", "echo out; echo err >&2; exit 3"});
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ(r->exitCode, 3);
  EXPECT_EQ(r->output, "out\nerr\n");
  auto checked = runChecked({"sh", "-c", "echo nope; exit 1"});
  ASSERT_FALSE(checked.ok());
  EXPECT_EQ(checked.status().message(), "`sh -c echo nope; exit 1` failed (exit 1): nope");
}

TEST(RunProgramTest, LargeStdinAndOutputTogether) {
  std::string input(4 << 20, 'x');  // far more than a pipe holds
  auto r = runProgram({"cat"}, input);
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ(r->exitCode, 0);
  EXPECT_EQ(r->output.size(), input.size());
}

TEST(RunProgramTest, AMissingProgramIsExitCode127) {
  auto r = runProgram({"/nonexistent/minik8s-no-such-program", "a"});
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ(r->exitCode, 127);
  EXPECT_EQ(r->output.rfind("cannot run /nonexistent/minik8s-no-such-program: ", 0), 0u)
      << r->output;
}

TEST(RunProgramTest, OnlyTheStandardDescriptorsAndAClearSignalMask) {
  // A signal blocked in this thread must not stay blocked in the program.
  sigset_t usr1, old;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &usr1, &old);
  auto r = runProgram({"sh", "-c",
                       "ls /proc/self/fd | sort -n | tr '\\n' ' '; "
                       "grep SigBlk /proc/self/status"});
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().toString();
  // 0-2, and the descriptor ls itself opens for /proc/self/fd.
  EXPECT_EQ(r->output.substr(0, r->output.find("SigBlk")), "0 1 2 3 ") << r->output;
  EXPECT_NE(r->output.find("SigBlk:\t0000000000000000"), std::string::npos) << r->output;
}

}  // namespace
}  // namespace minik8s
