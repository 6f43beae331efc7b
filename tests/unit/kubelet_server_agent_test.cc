// The agent's HTTP API end to end on loopback: exec over WebSocket (v5 and v4 channel framing,
// exit status, stdin, terminal resize) with commands run on the host, logs and stats; attach and
// port-forward against a fake of the runtime's SPDY streaming server.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

#include "common/http_client.h"
#include "common/spdy.h"
#include "common/websocket.h"
#include "kubelet/server/agent_server.h"

namespace minik8s::kubelet::server {
namespace {

namespace fs = std::filesystem;

class FakePods : public PodLookup {
 public:
  Result<ContainerLocation> findContainer(const std::string& ns, const std::string& pod,
                                          const std::string& container, bool previous) override {
    if (ns != "default" || pod != "web" || container != "app") {
      return Status::NotFoundMessage("container \"" + container + "\" in pod \"" + pod +
                                     "\" not found");
    }
    return ContainerLocation{previous ? "old" : "c1", previous ? previousLog : currentLog,
                             !previous && running};
  }
  std::string currentLog, previousLog;
  std::atomic<bool> running{true};
};

class FakeStats : public StatsProvider {
 public:
  Result<StatsSummary> summary() override {
    StatsSummary s;
    s.nodeName = "n1";
    s.node.time = Clock::time_point(std::chrono::seconds(1700000000));
    s.node.usageCoreNanoSeconds = 5000;
    s.node.workingSetBytes = 1 << 20;
    PodUsage p{"web", "default", "u1", {}};
    p.containers.push_back({"app", {s.node.time, 100, 7, 1000}});
    p.containers.push_back({"side", {s.node.time, 50, std::nullopt, 24}});
    s.pods.push_back(p);
    return s;
  }
};

// containerd's streaming server as the agent sees it: one-time URLs, SPDY/3.1 after an HTTP
// upgrade. /attach/* speaks the remote-command streams (stdout and stderr greet, stdin and resize
// are echoed on stdout, stdin's FIN ends the session with `errorStatus` on the error stream);
// /portforward/* echoes bytes (the agent relays them without looking).
class FakeRuntimeStreaming : public StreamingRuntime {
 public:
  FakeRuntimeStreaming()
      : http_([this](const http::Request& req, http::ResponseWriter& w) { handle(req, w); }) {
    EXPECT_TRUE(http_.start("127.0.0.1:0").ok());
  }
  ~FakeRuntimeStreaming() override { http_.stop(); }

  Result<std::string> attachUrl(const AttachSpec& spec) override {
    std::lock_guard lock(mu);
    attached = spec;
    return base() + "/attach/token1";
  }
  Result<std::string> portForwardUrl(const std::string& ns, const std::string& pod) override {
    if (ns != "default" || pod != "web") return Status::NotFoundMessage("no sandbox for " + pod);
    return base() + "/portforward/token2";
  }

  std::mutex mu;
  AttachSpec attached;
  std::map<std::string, uint32_t> streams;  // streamtype -> id
  std::string protocol;                     // X-Stream-Protocol-Version asked for
  std::string errorStatus;                  // written on the error stream at the end
  bool sawClientEnd = false;                // the agent closed the runtime connection

 private:
  std::string base() { return "http://127.0.0.1:" + std::to_string(http_.port()); }

  void handle(const http::Request& req, http::ResponseWriter& w) {
    {
      std::lock_guard lock(mu);
      protocol = req.header(spdy::kProtocolHeader);
    }
    if (!spdy::isUpgradeRequest(req) || req.method != "POST") {
      return w.send(http::Response::error(Status::BadRequest("upgrade expected")));
    }
    auto stream = w.takeStream();
    const bool attach = req.path.rfind("/attach/", 0) == 0;
    ASSERT_TRUE(
        spdy::acceptUpgrade(*stream, attach ? "v4.channel.k8s.io" : "portforward.k8s.io").ok());
    if (attach) {
      serveAttach(*stream);
    } else {
      (void)stream->write("greeting;");
      char buf[4096];
      for (;;) {
        auto n = stream->read(buf, sizeof(buf));
        if (!n.ok() || *n == 0) break;
        (void)stream->write("echo:" + std::string(buf, *n) + ";");
      }
      std::lock_guard lock(mu);
      sawClientEnd = true;
    }
  }

