// ScriptedBackend: a loopback TCP listener whose first `connections` connections are served, one
// after the other, by `serve(fd)` on its own thread (the fd is closed after). For sidecar tests
// whose endpoint must behave exactly so: answer 101 and then stream, close a kept connection.
// With the raw-socket helpers both sides of such a test use (raw_exchange.h has the listener
// and the connection).
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include "raw_exchange.h"

namespace minik8s::testing {

inline bool writeAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Reads until `out` contains `needle` (what came before it stays in `out`); false at EOF first.
inline bool readUntil(int fd, std::string& out, std::string_view needle) {
  char buf[512];
  while (out.find(needle) == std::string::npos) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return false;
    out.append(buf, static_cast<size_t>(n));
  }
  return true;
}

// An HTTP head, read a byte at a time so that nothing after it is taken from the socket.
inline std::string readHead(int fd) {
  std::string head;
  char c;
  while (head.find("\r\n\r\n") == std::string::npos && ::read(fd, &c, 1) == 1) head += c;
  return head;
}

class ScriptedBackend {
 public:
  ScriptedBackend(std::function<void(int fd)> serve, int connections)
      : listener_(listenOnLoopback(8)) {
    thread_ = std::thread([this, serve = std::move(serve), connections] {
      for (int i = 0; i < connections; ++i) {
        int fd = ::accept(listener_.fd, nullptr, nullptr);
        if (fd < 0) return;  // shut down by the destructor
        serve(fd);
        ::close(fd);
        ++served_;
      }
    });
  }
  ~ScriptedBackend() {
    ::shutdown(listener_.fd, SHUT_RDWR);  // wakes an accept that waits for a connection never made
    thread_.join();
    ::close(listener_.fd);
  }
  ScriptedBackend(const ScriptedBackend&) = delete;
  ScriptedBackend& operator=(const ScriptedBackend&) = delete;

  int port() const { return listener_.port; }
  int served() const { return served_; }  // connections served to the end

 private:
  LoopbackListener listener_;
  std::atomic<int> served_{0};
  std::thread thread_;
};

// An endpoint that upgrades: answers the request's head with 101 and "hello" in one write (bytes
// after the HTTP part), then "got <first 5 bytes it reads>" (the client's bytes after its HTTP
// part), then echoes until EOF.
inline void serveUpgradeThenEcho(int fd) {
  readHead(fd);
  writeAll(fd,
           "HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\nhello");
  std::string early;
  char buf[256];
  while (early.size() < 5) {
    ssize_t n = ::read(fd, buf, 5 - early.size());
    if (n <= 0) return;
    early.append(buf, static_cast<size_t>(n));
  }
  writeAll(fd, "got " + early);
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) {
    writeAll(fd, std::string_view(buf, static_cast<size_t>(n)));
  }
}

// The client's side of serveUpgradeThenEcho through `port`: the upgrade request and "early" in one
// write; then what must come back. Returns what the client saw, for a failure's message.
inline std::string upgradeThenEcho(int port, const std::string& path) {
  int fd = connectTo(port);
  std::string seen;
  auto check = [&](std::string_view needle) {
    bool ok = readUntil(fd, seen, needle);
    EXPECT_TRUE(ok) << "no \"" << needle << "\" in: " << seen;
    return ok;
  };
  writeAll(fd, "GET " + path +
                   " HTTP/1.1\r\nHost: web\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\nearly");
  if (check("101 Switching Protocols") && check("\r\n\r\n") && check("hello") &&
      check("got early")) {
    writeAll(fd, "ping");
    check("got earlyping");
  }
  ::shutdown(fd, SHUT_WR);
  char buf[256];
  while (::read(fd, buf, sizeof buf) > 0) {
  }
  ::close(fd);
  return seen;
}

}  // namespace minik8s::testing
