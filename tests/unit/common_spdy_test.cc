// SPDY/3.1 framing and the HTTP upgrade to it (common/spdy.h): what kubectl port-forward speaks.
#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

#include "common/http.h"
#include "common/spdy.h"

namespace minik8s::spdy {
namespace {

std::string hex(const std::string& bytes) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += d[c >> 4];
    out += d[c & 15];
  }
  return out;
}

Frame decodeOne(FrameReader& reader, const std::string& bytes) {
  reader.feed(bytes);
  auto f = reader.next();
  EXPECT_TRUE(f.ok()) << f.status().message();
  EXPECT_TRUE(f.ok() && f->has_value());
  return f.ok() && f->has_value() ? **f : Frame{};
}

TEST(SpdyTest, TheDictionaryIsTheDraftsOne) {
  const std::string& d = headerDictionary();
  EXPECT_EQ(d.size(), 1423u);
  EXPECT_EQ(d.substr(0, 11), std::string("\0\0\0\x07options", 11));
  EXPECT_EQ(d.substr(d.size() - 7), ",enq=0.");
  EXPECT_EQ(adler32(adler32(0, nullptr, 0), reinterpret_cast<const Bytef*>(d.data()),
                    static_cast<uInt>(d.size())),
            0xe3c6a7c2u);  // the DICTID zlib puts into every header stream's first block
}

TEST(SpdyTest, ControlAndDataFramesOnTheWire) {
  FrameWriter w;
  auto ping = w.encode({.type = FrameType::kPing, .pingId = 1});
  ASSERT_TRUE(ping.ok());
  EXPECT_EQ(hex(*ping),
            "8003000600000004"
            "00000001");
  auto rst = w.encode({.type = FrameType::kRstStream, .streamId = 3, .status = kCancel});
  EXPECT_EQ(hex(*rst),
            "8003000300000008"
            "00000003"
            "00000005");
  auto data = w.encode({.type = FrameType::kData, .flags = kFlagFin, .streamId = 5, .data = "hi"});
  EXPECT_EQ(hex(*data),
            "00000005"
            "01000002"
            "6869");
  auto window =
      w.encode({.type = FrameType::kWindowUpdate, .streamId = 7, .deltaWindowSize = 65536});
  EXPECT_EQ(hex(*window),
            "8003000900000008"
            "00000007"
            "00010000");
}

TEST(SpdyTest, PortForwardStreamsRoundTripWithOneCompressionContextPerDirection) {
  FrameWriter w;
  FrameReader r;
  // kubectl opens an error stream and a data stream per port and request.
  for (uint32_t id : {1u, 3u, 5u, 7u}) {
    Frame syn{.type = FrameType::kSynStream, .streamId = id, .priority = 0};
    syn.headers = {{"streamtype", id % 4 == 1 ? "error" : "data"},
                   {"port", "8080"},
                   {"requestid", std::to_string(id / 4)}};
    auto bytes = w.encode(syn);
    ASSERT_TRUE(bytes.ok());
    Frame got = decodeOne(r, *bytes);
    EXPECT_EQ(got.type, FrameType::kSynStream);
    EXPECT_EQ(got.streamId, id);
    EXPECT_EQ(got.header("streamtype"), id % 4 == 1 ? "error" : "data");
    EXPECT_EQ(got.header("port"), "8080");
    EXPECT_EQ(got.header("requestid"), std::to_string(id / 4));
    EXPECT_EQ(got.header("absent"), "");
  }
  Frame reply{.type = FrameType::kSynReply, .streamId = 1};
  reply.headers = {{"multi", std::string("a\0b", 3)}};
  Frame got = decodeOne(r, *w.encode(reply));
  EXPECT_EQ(got.type, FrameType::kSynReply);
  EXPECT_EQ(got.header("multi"), "a");                      // the first of NUL-separated values
  Frame large{.type = FrameType::kHeaders, .streamId = 3};  // inflates to several chunks
  large.headers = {{"big", std::string(20000, 'v')}, {"after", "it"}};
  got = decodeOne(r, *w.encode(large));
  EXPECT_EQ(got.header("big"), std::string(20000, 'v'));
  EXPECT_EQ(got.header("after"), "it");
  got = decodeOne(r, *w.encode({.type = FrameType::kGoAway, .streamId = 7, .status = 0}));
  EXPECT_EQ(got.type, FrameType::kGoAway);
  EXPECT_EQ(got.streamId, 7u);
  Frame settings{.type = FrameType::kSettings};
  settings.settings = {{0, 7, 65536}, {1, 4, 100}};
  got = decodeOne(r, *w.encode(settings));
  ASSERT_EQ(got.settings.size(), 2u);
  EXPECT_EQ(got.settings[0].id, 7u);
  EXPECT_EQ(got.settings[0].value, 65536u);
  EXPECT_EQ(got.settings[1].flags, 1);
}

