#include "kubelet/server/exec_session.h"

#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace minik8s::kubelet::server {

namespace {

Status sendChannel(ws::Connection& conn, uint8_t channel, std::string_view data) {
  std::string msg;
  msg.reserve(data.size() + 1);
  msg.push_back(static_cast<char>(channel));
  msg.append(data);
  return conn.writeBinary(msg);
}

void handleInput(const std::string& payload, ExecProcess& process) {
  if (payload.empty()) return;
  auto channel = static_cast<uint8_t>(payload[0]);
  std::string_view data = std::string_view(payload).substr(1);
  switch (channel) {
    case kStdin:
      process.writeStdin(data);
      break;
    case kResize: {
      json size = json::parse(data, nullptr, false);
      if (size.is_object()) {
        process.resize(size.value("Width", uint16_t{80}), size.value("Height", uint16_t{24}));
      }
      break;
    }
    case kClose:
      if (!data.empty() && static_cast<uint8_t>(data[0]) == kStdin) process.closeStdin();
      break;
    default:
      break;
  }
}

}  // namespace

json execExitStatus(int exitCode) {
  if (exitCode == 0) return {{"metadata", json::object()}, {"status", "Success"}};
  return {
      {"metadata", json::object()},
      {"status", "Failure"},
      {"message",
       "command terminated with non-zero exit code: error executing command "
       "[...], exit code " +
           std::to_string(exitCode)},
      {"reason", "NonZeroExitCode"},
      {"details", {{"causes", {{{"reason", "ExitCode"}, {"message", std::to_string(exitCode)}}}}}}};
}

void failExecSession(ws::Connection& conn, const Status& status) {
  (void)sendChannel(conn, kError, status.toJson().dump());
  (void)conn.writeClose();
}

int runExecSession(ws::Connection& conn, ExecProcess& process) {
  std::atomic<bool> finished{false};
  std::atomic<bool> clientGone{false};
  std::mutex mu;
  std::condition_variable cv;
  bool readerDone = false;

  std::thread reader([&] {
    for (;;) {
      auto m = conn.read();
      if (!m.ok() || m->opcode == ws::Opcode::kClose) break;
      handleInput(m->payload, process);
    }
    if (!finished) {
      clientGone = true;
      process.kill();
    }
    std::lock_guard lock(mu);
    readerDone = true;
    cv.notify_all();
  });

  // Output: both streams until end of file (a terminal reports EIO when its last writer left).
  int fds[2] = {process.stdoutFd(), process.stderrFd()};
  const uint8_t channels[2] = {kStdout, kStderr};
  std::string buf(32 * 1024, '\0');
  while (fds[0] >= 0 || fds[1] >= 0) {
    pollfd pfds[2];
    nfds_t n = 0;
    int which[2];
    for (int i = 0; i < 2; ++i) {
      if (fds[i] >= 0) {
        pfds[n] = {fds[i], POLLIN, 0};
        which[n++] = i;
      }
    }
    int r = ::poll(pfds, n, 200);
    if (r < 0 && errno != EINTR) break;
    for (nfds_t k = 0; k < n && r > 0; ++k) {
      if (!(pfds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      int i = which[k];
      ssize_t got = ::read(fds[i], buf.data(), buf.size());
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        fds[i] = -1;
        continue;
      }
      if (!clientGone && !sendChannel(conn, channels[i], std::string_view(buf.data(), got)).ok()) {
        clientGone = true;
        process.kill();
      }
    }
  }
  int exitCode = process.wait();
  finished = true;
  if (!clientGone) {
    (void)sendChannel(conn, kError, execExitStatus(exitCode).dump());
    (void)conn.writeClose();
  }
  {
    // Give the client a moment to answer the close frame, then drop the connection.
    std::unique_lock lock(mu);
    if (!cv.wait_for(lock, std::chrono::seconds(2), [&] { return readerDone; })) {
      lock.unlock();
      conn.shutdown();
    }
  }
  reader.join();
  return clientGone ? -1 : exitCode;
}

}  // namespace minik8s::kubelet::server
