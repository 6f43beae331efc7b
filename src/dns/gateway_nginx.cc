#include "dns/gateway_nginx.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/command.h"
#include "fmt/format.h"

namespace minik8s::dns {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> argsFor(const GatewayNginxConfig& c, const std::string& conf,
                                 const std::vector<std::string>& extra) {
  // -e: the error log used before the configuration is read (else /var/log/nginx/error.log).
  std::vector<std::string> argv = {c.binary, "-p", c.runDir + "/",         "-c",
                                   conf,     "-e", c.runDir + "/error.log"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

}  // namespace

std::vector<std::string> nginxArgs(const GatewayNginxConfig& config,
                                   const std::vector<std::string>& extra) {
  return argsFor(config, config.runDir + "/nginx.conf", extra);
}

Status GatewayNginx::writeConfig(const std::string& text) {
  std::error_code ec;
  fs::create_directories(config_.runDir + "/tmp", ec);
  if (ec) return Status::Internal(fmt::format("gateway: cannot create {}/tmp", config_.runDir));
  const std::string candidate = configPath() + ".new";
  {
    std::ofstream out(candidate, std::ios::trunc);
    out << text;
    out.flush();
    if (!out) return Status::Internal(fmt::format("gateway: cannot write {}", candidate));
  }
  auto checked = runProgram(argsFor(config_, candidate, {"-t", "-q"}));
  if (!checked.ok()) return checked.status();
  if (checked->exitCode != 0) {
    return Status::BadRequest(
        fmt::format("gateway: nginx refused the configuration: {}", checked->output));
  }
  fs::rename(candidate, configPath(), ec);
  if (ec) return Status::Internal(fmt::format("gateway: cannot rename {}", candidate));
  return Status::Ok();
}

Status GatewayNginx::start() {
  if (running()) return Status::Ok();
  const std::string pidFile = config_.runDir + "/nginx.pid";
  // An nginx of an earlier agent (killed without stopping it) still holds the port; its command
  // line names our run directory.
  stopLeftoverProcess(pidFile, fs::path(pidFile).parent_path().string(),
                      /*killAfterGrace=*/false);
  std::error_code ec;
  fs::remove(pidFile, ec);
  std::vector<std::string> argv = nginxArgs(config_);
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  const std::string log = config_.runDir + "/nginx.out";
  int logFd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (logFd < 0)
    return Status::Internal(fmt::format("cannot open {}: {}", log, std::strerror(errno)));
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
  // The pid file appears once the listening sockets are bound and the signals handled.
  for (int i = 0; i < 300; ++i) {
    if (!running()) {
      return Status::Internal(
          fmt::format("gateway: nginx exited at start; see {}/error.log", config_.runDir));
    }
    if (fs::exists(pidFile, ec)) return Status::Ok();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return Status::Timeout("gateway: nginx did not write its pid file within 3 s");
}

bool GatewayNginx::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == 0) return true;
  pid_ = -1;
  return false;
}

Status GatewayNginx::reload() {
  if (!running()) return Status::Unavailable("nginx is not running");
  auto r = runProgram(nginxArgs(config_, {"-s", "reload"}));
  if (!r.ok()) return r.status();
  if (r->exitCode != 0)
    return Status::Internal(fmt::format("gateway: nginx -s reload: {}", r->output));
  return Status::Ok();
}

void GatewayNginx::stop(std::chrono::milliseconds grace) {
  if (!running()) return;
  ::kill(pid_, SIGQUIT);  // graceful: finish the requests in flight
  auto deadline = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!running()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(-pid_, SIGKILL);  // its workers are in its process group
  ::kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

}  // namespace minik8s::dns
