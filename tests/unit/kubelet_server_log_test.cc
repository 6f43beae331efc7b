// CRI log parsing and `kubectl logs` options (tail, since, timestamps, limitBytes, follow).
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "kubelet/server/container_log.h"

namespace minik8s::kubelet::server {
namespace {

namespace fs = std::filesystem;

class LogFile : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = fs::temp_directory_path() /
            ("minik8s-log-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::ofstream(path_) << "2024-05-01T10:00:00.100000000Z stdout F one\n"
                            "2024-05-01T10:00:01.000000000Z stderr F two\n"
                            "2024-05-01T10:00:02.000000000Z stdout P thr\n"
                            "2024-05-01T10:00:02.500000000Z stdout F ee\n"
                            "2024-05-01T10:00:03.000000000Z stdout F four\n";
  }
  void TearDown() override { fs::remove(path_); }

  std::string read(const LogOptions& o) {
    std::string out;
    Status s = streamContainerLog(
        path_, o,
        [&](std::string_view c) {
          out.append(c);
          return true;
        },
        [] { return false; });
    EXPECT_TRUE(s.ok()) << s.toString();
    return out;
  }
  void append(const std::string& text) {
    std::ofstream(path_, std::ios::app) << text << std::flush;
  }

  fs::path path_;
};

TEST(CriLogLine, ParsesFullAndPartialRecords) {
  auto r = parseCriLogLine("2024-05-01T10:00:00.123456789Z stderr F hello world");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->time, "2024-05-01T10:00:00.123456789Z");
  EXPECT_EQ(r->stream, "stderr");
  EXPECT_FALSE(r->partial);
  EXPECT_EQ(r->text, "hello world");

  auto p = parseCriLogLine("2024-05-01T10:00:00Z stdout P part");
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->partial);
  auto empty = parseCriLogLine("2024-05-01T10:00:00Z stdout F");
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->text, "");
  EXPECT_FALSE(parseCriLogLine("garbage"));
  EXPECT_FALSE(parseCriLogLine("2024-05-01T10:00:00Z stdin F x"));
  EXPECT_FALSE(parseCriLogLine("2024-05-01T10:00:00Z stdout X x"));
}

TEST_F(LogFile, PrintsTextJoiningPartialRecords) { EXPECT_EQ(read({}), "one\ntwo\nthree\nfour\n"); }

TEST_F(LogFile, TimestampsPrefixEachLogicalLine) {
  LogOptions o;
  o.timestamps = true;
  EXPECT_EQ(read(o),
            "2024-05-01T10:00:00.100000000Z one\n2024-05-01T10:00:01.000000000Z two\n"
            "2024-05-01T10:00:02.000000000Z three\n2024-05-01T10:00:03.000000000Z four\n");
}

TEST_F(LogFile, TailCountsLogicalLines) {
  LogOptions o;
  o.tailLines = 2;
  EXPECT_EQ(read(o), "three\nfour\n");
  o.tailLines = 0;
  EXPECT_EQ(read(o), "");
  o.tailLines = 100;
  EXPECT_EQ(read(o), "one\ntwo\nthree\nfour\n");
}

TEST_F(LogFile, SinceDropsOlderLines) {
  LogOptions o;
  o.since = *parseRfc3339("2024-05-01T10:00:01Z");
  EXPECT_EQ(read(o), "two\nthree\nfour\n");
}

TEST_F(LogFile, LimitBytesCutsTheOutput) {
  LogOptions o;
  o.limitBytes = 6;
  EXPECT_EQ(read(o), "one\ntw");
}

TEST_F(LogFile, MissingFileIsNotFound) {
  Status s = streamContainerLog(
      "/nonexistent/x.log", {}, [](std::string_view) { return true; }, [] { return false; });
  EXPECT_EQ(s.code(), 404);
}

TEST_F(LogFile, FollowPrintsAppendedLinesUntilTold) {
  LogOptions o;
  o.follow = true;
  o.tailLines = 1;
  std::mutex mu;
  std::string out;
  std::atomic<bool> keep{true};
  std::thread reader([&] {
    streamContainerLog(
        path_, o,
        [&](std::string_view c) {
          std::lock_guard l(mu);
          out.append(c);
          return true;
        },
        [&] { return keep.load(); }, std::chrono::milliseconds(5));
  });
  auto waitFor = [&](const std::string& want) {
    for (int i = 0; i < 400; ++i) {
      {
        std::lock_guard l(mu);
        if (out == want) return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::lock_guard l(mu);
    ADD_FAILURE() << "got \"" << out << "\", want \"" << want << "\"";
    return false;
  };
  waitFor("four\n");
  append("2024-05-01T10:00:04Z stdout F five\n2024-05-01T10:00:05Z std");
  waitFor("four\nfive\n");
  append("err F six\n");  // the second record arrived in two writes
  waitFor("four\nfive\nsix\n");
  keep = false;
  reader.join();
}

TEST_F(LogFile, FollowStopsWhenTheSinkRefuses) {
  LogOptions o;
  o.follow = true;
  int calls = 0;
  Status s = streamContainerLog(
      path_, o, [&](std::string_view) { return ++calls < 2; }, [] { return true; });
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(calls, 2);
}

TEST(LogOptionsTest, ParsesKubectlParameters) {
  http::Request req;
  req.query = http::parseQuery(
      "follow=true&tailLines=10&timestamps=1&previous=True&limitBytes=5"
      "&sinceSeconds=60");
  auto now = Clock::now();
  auto o = parseLogOptions(req, now);
  ASSERT_TRUE(o.ok());
  EXPECT_TRUE(o->follow);
  EXPECT_TRUE(o->timestamps);
  EXPECT_TRUE(o->previous);
  EXPECT_EQ(o->tailLines, 10);
  EXPECT_EQ(o->limitBytes, 5);
  EXPECT_EQ(*o->since, now - std::chrono::seconds(60));

  req.query = http::parseQuery("tailLines=-1");
  EXPECT_EQ(parseLogOptions(req, now).status().code(), 400);
  req.query = http::parseQuery("sinceTime=yesterday");
  EXPECT_EQ(parseLogOptions(req, now).status().code(), 400);
  req.query = http::parseQuery("sinceTime=2024-05-01T10:00:00Z");
  EXPECT_EQ(*parseLogOptions(req, now)->since, *parseRfc3339("2024-05-01T10:00:00Z"));
}

}  // namespace
}  // namespace minik8s::kubelet::server
