#include "common/child_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "fmt/format.h"

namespace minik8s {

ChildProcess::~ChildProcess() { stop(); }

Status ChildProcess::start(const std::vector<std::string>& argv, const std::string& logFile) {
  if (running()) return Status::Ok();
  if (argv.empty()) return Status::BadRequest("empty command");
  const std::string logPath = logFile.empty() ? "/dev/null" : logFile;
  int logFd = ::open(logPath.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (logFd < 0) {
    return Status::Internal(fmt::format("cannot open {}: {}", logPath, std::strerror(errno)));
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // An exec failure is reported through a close-on-exec pipe: EOF means exec succeeded.
  int errPipe[2];
  if (pipe2(errPipe, O_CLOEXEC) != 0) {
    ::close(logFd);
    return Status::Internal("pipe failed");
  }
  pid_t pid = fork();
  if (pid < 0) {
    ::close(logFd);
    ::close(errPipe[0]);
    ::close(errPipe[1]);
    return Status::Internal(fmt::format("fork failed: {}", std::strerror(errno)));
  }
  if (pid == 0) {
    setpgid(0, 0);  // own process group: a terminal's ^C goes to the parent, which stops us
    // The parent may block SIGTERM to sigwait() for it; the mask survives exec, so clear it.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    int devnull = ::open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    dup2(logFd, 1);
    dup2(logFd, 2);
    execvp(args[0], args.data());
    int e = errno;
    ssize_t ignored = ::write(errPipe[1], &e, sizeof(e));
    (void)ignored;
    _exit(127);
  }
  ::close(logFd);
  ::close(errPipe[1]);
  int childErrno = 0;
  ssize_t n = ::read(errPipe[0], &childErrno, sizeof(childErrno));
  ::close(errPipe[0]);
  if (n == sizeof(childErrno)) {
    waitpid(pid, nullptr, 0);
    return Status::Internal(fmt::format("cannot run {}: {}", argv[0], std::strerror(childErrno)));
  }
  pid_ = pid;
  return Status::Ok();
}

bool ChildProcess::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == 0) return true;
  if (r == pid_) exitStatus_ = status;
  pid_ = -1;
  return false;
}

Status ChildProcess::signal(int signo) {
  if (!running()) return Status::Unavailable("process is not running");
  if (::kill(pid_, signo) != 0) {
    return Status::Internal(
        fmt::format("signal {} to pid {}: {}", signo, pid_, std::strerror(errno)));
  }
  return Status::Ok();
}

void ChildProcess::stop(std::chrono::milliseconds grace) {
  if (!running()) return;
  ::kill(pid_, policy_.signal);
  auto deadline = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!running()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (policy_.killGroup) ::kill(-pid_, SIGKILL);  // it leads its group (setpgid at start)
  ::kill(pid_, SIGKILL);
  int status = 0;
  if (waitpid(pid_, &status, 0) == pid_) exitStatus_ = status;
  pid_ = -1;
}

bool unixSocketAnswers(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) return false;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

bool tcpPortAnswers(const std::string& host, int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) return false;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

}  // namespace minik8s
