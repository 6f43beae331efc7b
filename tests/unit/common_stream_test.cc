// http::canWriteImmediately on real loopback TCP connections: a write is immediate while all
// earlier bytes have left and the send buffer has room, not once the peer stops reading.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "common/stream.h"

namespace minik8s::http {
namespace {

// A connected loopback pair: `client` wrapped in a Stream, `server` the peer's raw socket.
struct LoopbackPair {
  std::unique_ptr<Stream> client;
  int server = -1;

  LoopbackPair() {
    int listener = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    EXPECT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(listener, 1), 0);
    EXPECT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    server = ::accept(listener, nullptr, nullptr);
    ::close(listener);
    client = plainStream(fd);
  }
  ~LoopbackPair() {
    client.reset();
    if (server >= 0) ::close(server);
  }
};

TEST(StreamTest, AWriteIsImmediateWhileTheQueueIsEmptyAndTheChunkSmall) {
  LoopbackPair pair;
  EXPECT_TRUE(canWriteImmediately(*pair.client, 2000));
  EXPECT_FALSE(canWriteImmediately(*pair.client, kImmediateWriteBytes + 1));
  // Sent and read by the peer: immediate again.
  ASSERT_TRUE(pair.client->write(std::string(3000, 'x')).ok());
  char buf[4096];
  size_t got = 0;
  while (got < 3000) {
    ssize_t n = ::recv(pair.server, buf, sizeof buf, 0);
    ASSERT_GT(n, 0);
    got += static_cast<size_t>(n);
  }
  EXPECT_TRUE(canWriteImmediately(*pair.client, 2000));
}

TEST(StreamTest, AWriteIsNotImmediateOnceThePeerStopsReading) {
  LoopbackPair pair;
  // Fill the peer's receive window and our send buffer without blocking.
  int fd = pair.client->fd();
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  std::string chunk(64 * 1024, 'x');
  while (::send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL) > 0) {
  }
  EXPECT_FALSE(canWriteImmediately(*pair.client, 100));
}

}  // namespace
}  // namespace minik8s::http