TEST(SpdyTest, FramesArrivingByteByByteAreReassembled) {
  FrameWriter w;
  std::string wire;
  Frame syn{.type = FrameType::kSynStream, .streamId = 1};
  syn.headers = {{"streamtype", "data"}, {"port", "80"}};
  wire += *w.encode(syn);
  std::string big(100000, 'x');
  wire += *w.encode({.type = FrameType::kData, .streamId = 1, .data = big});
  wire += *w.encode({.type = FrameType::kPing, .pingId = 2});
  FrameReader r;
  std::vector<Frame> frames;
  for (char c : wire) {
    r.feed(std::string_view(&c, 1));
    for (;;) {
      auto f = r.next();
      ASSERT_TRUE(f.ok()) << f.status().message();
      if (!f->has_value()) break;
      frames.push_back(std::move(**f));
    }
  }
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[0].header("port"), "80");
  EXPECT_EQ(frames[1].data, big);
  EXPECT_EQ(frames[2].pingId, 2u);
}

TEST(SpdyTest, MalformedInputIsAnErrorNotACrash) {
  {
    FrameReader r;  // SPDY/2
    r.feed(std::string("\x80\x02\x00\x06\x00\x00\x00\x04\x00\x00\x00\x01", 12));
    auto f = r.next();
    ASSERT_FALSE(f.ok());
    EXPECT_NE(f.status().message().find("version 2"), std::string::npos);
  }
  {
    FrameReader r;  // DATA on stream 0
    r.feed(std::string("\x00\x00\x00\x00\x00\x00\x00\x01x", 9));
    EXPECT_FALSE(r.next().ok());
  }
  {
    FrameReader r;  // a SYN_STREAM whose header block is not zlib
    r.feed(
        std::string("\x80\x03\x00\x01\x00\x00\x00\x0e\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00"
                    "junk",
                    22));
    EXPECT_FALSE(r.next().ok());
  }
  {
    FrameReader r;  // a short RST_STREAM
    r.feed(std::string("\x80\x03\x00\x03\x00\x00\x00\x02\x00\x01", 10));
    EXPECT_FALSE(r.next().ok());
  }
  {
    FrameWriter w;  // a header block claiming more headers than allowed
    Frame syn{.type = FrameType::kSynStream, .streamId = 1};
    for (uint32_t i = 0; i <= FrameReader::kMaxHeaders; ++i) {
      syn.headers.emplace_back("h" + std::to_string(i), "v");
    }
    FrameReader r;
    r.feed(*w.encode(syn));
    auto f = r.next();
    ASSERT_FALSE(f.ok());
    EXPECT_NE(f.status().message().find("headers in one block"), std::string::npos);
  }
  {
    FrameReader r;  // unknown control frame types are skipped
    r.feed(std::string("\x80\x03\x00\x0a\x00\x00\x00\x00", 8));
    FrameWriter w;
    r.feed(*w.encode({.type = FrameType::kPing, .pingId = 9}));
    auto f = r.next();
    ASSERT_TRUE(f.ok() && f->has_value());
    EXPECT_EQ((*f)->pingId, 9u);
  }
}

TEST(SpdyUpgradeTest, ClientAndServerHandshakeThenBytesFlow) {
  http::Server server([](const http::Request& req, http::ResponseWriter& w) {
    if (!isUpgradeRequest(req) || req.header(kProtocolHeader) != "portforward.k8s.io") {
      return w.send(
          http::Response::error(Status::Forbidden("unable to upgrade: no common protocol")));
    }
    auto stream = w.takeStream();
    // The answer and the first frame bytes in one write: the client keeps what came along.
    ASSERT_TRUE(stream
                    ->write("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n"
                            "Upgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: portforward.k8s.io"
                            "\r\n\r\nfirst")
                    .ok());
    char buf[64];
    auto n = stream->read(buf, sizeof(buf));
    if (n.ok()) (void)stream->write(std::string(buf, *n));
  });
  ASSERT_TRUE(server.start("127.0.0.1:0").ok());
  const std::string base = "http://127.0.0.1:" + std::to_string(server.port());
  auto up = dialUpgrade(base + "/portforward/abc", {"portforward.k8s.io"});
  ASSERT_TRUE(up.ok()) << up.status().toString();
  EXPECT_EQ(up->protocol, "portforward.k8s.io");
  std::string got = up->alreadyRead;
  ASSERT_TRUE(up->stream->write("back").ok());
  char buf[64];
  while (got.size() < 9) {
    auto n = up->stream->read(buf, sizeof(buf));
    ASSERT_TRUE(n.ok() && *n > 0);
    got.append(buf, *n);
  }
  EXPECT_EQ(got, "firstback");

  auto refused = dialUpgrade(base + "/portforward/abc", {"v4.channel.k8s.io"});
  EXPECT_EQ(refused.status().code(), 403);
  EXPECT_EQ(refused.status().message(), "unable to upgrade: no common protocol");
  server.stop();
}

TEST(SpdyUpgradeTest, OnlyPlainHttpUrls) {
  EXPECT_EQ(dialUpgrade("https://127.0.0.1:1/x", {}).status().code(), 400);
  EXPECT_EQ(dialUpgrade("http://127.0.0.1:99999/x", {}).status().code(), 400);
  EXPECT_EQ(dialUpgrade("127.0.0.1:80/x", {}).status().code(), 400);
  EXPECT_FALSE(dialUpgrade("http://127.0.0.1:1/x", {}, std::chrono::seconds(1)).ok());
}

}  // namespace
}  // namespace minik8s::spdy
