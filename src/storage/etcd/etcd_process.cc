#include "storage/etcd/etcd_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "etcd/rpc.grpc.pb.h"

namespace minik8s::storage::etcd {

namespace {

constexpr auto kStartTimeout = std::chrono::seconds(20);

// A port nobody listens on right now (the kernel's pick for an ephemeral bind).
Result<int> freeLoopbackPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return Status::Internal(std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    return Status::Internal(std::string("bind 127.0.0.1:0: ") + std::strerror(errno));
  }
  ::close(fd);
  return static_cast<int>(ntohs(addr.sin_port));
}

bool loopbackPortOpen(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool open = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return open;
}

std::string tailOf(const std::string& path, size_t maxBytes) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  return s.size() > maxBytes ? s.substr(s.size() - maxBytes) : s;
}

}  // namespace

Result<std::unique_ptr<EtcdProcess>> EtcdProcess::start(const std::string& binary) {
  if (::access(binary.c_str(), X_OK) != 0) {
    return Status::Unavailable("etcd binary " + binary +
                               " not found or not executable (install Debian's etcd-server)");
  }
  char tmpl[] = "/tmp/minik8s-etcd-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) {
    return Status::Internal(std::string("mkdtemp: ") + std::strerror(errno));
  }
  std::unique_ptr<EtcdProcess> proc(new EtcdProcess());
  proc->dir_ = tmpl;
  auto clientPort = freeLoopbackPort();
  auto peerPort = freeLoopbackPort();
  if (!clientPort.ok()) return clientPort.status();
  if (!peerPort.ok()) return peerPort.status();
  if (*clientPort == *peerPort) return Status::Internal("could not pick two distinct free ports");
  const std::string client = "http://127.0.0.1:" + std::to_string(*clientPort);
  const std::string peer = "http://127.0.0.1:" + std::to_string(*peerPort);
  proc->endpoint_ = "127.0.0.1:" + std::to_string(*clientPort);
  const std::string logPath = proc->dir_ + "/etcd.log";

  std::vector<std::string> args = {binary,
                                   "--name=default",
                                   "--data-dir=" + proc->dir_ + "/data",
                                   "--listen-client-urls=" + client,
                                   "--advertise-client-urls=" + client,
                                   "--listen-peer-urls=" + peer,
                                   "--initial-advertise-peer-urls=" + peer,
                                   "--initial-cluster=default=" + peer};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  pid_t pid = ::fork();
  if (pid < 0) return Status::Internal(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the test or benchmark
    int log = ::open(logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (log >= 0) {
      ::dup2(log, STDOUT_FILENO);
      ::dup2(log, STDERR_FILENO);
      ::close(log);
    }
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  proc->pid_ = pid;

  // Ready when a Range answers.
  // Ready when the client port accepts connections and a Range answers. A fresh channel per
  // attempt avoids gRPC's reconnect backoff after the refusals while etcd boots.
  const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
  std::string lastError = "client port never opened";
  while (std::chrono::steady_clock::now() < deadline) {
    int wstatus = 0;
    if (::waitpid(pid, &wstatus, WNOHANG) == pid) {
      proc->pid_ = -1;
      return Status::Unavailable("etcd exited during start-up; its log ends with:\n" +
                                 tailOf(logPath, 2000));
    }
    if (loopbackPortOpen(*clientPort)) {
      auto channel = grpc::CreateChannel(proc->endpoint_, grpc::InsecureChannelCredentials());
      auto kv = etcdserverpb::KV::NewStub(channel);
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
      ctx.set_wait_for_ready(true);
      etcdserverpb::RangeRequest req;
      req.set_key("health");
      etcdserverpb::RangeResponse resp;
      grpc::Status rs = kv->Range(&ctx, req, &resp);
      if (rs.ok()) return proc;
      lastError = rs.error_message();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return Status::Timeout("etcd did not answer within 20s (" + lastError +
                         "); its log ends with:\n" + tailOf(logPath, 2000));
}

EtcdProcess::~EtcdProcess() { stop(); }

void EtcdProcess::stop() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    dir_.clear();
  }
}

}  // namespace minik8s::storage::etcd
