#include "common/stream.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include "common/tls.h"

namespace minik8s::http {
namespace {

class PlainStream : public Stream {
 public:
  explicit PlainStream(int fd) : fd_(fd) {}
  ~PlainStream() override { ::close(fd_); }

  Result<size_t> read(char* out, size_t n) override {
    for (;;) {
      if (shut_) return Status::Unavailable("connection shut down");
      ssize_t r = ::recv(fd_, out, n, 0);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return Status::Unavailable(std::string("read: ") + std::strerror(errno));
      return static_cast<size_t>(r);
    }
  }

  Status write(std::string_view data) override {
    while (!data.empty()) {
      if (shut_) return Status::Unavailable("connection shut down");
      ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Status::Unavailable(std::string("write: ") + std::strerror(errno));
      data.remove_prefix(static_cast<size_t>(n));
    }
    return Status::Ok();
  }

  void closeWrite() override { ::shutdown(fd_, SHUT_WR); }

  void shutdown() override {
    shut_ = true;
    ::shutdown(fd_, SHUT_RDWR);
  }

  bool peerClosed() override {
    if (shut_) return true;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) return false;
    if (p.revents & (POLLHUP | POLLERR)) return true;
    char c;
    return ::recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
  }

  int fd() const override { return fd_; }

 private:
  int fd_;
  std::atomic<bool> shut_{false};
};

// A non-blocking connect bounded by `timeout`; the socket is blocking again afterwards.
int connectWithin(const addrinfo* a, std::chrono::milliseconds timeout, std::string& error) {
  int fd = ::socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    error = std::strerror(errno);
    return -1;
  }
  int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
  if (rc != 0 && errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    int r;
    do {
      r = ::poll(&p, 1, static_cast<int>(timeout.count()));
    } while (r < 0 && errno == EINTR);
    int soError = 0;
    socklen_t len = sizeof soError;
    if (r == 0) {
      soError = ETIMEDOUT;
    } else if (r < 0 || ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &len) != 0) {
      soError = errno;
    }
    rc = soError == 0 ? 0 : -1;
    errno = soError;
  }
  if (rc != 0) {
    error = std::strerror(errno);
    ::close(fd);
    return -1;
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

}  // namespace

std::unique_ptr<Stream> plainStream(int fd) { return std::make_unique<PlainStream>(fd); }

Result<std::unique_ptr<Stream>> dialStream(const std::string& host, int port, const TlsContext* tls,
                                           std::chrono::milliseconds timeout) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const std::string portText = std::to_string(port);
  if (int rc = ::getaddrinfo(host.c_str(), portText.c_str(), &hints, &res); rc != 0 || !res) {
    return Status::Unavailable("cannot resolve " + host + ": " + gai_strerror(rc));
  }
  std::string error = "no address";
  int fd = -1;
  for (addrinfo* a = res; a && fd < 0; a = a->ai_next) fd = connectWithin(a, timeout, error);
  ::freeaddrinfo(res);
  if (fd < 0)
    return Status::Unavailable("cannot connect to " + host + ":" + portText + ": " + error);
  if (!tls) return plainStream(fd);
  auto stream = tls->connect(fd, host, timeout);
  if (!stream.ok()) ::close(fd);
  return stream;
}

void relay(Stream& client, Stream& upstream) {
  std::thread up([&] {
    std::vector<char> buf(32 * 1024);
    for (;;) {
      auto n = client.read(buf.data(), buf.size());
      if (!n.ok() || *n == 0) break;
      if (!upstream.write({buf.data(), *n}).ok()) break;
    }
    upstream.closeWrite();
  });
  std::vector<char> buf(32 * 1024);
  for (;;) {
    auto n = upstream.read(buf.data(), buf.size());
    if (!n.ok() || *n == 0) break;
    if (!client.write({buf.data(), *n}).ok()) break;  // the client is gone
  }
  client.closeWrite();
  client.shutdown();
  upstream.shutdown();
  up.join();
}

bool canWriteImmediately(const Stream& stream, size_t bytes) {
  if (bytes > kImmediateWriteBytes || stream.fd() < 0) return false;
  // Everything written before has left (a peer that does not read closes its window and leaves
  // bytes unsent); sent bytes may still wait for their acknowledgement, which a client that only
  // reads delays by up to 40 ms, so those only count against the buffer.
  int unsent = 0, unacknowledged = 0;
  if (::ioctl(stream.fd(), SIOCOUTQNSD, &unsent) != 0 || unsent != 0) return false;
  if (::ioctl(stream.fd(), SIOCOUTQ, &unacknowledged) != 0) return false;
  // The socket's send buffer has room for both with their buffers' overhead (Linux accounts
  // about twice the payload): the write then never waits for memory.
  int sendBuffer = 0;
  socklen_t len = sizeof sendBuffer;
  return ::getsockopt(stream.fd(), SOL_SOCKET, SO_SNDBUF, &sendBuffer, &len) == 0 &&
         static_cast<size_t>(sendBuffer) >=
             2 * (static_cast<size_t>(unacknowledged) + bytes) + 4096;
}

std::string peerAddress(int fd, bool withPort) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "";
  char buf[INET6_ADDRSTRLEN] = {};
  int port = 0;
  if (addr.ss_family == AF_INET) {
    auto* in = reinterpret_cast<sockaddr_in*>(&addr);
    ::inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf);
    port = ntohs(in->sin_port);
    return withPort ? std::string(buf) + ":" + std::to_string(port) : std::string(buf);
  }
  if (addr.ss_family == AF_INET6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&addr);
    ::inet_ntop(AF_INET6, &in6->sin6_addr, buf, sizeof buf);
    port = ntohs(in6->sin6_port);
    std::string text = buf;
    return withPort ? "[" + text + "]:" + std::to_string(port) : text;
  }
  return "";
}

}  // namespace minik8s::http