  void serveAttach(http::Stream& stream) {
    AttachSpec spec;
    {
      std::lock_guard lock(mu);
      spec = attached;
    }
    size_t expected = 1 + spec.stdin + spec.stdout + (spec.stderr && !spec.tty) + spec.tty;
    spdy::FrameReader reader;
    spdy::FrameWriter writer;
    auto send = [&](spdy::Frame f) { (void)stream.write(*writer.encode(f)); };
    auto idOf = [&](const std::string& type) -> uint32_t {
      std::lock_guard lock(mu);
      auto it = streams.find(type);
      return it == streams.end() ? 0 : it->second;
    };
    auto data = [&](const std::string& type, const std::string& bytes, bool fin) {
      spdy::Frame f;
      f.streamId = idOf(type);
      f.data = bytes;
      f.flags = fin ? spdy::kFlagFin : 0;
      send(f);
    };
    auto next = [&]() -> std::optional<spdy::Frame> {
      char buf[4096];
      for (;;) {
        auto f = reader.next();
        if (!f.ok()) return std::nullopt;
        if (f->has_value()) return **f;
        auto n = stream.read(buf, sizeof(buf));
        if (!n.ok() || *n == 0) return std::nullopt;
        reader.feed({buf, *n});
      }
    };
    for (size_t opened = 0; opened < expected;) {
      auto f = next();
      if (!f) return;
      if (f->type != spdy::FrameType::kSynStream) continue;
      {
        std::lock_guard lock(mu);
        streams[f->header("streamtype")] = f->streamId;
      }
      ++opened;
      spdy::Frame reply;
      reply.type = spdy::FrameType::kSynReply;
      reply.streamId = f->streamId;
      send(reply);
    }
    if (spec.stdout) data("stdout", "hello\n", false);
    if (spec.stderr && !spec.tty) data("stderr", "warn\n", false);
    bool stdinEnded = !spec.stdin;
    while (!stdinEnded) {
      auto f = next();
      if (!f) {
        std::lock_guard lock(mu);
        sawClientEnd = true;
        return;
      }
      if (f->type != spdy::FrameType::kData) continue;
      if (f->streamId == idOf("stdin") && !f->data.empty()) data("stdout", f->data, false);
      if (f->streamId == idOf("resize")) data("stdout", "resize:" + f->data, false);
      stdinEnded = f->streamId == idOf("stdin") && f->fin();
    }
    std::string status;
    {
      std::lock_guard lock(mu);
      status = errorStatus;
    }
    data("error", status, true);
    stream.shutdown();
  }

  http::Server http_;
};

struct Frame {
  int channel;
  std::string data;
};

class AgentServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("minik8s-agent-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    pods_.currentLog = (dir_ / "1.log").string();
    pods_.previousLog = (dir_ / "0.log").string();
    std::ofstream(pods_.currentLog) << "2024-05-01T10:00:00Z stdout F now-1\n"
                                       "2024-05-01T10:00:01Z stdout F now-2\n";
    std::ofstream(pods_.previousLog) << "2024-05-01T09:00:00Z stderr F crashed\n";
    AgentServerOptions o;
    o.logPollInterval = std::chrono::milliseconds(10);
    server_ = std::make_unique<AgentServer>(pods_, exec_, stats_, o, &streaming_);
    ASSERT_TRUE(server_->start("127.0.0.1:0").ok());
  }
  void TearDown() override {
    server_->stop();
    fs::remove_all(dir_);
  }

  std::string execTarget(const std::vector<std::string>& cmd, const std::string& extra) {
    std::string t = "/exec/default/web/app?";
    for (const auto& c : cmd) t += "command=" + http::percentEncode(c) + "&";
    return t + extra;
  }

  // Reads messages until the close frame.
  std::vector<Frame> readAll(ws::Connection& c) {
    std::vector<Frame> out;
    for (;;) {
      auto m = c.read();
      if (!m.ok() || m->opcode == ws::Opcode::kClose) break;
      if (m->payload.empty()) continue;
      out.push_back({static_cast<uint8_t>(m->payload[0]), m->payload.substr(1)});
    }
    return out;
  }

  static std::string joined(const std::vector<Frame>& frames, int channel) {
    std::string s;
    for (const auto& f : frames) {
      if (f.channel == channel) s += f.data;
    }
    return s;
  }

