#include "dns/dnsmasq.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "common/command.h"
#include "fmt/format.h"

namespace minik8s::dns {

std::vector<std::string> dnsmasqArgs(const DnsmasqConfig& c) {
  return {
      c.binary,
      "--keep-in-foreground",
      "--conf-file=/dev/null",  // not the host's /etc/dnsmasq.conf
      "--no-resolv",            // no upstream servers: nothing leaves the cluster
      "--no-poll",
      "--no-hosts",  // not the host's /etc/hosts
      "--addn-hosts=" + c.hostsFile,
      "--local=/" + c.domain + "/",  // unknown names under the domain: NXDOMAIN at once
      "--domain-needed",
      "--bogus-priv",  // unknown reverse lookups of private ranges: NXDOMAIN
      "--listen-address=" + c.listenAddress,
      "--bind-interfaces",  // only that address, so several nodes' dnsmasq can coexist
      fmt::format("--port={}", c.port),
      fmt::format("--local-ttl={}", c.ttlSeconds),
      "--pid-file=" + c.pidFile,
      // The agent's data directory may be closed to others; stay root so SIGHUP can re-read.
      "--user=root",
      "--log-facility=-",
  };
}

Status Dnsmasq::start() {
  if (running()) return Status::Ok();
  // A dnsmasq of an earlier agent (killed without stopping it) still holds port 53.
  stopLeftoverProcess(config_.pidFile, config_.pidFile, /*killAfterGrace=*/true);
  std::vector<std::string> argv = dnsmasqArgs(config_);
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  int logFd = ::open(config_.logFile.empty() ? "/dev/null" : config_.logFile.c_str(),
                     O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (logFd < 0) {
    return Status::Internal(
        fmt::format("cannot open {}: {}", config_.logFile, std::strerror(errno)));
  }
  int errPipe[2];
  if (pipe2(errPipe, O_CLOEXEC) != 0) {
    ::close(logFd);
    return Status::Internal("pipe failed");
  }
  pid_t pid = fork();
  if (pid < 0) {
    ::close(logFd), ::close(errPipe[0]), ::close(errPipe[1]);
    return Status::Internal(fmt::format("fork failed: {}", std::strerror(errno)));
  }
  if (pid == 0) {
    setpgid(0, 0);  // a terminal's ^C goes to the agent, which stops us
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
    return Status::Internal(
        fmt::format("cannot run {}: {}", config_.binary, std::strerror(childErrno)));
  }
  pid_ = pid;
  return Status::Ok();
}

bool Dnsmasq::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == 0) return true;
  pid_ = -1;
  return false;
}

Status Dnsmasq::reload() {
  if (!running()) return Status::Unavailable("dnsmasq is not running");
  if (::kill(pid_, SIGHUP) != 0) {
    return Status::Internal(fmt::format("SIGHUP to dnsmasq: {}", std::strerror(errno)));
  }
  return Status::Ok();
}

void Dnsmasq::stop(std::chrono::milliseconds grace) {
  if (!running()) return;
  ::kill(pid_, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!running()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

}  // namespace minik8s::dns
