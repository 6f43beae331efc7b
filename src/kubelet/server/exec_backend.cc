#include "kubelet/server/exec_backend.h"

#include <fcntl.h>
#include <pthread.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "common/random.h"

namespace minik8s::kubelet::server {

namespace {

class ChildProcess : public ExecProcess {
 public:
  ChildProcess(pid_t pid, int in, int out, int err, bool tty)
      : pid_(pid), in_(in), out_(out), err_(err), tty_(tty) {}
  ~ChildProcess() override {
    kill();
    wait();
    if (in_ >= 0 && in_ != out_) ::close(in_);
    if (out_ >= 0) ::close(out_);
    if (err_ >= 0) ::close(err_);
  }

  bool writeStdin(std::string_view data) override {
    std::lock_guard lock(mu_);
    if (in_ < 0 || stdinClosed_) return false;
    // A process that stopped reading must not kill the agent with SIGPIPE: block it on this
    // thread and swallow a pending one afterwards.
    sigset_t pipeSet, old;
    sigemptyset(&pipeSet);
    sigaddset(&pipeSet, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipeSet, &old);
    bool ok = true;
    while (!data.empty()) {
      ssize_t n = ::write(in_, data.data(), data.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ok = false;
        break;
      }
      data.remove_prefix(static_cast<size_t>(n));
    }
    if (!ok && errno == EPIPE) {
      timespec zero{0, 0};
      sigtimedwait(&pipeSet, nullptr, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    return ok;
  }
  int stdoutFd() const override { return out_; }
  int stderrFd() const override { return err_; }

  void closeStdin() override {
    std::lock_guard lock(mu_);
    if (in_ < 0 || stdinClosed_) return;
    stdinClosed_ = true;
    if (tty_) {
      const char eof = 4;  // ^D at the start of a line ends a terminal's input
      (void)!::write(in_, &eof, 1);
      return;
    }
    ::close(in_);
    in_ = -1;
  }

  void resize(uint16_t width, uint16_t height) override {
    if (!tty_ || out_ < 0) return;
    winsize ws{};
    ws.ws_col = width;
    ws.ws_row = height;
    ::ioctl(out_, TIOCSWINSZ, &ws);  // the kernel signals SIGWINCH to the foreground group
  }

  int wait() override {
    std::lock_guard lock(waitMu_);
    if (exitCode_ >= 0) return exitCode_;
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    exitCode_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return exitCode_;
  }

  void kill() override {
    if (exitCode_ < 0) ::kill(-pid_, SIGKILL);  // its own session: the whole group
  }

 private:
  pid_t pid_;
  int in_, out_, err_;
  bool tty_;
  bool stdinClosed_ = false;
  std::mutex mu_, waitMu_;
  std::atomic<int> exitCode_{-1};
};

}  // namespace

Result<std::unique_ptr<ExecProcess>> spawnProcess(const std::vector<std::string>& argv, bool tty,
                                                  bool wantStdin, bool wantStdout,
                                                  bool wantStderr) {
  if (argv.empty()) return Status::BadRequest("no command given");
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);