  fs::path dir_;
  FakePods pods_;
  LocalExecBackend exec_;
  FakeStats stats_;
  FakeRuntimeStreaming streaming_;
  std::unique_ptr<AgentServer> server_;
};

TEST_F(AgentServerTest, ExecSendsOutputOnChannelsAndTheExitStatusLast) {
  auto c = ws::dial(
      "127.0.0.1", server_->port(),
      execTarget({"sh", "-c", "echo out; echo err >&2; exit 3"}, "stdout=true&stderr=true"),
      {"v5.channel.k8s.io"});
  ASSERT_TRUE(c.ok()) << c.status().toString();
  EXPECT_EQ((*c)->protocol(), "v5.channel.k8s.io");
  auto frames = readAll(**c);
  EXPECT_EQ(joined(frames, 1), "out\n");
  EXPECT_EQ(joined(frames, 2), "err\n");
  ASSERT_FALSE(frames.empty());
  ASSERT_EQ(frames.back().channel, 3);
  json status = json::parse(frames.back().data);
  EXPECT_EQ(status["status"], "Failure");
  EXPECT_EQ(status["reason"], "NonZeroExitCode");
  EXPECT_EQ(status["details"]["causes"][0]["reason"], "ExitCode");
  EXPECT_EQ(status["details"]["causes"][0]["message"], "3");
}

TEST_F(AgentServerTest, ExecSuccessStatus) {
  auto c = ws::dial("127.0.0.1", server_->port(), execTarget({"true"}, "stdout=true"),
                    {"v5.channel.k8s.io"});
  ASSERT_TRUE(c.ok());
  auto frames = readAll(**c);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].channel, 3);
  EXPECT_EQ(json::parse(frames[0].data), json::parse(R"({"metadata":{},"status":"Success"})"));
}

TEST_F(AgentServerTest, ExecStdinUntilV5CloseChannel) {
  auto c = ws::dial("127.0.0.1", server_->port(),
                    execTarget({"cat"}, "stdin=true&stdout=true&stderr=true"),
                    {"v5.channel.k8s.io", "v4.channel.k8s.io"});
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE((*c)->writeBinary(std::string("\0hello ", 7)).ok());
  ASSERT_TRUE((*c)->writeBinary(std::string("\0world", 6)).ok());
  ASSERT_TRUE((*c)->writeBinary(std::string("\xff\0", 2)).ok());
  auto frames = readAll(**c);
  EXPECT_EQ(joined(frames, 1), "hello world");
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(json::parse(frames.back().data)["status"], "Success");
}

TEST_F(AgentServerTest, ExecSpeaksV4WhenOnlyV4IsOffered) {
  auto c = ws::dial("127.0.0.1", server_->port(), execTarget({"echo", "hi"}, "stdout=true"),
                    {"v4.channel.k8s.io"});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)->protocol(), "v4.channel.k8s.io");
  auto frames = readAll(**c);
  EXPECT_EQ(joined(frames, 1), "hi\n");
}

TEST_F(AgentServerTest, ExecWithTerminalAppliesResize) {
  auto c =
      ws::dial("127.0.0.1", server_->port(),
               execTarget({"sh", "-c", "sleep 0.3; stty size"}, "stdin=true&stdout=true&tty=true"),
               {"v5.channel.k8s.io"});
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE((*c)->writeBinary(std::string("\x04") + R"({"Width":101,"Height":33})").ok());
  auto frames = readAll(**c);
  EXPECT_NE(joined(frames, 1).find("33 101"), std::string::npos) << joined(frames, 1);
  EXPECT_EQ(joined(frames, 2), "");
}

TEST_F(AgentServerTest, ExecRejectsBeforeUpgrade) {
  auto noProto = ws::dial("127.0.0.1", server_->port(), execTarget({"true"}, ""),
                          {"SPDY/3.1+portforward.k8s.io"});
  EXPECT_EQ(noProto.status().code(), 400);
  auto unknown = ws::dial("127.0.0.1", server_->port(), "/exec/default/web/nope?command=true",
                          {"v5.channel.k8s.io"});
  EXPECT_EQ(unknown.status().code(), 404);
  pods_.running = false;
  auto stopped =
      ws::dial("127.0.0.1", server_->port(), execTarget({"true"}, ""), {"v5.channel.k8s.io"});
  EXPECT_EQ(stopped.status().code(), 400);
}

