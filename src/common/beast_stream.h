// Adapts a Stream (common/stream.h) to Boost.Beast's synchronous stream concepts
// (SyncReadStream, SyncWriteStream), so the HTTP server and client parse and write HTTP with
// Beast over plain and TLS connections alike. Internal to common/. Same thread-safety as the
// Stream it wraps.
#pragma once

#include <algorithm>
#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/system/system_error.hpp>
#include <string>
#include <string_view>

#include "common/stream.h"

namespace minik8s::http {

class BeastStream {
 public:
  explicit BeastStream(Stream& stream) : stream_(stream) {}

  template <typename MutableBuffers>
  size_t read_some(const MutableBuffers& buffers, boost::beast::error_code& ec) {
    ec = {};
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers); ++it) {
      boost::asio::mutable_buffer b = *it;
      if (b.size() == 0) continue;
      auto n = stream_.read(static_cast<char*>(b.data()), b.size());
      if (!n.ok()) {
        ec = boost::asio::error::connection_reset;
        return 0;
      }
      if (*n == 0) ec = boost::asio::error::eof;
      return *n;
    }
    return 0;
  }

  template <typename MutableBuffers>
  size_t read_some(const MutableBuffers& buffers) {
    boost::beast::error_code ec;
    size_t n = read_some(buffers, ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }

  // Gathers small buffers into one write (over TLS each write is a record of its own, and a
  // record per chunk-size line would double a watch's records); a large buffer is written in
  // place rather than copied, alone, after what was gathered before it: the partial write makes
  // the caller come back for it. A list of 10,000 pods is a 13 MiB body.
  template <typename ConstBuffers>
  size_t write_some(const ConstBuffers& buffers, boost::beast::error_code& ec) {
    ec = {};
    constexpr size_t kInPlace = 64 * 1024;
    std::string gathered;
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers); ++it) {
      boost::asio::const_buffer b = *it;
      if (b.size() >= kInPlace) {
        if (!gathered.empty()) break;
        return writeAll({static_cast<const char*>(b.data()), b.size()}, ec);
      }
      if (gathered.empty()) gathered.reserve(std::min(boost::asio::buffer_size(buffers), kInPlace));
      gathered.append(static_cast<const char*>(b.data()), b.size());
    }
    return writeAll(gathered, ec);
  }

  template <typename ConstBuffers>
  size_t write_some(const ConstBuffers& buffers) {
    boost::beast::error_code ec;
    size_t n = write_some(buffers, ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }

  Stream& stream() { return stream_; }

 private:
  size_t writeAll(std::string_view data, boost::beast::error_code& ec) {
    if (data.empty()) return 0;
    if (Status s = stream_.write(data); !s.ok()) {
      ec = boost::asio::error::broken_pipe;
      return 0;
    }
    return data.size();
  }

  Stream& stream_;
};

}  // namespace minik8s::http
