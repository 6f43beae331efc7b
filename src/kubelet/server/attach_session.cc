#include "kubelet/server/attach_session.h"

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "common/logging.h"
#include "kubelet/server/exec_session.h"

namespace minik8s::kubelet::server {

namespace {

// The client's stream ids (odd, in the order kubectl opens them).
constexpr uint32_t kErrorStream = 1;
constexpr uint32_t kStdinStream = 3;
constexpr uint32_t kStdoutStream = 5;
constexpr uint32_t kStderrStream = 7;
constexpr uint32_t kResizeStream = 9;

class AttachRelay {
 public:
  AttachRelay(ws::Connection& client, http::Stream& upstream, const AttachSpec& spec)
      : client_(client), upstream_(upstream), spec_(spec) {}

  Status openStreams() {
    auto open = [&](uint32_t id, const char* type) {
      spdy::Frame f;
      f.type = spdy::FrameType::kSynStream;
      f.streamId = id;
      f.headers = {{"streamtype", type}};
      return send(f);
    };
    if (Status s = open(kErrorStream, "error"); !s.ok()) return s;
    if (spec_.stdin) {
      if (Status s = open(kStdinStream, "stdin"); !s.ok()) return s;
    }
    if (spec_.stdout) {
      if (Status s = open(kStdoutStream, "stdout"); !s.ok()) return s;
    }
    if (spec_.stderr && !spec_.tty) {
      if (Status s = open(kStderrStream, "stderr"); !s.ok()) return s;
    }
    if (spec_.tty) {
      if (Status s = open(kResizeStream, "resize"); !s.ok()) return s;
    }
    return Status::Ok();
  }

  // WebSocket → SPDY, on its own thread, until the client closes.
  void clientLoop() {
    for (;;) {
      auto msg = client_.read();
      if (!msg.ok() || msg->opcode == ws::Opcode::kClose) break;
      const std::string& p = msg->payload;
      if (p.empty()) continue;
      std::string data = p.substr(1);
      switch (static_cast<uint8_t>(p[0])) {
        case kStdin:
          if (spec_.stdin && !stdinClosed_) (void)sendData(kStdinStream, data, false);
          break;
        case kResize:
          if (spec_.tty) (void)sendData(kResizeStream, data, false);
          break;
        case kClose:
          if (spec_.stdin && !data.empty() && static_cast<uint8_t>(data[0]) == kStdin &&
              !stdinClosed_) {
            stdinClosed_ = true;
            (void)sendData(kStdinStream, "", true);
          }
          break;
        default:
          break;
      }
    }
    clientGone_ = true;
    upstream_.shutdown();  // wakes upstreamLoop: detach
  }

  // SPDY → WebSocket, on the caller's thread, until the runtime ends the session.
  void upstreamLoop(const std::string& alreadyRead) {
    spdy::FrameReader reader;
    reader.feed(alreadyRead);
    std::vector<char> buf(32 * 1024);
    bool done = false;
    while (!done) {
      for (;;) {
        auto frame = reader.next();
        if (!frame.ok()) {
          LOG_WARN("attach: {}", frame.status().message());
          done = true;
          break;
        }
        if (!frame->has_value()) break;
        if (!handleFrame(**frame)) {
          done = true;
          break;
        }
      }
      if (done) break;
      auto n = upstream_.read(buf.data(), buf.size());
      if (!n.ok() || *n == 0) break;
      reader.feed({buf.data(), *n});
    }
    if (!clientGone_) {
      json status = json::parse(errorStatus_, nullptr, false);
      if (errorStatus_.empty() || !status.is_object()) {
        status = errorStatus_.empty() ? json{{"metadata", json::object()}, {"status", "Success"}}
                                      : Status::Internal(errorStatus_).toJson();
      }
      std::string msg(1, static_cast<char>(kError));
      msg += status.dump();
      (void)client_.writeBinary(msg);
      (void)client_.writeClose();
    }
    client_.shutdown();
  }

 private:
  // False when the session is over.
  bool handleFrame(const spdy::Frame& f) {
    switch (f.type) {
      case spdy::FrameType::kData: {
        Channel ch = f.streamId == kStdoutStream   ? kStdout
                     : f.streamId == kStderrStream ? kStderr
                                                   : kError;
        if (f.streamId == kErrorStream) {
          if (errorStatus_.size() < 64 * 1024) errorStatus_ += f.data;
        } else if ((ch == kStdout || ch == kStderr) && !f.data.empty()) {
          std::string msg(1, static_cast<char>(ch));
          msg += f.data;
          if (!client_.writeBinary(msg).ok()) return false;
        }
        return true;
      }
      case spdy::FrameType::kPing: {
        spdy::Frame pong;
        pong.type = spdy::FrameType::kPing;
        pong.pingId = f.pingId;
        return send(pong).ok();
      }
      case spdy::FrameType::kSynStream: {
        // The runtime opens no streams in this protocol.
        spdy::Frame rst;
        rst.type = spdy::FrameType::kRstStream;
        rst.streamId = f.streamId;
        rst.status = spdy::kRefusedStream;
        return send(rst).ok();
      }
      case spdy::FrameType::kRstStream:
        if (f.streamId == kErrorStream && errorStatus_.empty()) {
          errorStatus_ = "the container runtime reset the attach session";
        }
        return true;
      case spdy::FrameType::kGoAway:
        return false;
      default:  // SYN_REPLY, SETTINGS, HEADERS, WINDOW_UPDATE
        return true;
    }
  }

  Status sendData(uint32_t stream, std::string_view data, bool fin) {
    spdy::Frame f;
    f.type = spdy::FrameType::kData;
    f.streamId = stream;
    f.flags = fin ? spdy::kFlagFin : 0;
    f.data = std::string(data);
    return send(f);
  }

  Status send(const spdy::Frame& f) {
    std::lock_guard lock(writeMu_);
    auto bytes = writer_.encode(f);
    if (!bytes.ok()) return bytes.status();
    return upstream_.write(*bytes);
  }

  ws::Connection& client_;
  http::Stream& upstream_;
  AttachSpec spec_;
  std::mutex writeMu_;
  spdy::FrameWriter writer_;  // guarded by writeMu_
  std::atomic<bool> clientGone_{false};
  std::atomic<bool> stdinClosed_{false};  // written by clientLoop only
  std::string errorStatus_;               // upstreamLoop only
};

}  // namespace

void runAttachSession(ws::Connection& client, spdy::UpgradedStream upstream,
                      const AttachSpec& spec) {
  AttachRelay relay(client, *upstream.stream, spec);
  if (Status s = relay.openStreams(); !s.ok()) {
    std::string msg(1, static_cast<char>(kError));
    msg += s.toJson().dump();
    (void)client.writeBinary(msg);
    (void)client.writeClose();
    return;
  }
  std::thread reader([&] { relay.clientLoop(); });
  relay.upstreamLoop(upstream.alreadyRead);
  upstream.stream->shutdown();
  reader.join();
}

}  // namespace minik8s::kubelet::server
