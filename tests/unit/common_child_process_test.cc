// ChildProcess: a missing program is an error, output lands in the log file, the exit is
// recorded, signals reach the child, stop() uses the policy's signal and falls back to SIGKILL
// (of the whole process group when asked); the readiness probes for sockets.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/child_process.h"

namespace minik8s {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class ChildProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("minik8s-child-process-test-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    log_ = (dir_ / "out.log").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string logText() const {
    std::ifstream in(log_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  // Scripts print "ready" once their traps are set, so a signal never races the shell's start.
  bool waitForLog(const std::string& text) const {
    for (int i = 0; i < 300; ++i) {
      if (logText().find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }
  static bool waitUntilEnded(ChildProcess& p) {
    for (int i = 0; i < 300 && p.running(); ++i) std::this_thread::sleep_for(10ms);
    return !p.running();
  }
  // Gone or a zombie (the reaper of an orphan may be slow or absent in a container).
  static bool processGone(pid_t pid) {
    for (int i = 0; i < 200; ++i) {
      std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
      std::string pidField, comm, state;
      if (!(stat >> pidField >> comm >> state) || state == "Z") return true;
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }

  fs::path dir_;
  std::string log_;
};

TEST_F(ChildProcessTest, ReportsAMissingProgram) {
  ChildProcess p;
  Status s = p.start({"/nonexistent/program"}, log_);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cannot run /nonexistent/program: No such file"), std::string::npos)
      << s.message();
  EXPECT_FALSE(p.running());
  EXPECT_EQ(p.pid(), -1);
  EXPECT_EQ(p.start({}, log_).code(), 400);
}

TEST_F(ChildProcessTest, WritesOutputToTheLogAndRecordsTheExit) {
  ChildProcess p;
  ASSERT_TRUE(p.start({"sh", "-c", "echo out; echo err >&2; exit 3"}, log_).ok());
  EXPECT_GT(p.pid(), 0);
  ASSERT_TRUE(waitUntilEnded(p));
  EXPECT_EQ(p.pid(), -1);
  ASSERT_TRUE(WIFEXITED(p.lastExitStatus()));
  EXPECT_EQ(WEXITSTATUS(p.lastExitStatus()), 3);
  EXPECT_EQ(logText(), "out\nerr\n");
  // Appends: a restart keeps the earlier output.
  ASSERT_TRUE(p.start({"sh", "-c", "echo again"}, log_).ok());
  ASSERT_TRUE(waitUntilEnded(p));
  EXPECT_EQ(logText(), "out\nerr\nagain\n");
}

TEST_F(ChildProcessTest, AnEmptyLogFileMeansDevNull) {
  ChildProcess p;
  ASSERT_TRUE(p.start({"sh", "-c", "echo nowhere; exit 0"}, "").ok());
  ASSERT_TRUE(waitUntilEnded(p));
  EXPECT_TRUE(WIFEXITED(p.lastExitStatus()));
}

TEST_F(ChildProcessTest, SignalReachesTheChild) {
  ChildProcess p;
  EXPECT_EQ(p.signal(SIGHUP).code(), 503);  // not running
  ASSERT_TRUE(
      p.start({"sh", "-c", "trap 'echo hup; exit 5' HUP; echo ready; while :; do sleep 0.05; done"},
              log_)
          .ok());
  ASSERT_TRUE(waitForLog("ready"));
  ASSERT_TRUE(p.signal(SIGHUP).ok());
  ASSERT_TRUE(waitUntilEnded(p));
  EXPECT_EQ(WEXITSTATUS(p.lastExitStatus()), 5);
  EXPECT_TRUE(waitForLog("hup"));
}

TEST_F(ChildProcessTest, StopUsesThePolicySignal) {
  ChildProcess p(StopPolicy{.signal = SIGQUIT});
  ASSERT_TRUE(p.start({"sh", "-c",
                       "trap 'exit 7' QUIT; trap 'exit 8' TERM; echo ready; "
                       "while :; do sleep 0.05; done"},
                      log_)
                  .ok());
  ASSERT_TRUE(waitForLog("ready"));
  p.stop(5s);
  EXPECT_FALSE(p.running());
  ASSERT_TRUE(WIFEXITED(p.lastExitStatus()));
  EXPECT_EQ(WEXITSTATUS(p.lastExitStatus()), 7);
}

TEST_F(ChildProcessTest, StopKillsAChildThatIgnoresTheStopSignal) {
  ChildProcess p;
  // The ignored disposition survives exec, so sleep itself ignores SIGTERM.
  ASSERT_TRUE(p.start({"sh", "-c", "trap '' TERM; echo ready; exec sleep 30"}, log_).ok());
  ASSERT_TRUE(waitForLog("ready"));
  const auto begin = std::chrono::steady_clock::now();
  p.stop(300ms);
  EXPECT_GE(std::chrono::steady_clock::now() - begin, 300ms);
  EXPECT_FALSE(p.running());
  ASSERT_TRUE(WIFSIGNALED(p.lastExitStatus()));
  EXPECT_EQ(WTERMSIG(p.lastExitStatus()), SIGKILL);
}

TEST_F(ChildProcessTest, KillGroupAlsoEndsTheChildsOwnChildren) {
  const std::string script =
      "trap '' TERM; sleep 30 & echo $! > " + (dir_ / "grandchild").string() + "; echo ready; wait";
  auto grandchild = [&] {
    std::ifstream in(dir_ / "grandchild");
    pid_t pid = -1;
    in >> pid;
    return pid;
  };
  {
    ChildProcess p(StopPolicy{.killGroup = true});
    ASSERT_TRUE(p.start({"sh", "-c", script}, log_).ok());
    ASSERT_TRUE(waitForLog("ready"));
    const pid_t sleeper = grandchild();
    ASSERT_GT(sleeper, 0);
    p.stop(100ms);
    EXPECT_TRUE(processGone(sleeper));
  }
  {
    fs::remove(dir_ / "grandchild");
    fs::remove(log_);
    ChildProcess p;  // without: only the direct child is killed
    ASSERT_TRUE(p.start({"sh", "-c", script}, log_).ok());
    ASSERT_TRUE(waitForLog("ready"));
    const pid_t sleeper = grandchild();
    ASSERT_GT(sleeper, 0);
    p.stop(100ms);
    EXPECT_FALSE(processGone(sleeper));
    ::kill(sleeper, SIGKILL);  // ours: the test started it
  }
}

TEST(SocketProbeTest, AnswersOnlyWhileSomethingListens) {
  int tcp = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(tcp, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(tcp, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(getsockname(tcp, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int port = ntohs(addr.sin_port);
  EXPECT_FALSE(tcpPortAnswers("127.0.0.1", port));  // bound, not listening
  ASSERT_EQ(listen(tcp, 1), 0);
  EXPECT_TRUE(tcpPortAnswers("127.0.0.1", port));
  EXPECT_FALSE(tcpPortAnswers("not-an-ip", port));
  close(tcp);
  EXPECT_FALSE(tcpPortAnswers("127.0.0.1", port));

  const std::string path =
      (fs::temp_directory_path() / ("minik8s-probe-" + std::to_string(getpid()) + ".sock"))
          .string();
  fs::remove(path);
  EXPECT_FALSE(unixSocketAnswers(path));
  int unixFd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un un{};
  un.sun_family = AF_UNIX;
  std::strncpy(un.sun_path, path.c_str(), sizeof(un.sun_path) - 1);
  ASSERT_EQ(bind(unixFd, reinterpret_cast<sockaddr*>(&un), sizeof(un)), 0);
  ASSERT_EQ(listen(unixFd, 1), 0);
  EXPECT_TRUE(unixSocketAnswers(path));
  EXPECT_FALSE(unixSocketAnswers(std::string(200, 'x')));  // longer than sun_path
  close(unixFd);
  fs::remove(path);
  EXPECT_FALSE(unixSocketAnswers(path));
}

}  // namespace
}  // namespace minik8s
