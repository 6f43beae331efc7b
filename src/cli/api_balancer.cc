#include "cli/api_balancer.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>

#include "common/logging.h"

namespace minik8s::cli {

namespace {

struct HostPort {
  std::string host;
  uint16_t port = 0;
};

Result<HostPort> parseHostPort(std::string s) {
  if (s.rfind("http://", 0) == 0) s = s.substr(7);
  if (s.rfind("https://", 0) == 0) s = s.substr(8);
  while (!s.empty() && s.back() == '/') s.pop_back();
  const size_t colon = s.rfind(':');
  if (colon == std::string::npos) return Status::BadRequest("expected host:port, got " + s);
  HostPort hp{s.substr(0, colon), 0};
  try {
    hp.port = static_cast<uint16_t>(std::stoi(s.substr(colon + 1)));
  } catch (...) {
    return Status::BadRequest("bad port in " + s);
  }
  return hp;
}

bool toSockaddr(const HostPort& hp, sockaddr_in& addr) {
  addr = {};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(hp.port);
  const std::string host = hp.host.empty() || hp.host == "0.0.0.0" ? "0.0.0.0" : hp.host;
  return ::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) == 1;
}

// A connected socket to `hp`, or -1 (refused, or no answer within `timeout`).
int connectTo(const HostPort& hp, std::chrono::milliseconds timeout) {
  sockaddr_in addr;
  if (!toSockaddr(hp, addr)) return -1;
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    if (errno != EINPROGRESS) {
      ::close(fd);
      return -1;
    }
    pollfd p{fd, POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof err;
    if (::poll(&p, 1, static_cast<int>(timeout.count())) != 1 ||
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
      ::close(fd);
      return -1;
    }
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

// Copies bytes both ways until both directions are closed (half-closes are passed on).
void pump(int client, int backend) {
  int fds[2] = {client, backend};
  bool open[2] = {true, true};  // open[i]: fds[i] may still send us data
  char buf[65536];
  while (open[0] || open[1]) {
    pollfd p[2] = {{fds[0], static_cast<short>(open[0] ? POLLIN : 0), 0},
                   {fds[1], static_cast<short>(open[1] ? POLLIN : 0), 0}};
    if (::poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    bool failed = false;
    for (int i = 0; i < 2 && !failed; ++i) {
      if (!open[i] || (p[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const ssize_t n = ::read(fds[i], buf, sizeof buf);
      if (n <= 0) {
        open[i] = false;
        ::shutdown(fds[1 - i], SHUT_WR);
        if (n < 0) failed = true;
        continue;
      }
      for (ssize_t sent = 0; sent < n;) {
        const ssize_t w =
            ::send(fds[1 - i], buf + sent, static_cast<size_t>(n - sent), MSG_NOSIGNAL);
        if (w <= 0) {
          failed = true;
          break;
        }
        sent += w;
      }
    }
    if (failed) break;
  }
  ::close(client);
  ::close(backend);
}

}  // namespace

int runApiBalancer(const ApiBalancerOptions& options) {
  initLogging("info", "api-balancer");
  auto listen = parseHostPort(options.listen);
  if (!listen.ok()) {
    LOG_ERROR("--listen: {}", listen.status().message());
    return 2;
  }
  std::vector<HostPort> backends;
  for (const auto& b : options.backends) {
    auto hp = parseHostPort(b);
    if (!hp.ok()) {
      LOG_ERROR("--backend: {}", hp.status().message());
      return 2;
    }
    backends.push_back(*hp);
  }
  if (backends.empty()) {
    LOG_ERROR("no --backend given");
    return 2;
  }
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  sockaddr_in addr;
  if (!toSockaddr(*listen, addr)) {
    LOG_ERROR("--listen needs an IPv4 address: {}", options.listen);
    return 2;
  }
  int lfd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(lfd, 128) != 0) {
    LOG_ERROR("cannot listen on {}: {}", options.listen, std::strerror(errno));
    return 1;
  }
  std::atomic<bool> stopping{false};
  std::thread signalWaiter([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    stopping = true;
    ::shutdown(lfd, SHUT_RDWR);
  });
  LOG_INFO("api balancer on {} for {} servers ready", options.listen, backends.size());
  std::atomic<size_t> next{0};
  while (!stopping) {
    int client = ::accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      break;
    }
    ::setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    const size_t first = next++;
    std::thread([client, first, backends, timeout = options.connectTimeout] {
      for (size_t i = 0; i < backends.size(); ++i) {
        const HostPort& b = backends[(first + i) % backends.size()];
        int backend = connectTo(b, timeout);
        if (backend >= 0) return pump(client, backend);
        LOG_WARN("server {}:{} does not answer; trying the next", b.host, b.port);
      }
      LOG_ERROR("no API server answers");
      ::close(client);
    }).detach();
  }
  ::close(lfd);
  signalWaiter.detach();  // still in sigwait when accept failed for another reason
  LOG_INFO("api balancer stopped");
  return 0;
}

}  // namespace minik8s::cli