  int master = -1, slave = -1;
  int inPipe[2] = {-1, -1}, outPipe[2] = {-1, -1}, errPipe[2] = {-1, -1};
  auto closeAll = [&] {
    for (int fd :
         {master, slave, inPipe[0], inPipe[1], outPipe[0], outPipe[1], errPipe[0], errPipe[1]}) {
      if (fd >= 0) ::close(fd);
    }
  };
  if (tty) {
    winsize ws{};
    ws.ws_col = 80;
    ws.ws_row = 24;
    if (::openpty(&master, &slave, nullptr, nullptr, &ws) != 0) {
      return Status::Internal(std::string("openpty: ") + std::strerror(errno));
    }
    ::fcntl(master, F_SETFD, FD_CLOEXEC);
  } else {
    bool ok = (!wantStdin || ::pipe2(inPipe, O_CLOEXEC) == 0) &&
              (!wantStdout || ::pipe2(outPipe, O_CLOEXEC) == 0) &&
              (!wantStderr || ::pipe2(errPipe, O_CLOEXEC) == 0);
    if (!ok) {
      closeAll();
      return Status::Internal(std::string("pipe: ") + std::strerror(errno));
    }
  }
  int devNull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  pid_t pid = ::fork();
  if (pid < 0) {
    closeAll();
    ::close(devNull);
    return Status::Internal(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::setsid();
    if (tty) {
      ::ioctl(slave, TIOCSCTTY, 0);
      ::dup2(slave, 0);
      ::dup2(slave, 1);
      ::dup2(slave, 2);
    } else {
      ::dup2(wantStdin ? inPipe[0] : devNull, 0);
      ::dup2(wantStdout ? outPipe[1] : devNull, 1);
      ::dup2(wantStderr ? errPipe[1] : devNull, 2);
    }
    ::syscall(SYS_close_range, 3U, ~0U, 0U);
    ::signal(SIGPIPE, SIG_DFL);
    ::execvp(cargv[0], cargv.data());
    const char msg[] = "exec failed: executable not found\n";
    (void)!::write(2, msg, sizeof(msg) - 1);
    ::_exit(127);
  }
  ::close(devNull);
  if (tty) {
    ::close(slave);
    return std::unique_ptr<ExecProcess>(
        new ChildProcess(pid, wantStdin ? master : -1, master, -1, true));
  }
  if (inPipe[0] >= 0) ::close(inPipe[0]);
  if (outPipe[1] >= 0) ::close(outPipe[1]);
  if (errPipe[1] >= 0) ::close(errPipe[1]);
  return std::unique_ptr<ExecProcess>(
      new ChildProcess(pid, inPipe[1], outPipe[0], errPipe[0], false));
}

CtrExecBackend::CtrExecBackend(std::string containerdAddress, std::string ctrPath,
                               std::string containerdNamespace)
    : address_(std::move(containerdAddress)),
      ctrPath_(std::move(ctrPath)),
      namespace_(std::move(containerdNamespace)) {}

std::string CtrExecBackend::runcRoot() const {
  std::string socket = address_;
  if (socket.rfind("unix://", 0) == 0) socket = socket.substr(7);
  return (std::filesystem::path(socket).parent_path() / "runc" / namespace_).string();
}

std::vector<std::string> CtrExecBackend::commandLine(const ExecSpec& spec,
                                                     const std::string& execId) const {
  std::error_code ec;
  const std::string root = runcRoot();
  // Terminals keep the ctr path: runc's own foreground console echoed a stray ^@ at the start
  // of a session, and interactive sessions do not race with a fast exit.
  if (!spec.tty && std::filesystem::exists(root + "/" + spec.containerId + "/state.json", ec)) {
    std::vector<std::string> argv = {"runc", "--root", root, "exec", spec.containerId};
    argv.insert(argv.end(), spec.command.begin(), spec.command.end());
    return argv;
  }
  std::vector<std::string> argv = {ctrPath_, "-a",   address_,    "-n",  namespace_,
                                   "tasks",  "exec", "--exec-id", execId};
  if (spec.tty) argv.push_back("-t");
  argv.push_back(spec.containerId);
  argv.insert(argv.end(), spec.command.begin(), spec.command.end());
  return argv;
}

Result<std::unique_ptr<ExecProcess>> CtrExecBackend::start(const ExecSpec& spec) {
  if (spec.command.empty()) return Status::BadRequest("you must specify at least one command");
  std::string execId = "exec-" + randomSuffix(12);
  return spawnProcess(commandLine(spec, execId), spec.tty, spec.stdin || spec.tty, spec.stdout,
                      spec.stderr);
}

Result<std::unique_ptr<ExecProcess>> LocalExecBackend::start(const ExecSpec& spec) {
  if (spec.command.empty()) return Status::BadRequest("you must specify at least one command");
  return spawnProcess(spec.command, spec.tty, spec.stdin, spec.stdout, spec.stderr);
}

}  // namespace minik8s::kubelet::server
