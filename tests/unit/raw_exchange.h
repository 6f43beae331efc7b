// Raw loopback sockets for tests of listeners and proxies that must see or send exactly these
// bytes (pipelined requests, not HTTP at all, a peer that never answers): a listener on a port the
// kernel picks, a connection to a port, and rawExchange (bytes over a fresh connection, read until
// the peer closes or resets it; "" when it resets at once).
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <string>

namespace minik8s::testing {

struct LoopbackListener {
  int fd = -1;
  int port = 0;
};

// Listens on 127.0.0.1 with `backlog` (0: one queued connection fills it); the caller closes fd.
inline LoopbackListener listenOnLoopback(int backlog = 16) {
  LoopbackListener l;
  l.fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(l.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  EXPECT_EQ(::listen(l.fd, backlog), 0);
  socklen_t len = sizeof addr;
  ::getsockname(l.fd, reinterpret_cast<sockaddr*>(&addr), &len);
  l.port = ntohs(addr.sin_port);
  return l;
}

// A connected socket to 127.0.0.1:port; the caller closes it.
inline int connectTo(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  return fd;
}

inline std::string rawExchange(int port, const std::string& bytes) {
  int fd = connectTo(port);
  EXPECT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

}  // namespace minik8s::testing
