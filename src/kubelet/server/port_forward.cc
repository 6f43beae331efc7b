#include "kubelet/server/port_forward.h"

#include <thread>
#include <vector>

namespace minik8s::kubelet::server {

void relayTunnel(ws::Connection& client, http::Stream& upstream,
                 const std::string& upstreamAlreadyRead) {
  std::thread up([&] {
    for (;;) {
      auto msg = client.read();
      if (!msg.ok() || msg->opcode == ws::Opcode::kClose) break;
      if (!upstream.write(msg->payload).ok()) break;
    }
    // The client left: the runtime sees the end of the SPDY session and closes its streams.
    upstream.closeWrite();
  });
  bool ok = upstreamAlreadyRead.empty() || client.writeBinary(upstreamAlreadyRead).ok();
  std::vector<char> buf(32 * 1024);
  while (ok) {
    auto n = upstream.read(buf.data(), buf.size());
    if (!n.ok() || *n == 0) break;
    ok = client.writeBinary({buf.data(), *n}).ok();
  }
  (void)client.writeClose();
  client.shutdown();
  upstream.shutdown();
  up.join();
}

}  // namespace minik8s::kubelet::server
