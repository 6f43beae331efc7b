#include "client/api_balancer.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <list>
#include <mutex>
#include <thread>
#include <vector>

#include "common/logging.h"
#include "common/stream.h"

namespace minik8s::client {

namespace {

struct HostPort {
  std::string host;
  int port = 0;
};

Result<HostPort> parseHostPort(std::string s) {
  if (s.rfind("http://", 0) == 0) s = s.substr(7);
  if (s.rfind("https://", 0) == 0) s = s.substr(8);
  while (!s.empty() && s.back() == '/') s.pop_back();
  const size_t colon = s.rfind(':');
  if (colon == std::string::npos) return Status::BadRequest("expected host:port, got " + s);
  HostPort hp{s.substr(0, colon), 0};
  try {
    hp.port = std::stoi(s.substr(colon + 1));
  } catch (...) {
    return Status::BadRequest("bad port in " + s);
  }
  if (hp.port < 0 || hp.port > 65535) return Status::BadRequest("bad port in " + s);
  return hp;
}

// Copies `from` to `to` until `from` ends (then passes the half-close on) or either breaks (then
// both are shut down, which also ends the copy in the other direction).
void copyStream(http::Stream& from, http::Stream& to) {
  std::vector<char> buf(64 * 1024);
  for (;;) {
    auto n = from.read(buf.data(), buf.size());
    if (!n.ok()) break;
    if (*n == 0) {
      to.closeWrite();
      return;
    }
    if (!to.write({buf.data(), *n}).ok()) break;
  }
  from.shutdown();
  to.shutdown();
}

// One accepted connection: its client side, the backend it was given, and its thread.
struct Session {
  std::unique_ptr<http::Stream> client;
  std::unique_ptr<http::Stream> backend;  // set once connected (under Impl::mu)
  std::thread thread;
  std::atomic<bool> done{false};
};

}  // namespace

struct ApiBalancer::Impl {
  ApiBalancerOptions options;
  std::vector<HostPort> backends;
  int listenFd = -1;
  int port = 0;
  std::atomic<bool> stopping{false};
  std::atomic<size_t> next{0};
  std::thread acceptThread;
  std::mutex mu;  // guards sessions and their backend pointers
  std::list<Session> sessions;

  void acceptLoop() {
    while (!stopping) {
      int fd = ::accept4(listenFd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (!stopping) LOG_ERROR("api balancer: accept: {}", std::strerror(errno));
        return;
      }
      const int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      std::lock_guard lock(mu);
      reapFinished();
      Session& s = sessions.emplace_back();
      s.client = http::plainStream(fd);
      if (stopping) s.client->shutdown();
      s.thread = std::thread([this, &s, first = next++] { serve(s, first); });
    }
  }

  // Joins the threads of sessions that ended. Called with `mu` held.
  void reapFinished() {
    for (auto it = sessions.begin(); it != sessions.end();) {
      if (!it->done) {
        ++it;
        continue;
      }
      it->thread.join();
      it = sessions.erase(it);
    }
  }

  void serve(Session& s, size_t first) {
    for (size_t i = 0; i < backends.size() && !stopping; ++i) {
      const HostPort& b = backends[(first + i) % backends.size()];
      auto backend = http::dialStream(b.host, b.port, nullptr, options.connectTimeout);
      if (!backend.ok()) {
        LOG_WARN("api balancer: {}; trying the next server", backend.status().message());
        continue;
      }
      {
        std::lock_guard lock(mu);
        s.backend = std::move(backend).value();
        if (stopping) s.backend->shutdown();
      }
      std::thread upstream([&s] { copyStream(*s.client, *s.backend); });
      copyStream(*s.backend, *s.client);
      upstream.join();
      s.done = true;
      return;
    }
    if (!stopping) LOG_ERROR("api balancer: no API server answers");
    s.client->shutdown();
    s.done = true;
  }
};

ApiBalancer::ApiBalancer(ApiBalancerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
}

ApiBalancer::~ApiBalancer() { stop(); }

Status ApiBalancer::start() {
  auto listen = parseHostPort(impl_->options.listen);
  if (!listen.ok()) return Status::BadRequest("listen address: " + listen.status().message());
  for (const auto& b : impl_->options.backends) {
    auto hp = parseHostPort(b);
    if (!hp.ok()) return Status::BadRequest("backend: " + hp.status().message());
    impl_->backends.push_back(*hp);
  }
  if (impl_->backends.empty()) return Status::BadRequest("no backend given");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(listen->port));
  const std::string host = listen->host.empty() ? "0.0.0.0" : listen->host;
  if (::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    return Status::BadRequest("the listen address needs an IPv4 address: " + impl_->options.listen);
  }
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 128) != 0) {
    Status failed = Status::Unavailable("cannot listen on " + impl_->options.listen + ": " +
                                        std::strerror(errno));
    ::close(fd);
    return failed;
  }
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  impl_->port = ntohs(addr.sin_port);
  impl_->listenFd = fd;
  impl_->acceptThread = std::thread([this] { impl_->acceptLoop(); });
  return Status::Ok();
}

int ApiBalancer::port() const { return impl_->port; }

void ApiBalancer::stop() {
  if (impl_->listenFd < 0 || impl_->stopping.exchange(true)) return;
  ::shutdown(impl_->listenFd, SHUT_RDWR);  // wakes accept()
  impl_->acceptThread.join();
  ::close(impl_->listenFd);
  std::list<Session> sessions;
  {
    std::lock_guard lock(impl_->mu);
    for (auto& s : impl_->sessions) {
      s.client->shutdown();
      if (s.backend) s.backend->shutdown();
    }
    sessions.splice(sessions.end(), impl_->sessions);
  }
  for (auto& s : sessions) s.thread.join();
}

}  // namespace minik8s::client