TEST_F(AgentServerTest, ExecOfMissingBinaryReportsExitCode) {
  auto c = ws::dial("127.0.0.1", server_->port(),
                    execTarget({"/nonexistent/binary"}, "stdout=true&stderr=true"),
                    {"v5.channel.k8s.io"});
  ASSERT_TRUE(c.ok());
  auto frames = readAll(**c);
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(json::parse(frames.back().data)["details"]["causes"][0]["message"], "127");
}

TEST_F(AgentServerTest, LogsCurrentPreviousAndTail) {
  http::Client client("http://127.0.0.1:" + std::to_string(server_->port()));
  auto r = client.get("/containerLogs/default/web/app");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "now-1\nnow-2\n");
  r = client.get("/containerLogs/default/web/app?tailLines=1&timestamps=true");
  EXPECT_EQ(r->body, "2024-05-01T10:00:01Z now-2\n");
  r = client.get("/containerLogs/default/web/app?previous=true");
  EXPECT_EQ(r->body, "crashed\n");
  r = client.get("/containerLogs/default/web/other");
  EXPECT_EQ(r->status, 404);
  r = client.get("/containerLogs/default/web/app?tailLines=x");
  EXPECT_EQ(r->status, 400);
}

TEST_F(AgentServerTest, FollowEndsWhenTheContainerStops) {
  http::Client client("http://127.0.0.1:" + std::to_string(server_->port()));
  std::string body;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::ofstream(pods_.currentLog, std::ios::app) << "2024-05-01T10:00:02Z stdout F last\n";
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    pods_.running = false;
  });
  auto r =
      client.stream("GET", "/containerLogs/default/web/app?follow=true", [&](std::string_view d) {
        body.append(d);
        return true;
      });
  stopper.join();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(body, "now-1\nnow-2\nlast\n");
}

TEST_F(AgentServerTest, StatsSummaryAndHealth) {
  http::Client client("http://127.0.0.1:" + std::to_string(server_->port()));
  EXPECT_EQ(client.get("/healthz")->body, "ok");
  auto r = client.get("/stats/summary");
  ASSERT_TRUE(r.ok());
  json s = json::parse(r->body);
  EXPECT_EQ(s["node"]["nodeName"], "n1");
  EXPECT_EQ(s["node"]["cpu"]["usageCoreNanoSeconds"], 5000);
  EXPECT_EQ(s["node"]["cpu"]["time"], "2023-11-14T22:13:20Z");
  EXPECT_EQ(s["node"]["memory"]["workingSetBytes"], 1 << 20);
  const json& pod = s["pods"][0];
  EXPECT_EQ(pod["podRef"], json::parse(R"({"name":"web","namespace":"default","uid":"u1"})"));
  EXPECT_EQ(pod["containers"][0]["cpu"]["usageNanoCores"], 7);
  EXPECT_FALSE(pod["containers"][1]["cpu"].contains("usageNanoCores"));
  EXPECT_EQ(pod["cpu"]["usageCoreNanoSeconds"], 150);
  EXPECT_EQ(pod["memory"]["workingSetBytes"], 1024);
}

TEST_F(AgentServerTest, AttachTranslatesChannelsToTheRuntimesStreams) {
  auto c =
      ws::dial("127.0.0.1", server_->port(),
               "/attach/default/web/app?stdin=true&stdout=true&stderr=true", {"v5.channel.k8s.io"});
  ASSERT_TRUE(c.ok()) << c.status().toString();
  ASSERT_TRUE((*c)->writeBinary(std::string("\0abc", 4)).ok());
  ASSERT_TRUE((*c)->writeBinary(std::string("\xff\0", 2)).ok());
  auto frames = readAll(**c);
  EXPECT_EQ(joined(frames, 1), "hello\nabc");
  EXPECT_EQ(joined(frames, 2), "warn\n");
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(frames.back().channel, 3);
  EXPECT_EQ(json::parse(frames.back().data), json::parse(R"({"metadata":{},"status":"Success"})"));
  std::lock_guard lock(streaming_.mu);
  EXPECT_EQ(streaming_.protocol, "v4.channel.k8s.io");
  EXPECT_EQ(streaming_.attached.containerId, "c1");
  EXPECT_TRUE(streaming_.attached.stdin);
  EXPECT_EQ(streaming_.streams, (std::map<std::string, uint32_t>{
                                    {"error", 1}, {"stdin", 3}, {"stdout", 5}, {"stderr", 7}}));
}

