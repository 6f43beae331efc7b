#include "common/command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <thread>

namespace minik8s {

std::string commandLine(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& a : argv) {
    if (!line.empty()) line += ' ';
    line += a;
  }
  return line;
}

Result<CommandResult> runProgram(const std::vector<std::string>& argv,
                                 const std::string& stdinText) {
  if (argv.empty()) return Status::BadRequest("runProgram: empty command");
  int outPipe[2], inPipe[2];
  if (::pipe2(outPipe, O_CLOEXEC) != 0)
    return Status::Internal("pipe: " + std::string(strerror(errno)));
  if (::pipe2(inPipe, O_CLOEXEC) != 0) {
    ::close(outPipe[0]);
    ::close(outPipe[1]);
    return Status::Internal("pipe: " + std::string(strerror(errno)));
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // posix_spawn, not fork: the child shares our memory until it execs instead of copying our
  // page tables, which costs milliseconds per run in a process of a few hundred MiB (the proxy's
  // iptables-restore per sync, the CNI plugins per pod). The pipes' ends are O_CLOEXEC; only the
  // dup2'ed copies reach the program. The signal mask is cleared (a thread may block some).
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, inPipe[0], 0);
  posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, outPipe[1], 2);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);  // what we inherited without O_CLOEXEC
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  pid_t pid = 0;
  const int spawned = ::posix_spawnp(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (spawned != 0) {
    for (int fd : {outPipe[0], outPipe[1], inPipe[0], inPipe[1]}) ::close(fd);
    // As a shell says it: the program's output is the reason, the exit code 127.
    CommandResult failed;
    failed.exitCode = 127;
    failed.output = "cannot run " + argv[0] + ": " + strerror(spawned) + "\n";
    return failed;
  }
  ::close(outPipe[1]);
  ::close(inPipe[0]);
  // Feed stdin and drain stdout together so neither side blocks on a full pipe.
  size_t written = 0;
  int inFd = inPipe[1];
  if (stdinText.empty()) {
    ::close(inFd);
    inFd = -1;
  } else {
    ::fcntl(inFd, F_SETFL, O_NONBLOCK);
  }
  CommandResult result;
  char buf[8192];
  for (;;) {
    pollfd fds[2] = {{outPipe[0], POLLIN, 0}, {inFd, POLLOUT, 0}};
    const int n = ::poll(fds, inFd >= 0 ? 2 : 1, -1);
    if (n < 0 && errno == EINTR) continue;
    if (inFd >= 0 && (fds[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
      const ssize_t w = ::write(inFd, stdinText.data() + written, stdinText.size() - written);
      if (w > 0) written += static_cast<size_t>(w);
      if (w < 0 && errno != EAGAIN) written = stdinText.size();
      if (written >= stdinText.size()) {
        ::close(inFd);
        inFd = -1;
      }
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      const ssize_t r = ::read(outPipe[0], buf, sizeof buf);
      if (r > 0) {
        result.output.append(buf, static_cast<size_t>(r));
      } else if (r == 0 || errno != EINTR) {
        break;
      }
    }
  }
  if (inFd >= 0) ::close(inFd);
  ::close(outPipe[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

void stopLeftoverProcess(const std::string& pidFile, const std::string& marker,
                         bool killAfterGrace) {
  if (pidFile.empty()) return;
  std::ifstream in(pidFile);
  pid_t pid = 0;
  if (!(in >> pid) || pid <= 1) return;
  std::ifstream cmd("/proc/" + std::to_string(pid) + "/cmdline");
  std::string line((std::istreambuf_iterator<char>(cmd)), std::istreambuf_iterator<char>());
  if (line.find(marker) == std::string::npos) return;
  ::kill(pid, SIGTERM);
  for (int i = 0; i < 200 && ::kill(pid, 0) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (killAfterGrace && ::kill(pid, 0) == 0) ::kill(pid, SIGKILL);
}

Result<std::string> runChecked(const std::vector<std::string>& argv, const std::string& stdinText) {
  auto r = runProgram(argv, stdinText);
  if (!r.ok()) return r.status();
  if (r->exitCode != 0) {
    std::string out = r->output;
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    return Status::Internal("`" + commandLine(argv) + "` failed (exit " +
                            std::to_string(r->exitCode) + "): " + out);
  }
  return std::move(r->output);
}

}  // namespace minik8s
