#include "proxy/command_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "fmt/format.h"

namespace minik8s::proxy {

namespace {

void closeFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

Result<CommandOutput> runCommand(const std::vector<std::string>& argv, const std::string& input) {
  if (argv.empty()) return Status::BadRequest("empty command");
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  int in[2], out[2], err[2], execErr[2];
  if (pipe2(in, O_CLOEXEC) != 0) return Status::Internal("pipe failed");
  if (pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]), ::close(in[1]);
    return Status::Internal("pipe failed");
  }
  if (pipe2(err, O_CLOEXEC) != 0) {
    ::close(in[0]), ::close(in[1]), ::close(out[0]), ::close(out[1]);
    return Status::Internal("pipe failed");
  }
  if (pipe2(execErr, O_CLOEXEC) != 0) {
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) ::close(fd);
    return Status::Internal("pipe failed");
  }
  pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1], execErr[0], execErr[1]}) {
      ::close(fd);
    }
    return Status::Internal(fmt::format("fork failed: {}", std::strerror(errno)));
  }
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    execvp(args[0], args.data());
    int e = errno;
    ssize_t ignored = ::write(execErr[1], &e, sizeof(e));
    (void)ignored;
    _exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  ::close(execErr[1]);
  int childErrno = 0;
  ssize_t n = ::read(execErr[0], &childErrno, sizeof(childErrno));
  ::close(execErr[0]);
  if (n == sizeof(childErrno)) {
    ::close(in[1]), ::close(out[0]), ::close(err[0]);
    waitpid(pid, nullptr, 0);
    return Status::Internal(fmt::format("cannot run {}: {}", argv[0], std::strerror(childErrno)));
  }

  // Write stdin and drain stdout/stderr together: a large output must not block a large input.
  CommandOutput result;
  // A child that exits without reading its input must not kill us with SIGPIPE: block it in this
  // thread while writing and swallow a pending one afterwards.
  sigset_t pipeSet, oldMask;
  sigemptyset(&pipeSet);
  sigaddset(&pipeSet, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipeSet, &oldMask);
  int inFd = in[1], outFd = out[0], errFd = err[0];
  fcntl(inFd, F_SETFL, O_NONBLOCK);
  size_t written = 0;
  if (input.empty()) closeFd(inFd);
  char buf[65536];
  while (inFd >= 0 || outFd >= 0 || errFd >= 0) {
    pollfd fds[3];
    int count = 0;
    if (inFd >= 0) fds[count++] = {inFd, POLLOUT, 0};
    if (outFd >= 0) fds[count++] = {outFd, POLLIN, 0};
    if (errFd >= 0) fds[count++] = {errFd, POLLIN, 0};
    if (::poll(fds, count, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < count; ++i) {
      if (fds[i].revents == 0) continue;
      if (fds[i].fd == inFd) {
        ssize_t w = ::write(inFd, input.data() + written, input.size() - written);
        if (w > 0) written += static_cast<size_t>(w);
        if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == input.size()) {
          closeFd(inFd);
        }
      } else {
        int& fd = fds[i].fd == outFd ? outFd : errFd;
        std::string& sink = fds[i].fd == outFd ? result.out : result.err;
        ssize_t r = ::read(fd, buf, sizeof(buf));
        if (r > 0) {
          sink.append(buf, static_cast<size_t>(r));
        } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
          closeFd(fd);
        }
      }
    }
  }
  closeFd(inFd);
  closeFd(outFd);
  closeFd(errFd);
  sigset_t pending;
  sigpending(&pending);
  if (sigismember(&pending, SIGPIPE) && !sigismember(&oldMask, SIGPIPE)) {
    timespec zero{0, 0};
    sigtimedwait(&pipeSet, nullptr, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &oldMask, nullptr);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

}  // namespace minik8s::proxy