TEST_F(AgentServerTest, AttachWithTerminalForwardsResizeAndTheRuntimesStatus) {
  streaming_.errorStatus =
      R"({"metadata":{},"status":"Failure","message":"container gone","reason":"InternalError"})";
  auto c = ws::dial("127.0.0.1", server_->port(),
                    "/attach/default/web/app?stdin=true&stdout=true&stderr=true&tty=true",
                    {"v4.channel.k8s.io"});
  ASSERT_TRUE(c.ok()) << c.status().toString();
  ASSERT_TRUE((*c)->writeBinary(std::string("\x04") + R"({"Width":80,"Height":24})").ok());
  ASSERT_TRUE((*c)->writeBinary(std::string("\0x", 2)).ok());
  ASSERT_TRUE((*c)->writeBinary(std::string("\xff\0", 2)).ok());
  auto frames = readAll(**c);
  EXPECT_EQ(joined(frames, 1), R"(hello
resize:{"Width":80,"Height":24}x)");
  EXPECT_EQ(joined(frames, 2), "");
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(json::parse(frames.back().data)["message"], "container gone");
  std::lock_guard lock(streaming_.mu);
  EXPECT_EQ(streaming_.streams.count("stderr"), 0u);  // a terminal merges it into stdout
  EXPECT_EQ(streaming_.streams.count("resize"), 1u);
}

TEST_F(AgentServerTest, AttachedClientLeavingDetachesFromTheRuntime) {
  {
    auto c = ws::dial("127.0.0.1", server_->port(), "/attach/default/web/app?stdin=true",
                      {"v5.channel.k8s.io"});
    ASSERT_TRUE(c.ok());
    auto m = (*c)->read();  // the greeting: attached
    ASSERT_TRUE(m.ok());
  }  // closed without ending stdin
  for (int i = 0; i < 200; ++i) {
    {
      std::lock_guard lock(streaming_.mu);
      if (streaming_.sawClientEnd) return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ADD_FAILURE() << "the runtime's connection stayed open after the client left";
}

TEST_F(AgentServerTest, AttachRefusals) {
  pods_.running = false;
  auto stopped = ws::dial("127.0.0.1", server_->port(), "/attach/default/web/app?stdout=true",
                          {"v5.channel.k8s.io"});
  EXPECT_EQ(stopped.status().code(), 400);
  pods_.running = true;
  auto none = ws::dial("127.0.0.1", server_->port(),
                       "/attach/default/web/app?stdout=false&stderr=false", {"v5.channel.k8s.io"});
  EXPECT_EQ(none.status().code(), 400);
  auto unknown = ws::dial("127.0.0.1", server_->port(), "/attach/default/web/nope?stdout=true",
                          {"v5.channel.k8s.io"});
  EXPECT_EQ(unknown.status().code(), 404);
}

TEST_F(AgentServerTest, PortForwardOverSpdyRelaysTheSessionBytes) {
  const std::string agent = "http://127.0.0.1:" + std::to_string(server_->port());
  auto up = spdy::dialUpgrade(agent + "/portForward/default/web", {"portforward.k8s.io"});
  ASSERT_TRUE(up.ok()) << up.status().toString();
  EXPECT_EQ(up->protocol, "portforward.k8s.io");
  ASSERT_TRUE(up->stream->write("\x80\x03\x00\x01").ok());  // bytes, whatever they mean
  std::string got = up->alreadyRead;
  char buf[256];
  while (got.find("echo:\x80\x03\x00\x01;") == std::string::npos) {
    auto n = up->stream->read(buf, sizeof(buf));
    ASSERT_TRUE(n.ok() && *n > 0) << got;
    got.append(buf, *n);
  }
  EXPECT_EQ(got.rfind("greeting;", 0), 0u) << got;
  std::lock_guard lock(streaming_.mu);
  EXPECT_EQ(streaming_.protocol, "portforward.k8s.io");
}

TEST_F(AgentServerTest, PortForwardOverAWebSocketTunnel) {
  auto c = ws::dial("127.0.0.1", server_->port(), "/portForward/default/web?ports=80",
                    {"SPDY/3.1+portforward.k8s.io"});
  ASSERT_TRUE(c.ok()) << c.status().toString();
  EXPECT_EQ((*c)->protocol(), "SPDY/3.1+portforward.k8s.io");
  ASSERT_TRUE((*c)->writeBinary("spdy-bytes").ok());
  std::string got;
  while (got.find("echo:spdy-bytes;") == std::string::npos) {
    auto m = (*c)->read();
    ASSERT_TRUE(m.ok() && m->opcode == ws::Opcode::kBinary) << got;
    got += m->payload;
  }
  EXPECT_EQ(got, "greeting;echo:spdy-bytes;");
  ASSERT_TRUE((*c)->writeClose().ok());
  for (int i = 0; i < 200; ++i) {
    {
      std::lock_guard lock(streaming_.mu);
      if (streaming_.sawClientEnd) return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ADD_FAILURE() << "the runtime's connection stayed open after the tunnel closed";
}

TEST_F(AgentServerTest, PortForwardRefusals) {
  const std::string agent = "http://127.0.0.1:" + std::to_string(server_->port());
  auto badProtocol = spdy::dialUpgrade(agent + "/portForward/default/web", {"v4.channel.k8s.io"});
  EXPECT_EQ(badProtocol.status().code(), 403);
  auto badTunnel =
      ws::dial("127.0.0.1", server_->port(), "/portForward/default/web", {"v5.channel.k8s.io"});
  EXPECT_EQ(badTunnel.status().code(), 400);
  auto noSandbox = spdy::dialUpgrade(agent + "/portForward/default/db", {"portforward.k8s.io"});
  EXPECT_EQ(noSandbox.status().code(), 404);
  http::Client client(agent);
  auto plain = client.request("POST", "/portForward/default/web");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->status, 400);
}

TEST(AgentServerWithoutRuntimeStreaming, AttachAndPortForwardAreNotImplemented) {
  FakePods pods;
  LocalExecBackend exec;
  FakeStats stats;
  AgentServer server(pods, exec, stats);
  ASSERT_TRUE(server.start("127.0.0.1:0").ok());
  auto pf = spdy::dialUpgrade(
      "http://127.0.0.1:" + std::to_string(server.port()) + "/portForward/default/web",
      {"portforward.k8s.io"});
  EXPECT_EQ(pf.status().code(), 501);
  server.stop();
}

TEST(NodeStats, ParsesProcFiles) {
  EXPECT_EQ(parseProcStatCpu("cpu  100 20 30 1000 50 5 5 10 0 0\ncpu0 1 2 3\n", 100),
            (100 + 20 + 30 + 5 + 5 + 10) * 10000000ULL);
  EXPECT_FALSE(parseProcStatCpu("intr 1 2 3", 100));
  EXPECT_EQ(parseMeminfoWorkingSet("MemTotal:  1000 kB\nMemFree: 10 kB\nMemAvailable:  400 kB\n"),
            600 * 1024ULL);
  auto now = readNodeStats(Clock::now());
  EXPECT_TRUE(now.usageCoreNanoSeconds.has_value());
  EXPECT_GT(now.workingSetBytes.value_or(0), 0u);
}

// runc exec on the runc state of the agent's own containerd (no output lost), ctr otherwise.
TEST(CtrExecBackendTest, RuncExecWhenTheContainerStateIsFound) {
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("exec-backend-" + std::to_string(::getpid()));
  fs::create_directories(dir / "runc" / "k8s.io" / "abc");
  std::ofstream(dir / "runc" / "k8s.io" / "abc" / "state.json") << "{}";
  CtrExecBackend backend("unix://" + (dir / "containerd.sock").string());
  EXPECT_EQ(backend.runcRoot(), (dir / "runc" / "k8s.io").string());
  ExecSpec spec;
  spec.containerId = "abc";
  spec.command = {"cat", "/etc/hostname"};
  EXPECT_EQ(backend.commandLine(spec, "e1"),
            (std::vector<std::string>{"runc", "--root", backend.runcRoot(), "exec", "abc", "cat",
                                      "/etc/hostname"}));
  spec.tty = true;  // terminals go through ctr
  EXPECT_EQ(backend.commandLine(spec, "e1")[0], "ctr");
  spec.containerId = "other";  // not in this runc root: through containerd's task API
  spec.tty = false;
  EXPECT_EQ(backend.commandLine(spec, "e1"),
            (std::vector<std::string>{"ctr", "-a", "unix://" + (dir / "containerd.sock").string(),
                                      "-n", "k8s.io", "tasks", "exec", "--exec-id", "e1", "other",
                                      "cat", "/etc/hostname"}));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace minik8s::kubelet::server
