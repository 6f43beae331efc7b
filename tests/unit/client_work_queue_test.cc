#include <gtest/gtest.h>

#include "client/work_queue.h"
#include "fake_clock.h"

namespace minik8s::client {
namespace {

using std::chrono::milliseconds;

TEST(WorkQueue, DeduplicatesAndRequeuesAfterDone) {
  testing::FakeClock clock;
  WorkQueue q(clock);
  q.add("a");
  q.add("a");
  q.add("b");
  EXPECT_EQ(q.length(), 2u);
  auto a = q.get(milliseconds(0));
  ASSERT_EQ(a, "a");
  q.add("a");  // while processing: queued again when done
  EXPECT_EQ(q.length(), 1u);
  q.done("a");
  EXPECT_EQ(q.length(), 2u);
}

// The samples of one queue's metrics, as the registry renders them.
std::string sampleLines(const metrics::Registry& r) {
  std::string out;
  std::string text = r.exposition();
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.empty() || line[0] == '#') continue;
    if (line.find("_bucket") != std::string::npos) continue;
    out += line + "\n";
  }
  return out;
}

TEST(WorkQueue, RecordsClientGoMetricsUnderItsName) {
  testing::FakeClock clock;
  metrics::Registry registry;
  WorkQueue q(clock, milliseconds(5), milliseconds(1000));
  q.enableMetrics("replicaset", registry);

  q.add("default/a");
  q.add("default/a");  // already waiting: not an add
  q.add("default/b");
  clock.advance(milliseconds(250));
  auto key = q.get(milliseconds(0));
  ASSERT_EQ(key, "default/a");
  clock.advance(milliseconds(500));
  q.addRateLimited(*key);  // a failed sync: one retry, back in 5 ms
  q.done(*key);

  EXPECT_EQ(sampleLines(registry),
            "workqueue_adds_total{name=\"replicaset\"} 2\n"
            "workqueue_depth{name=\"replicaset\"} 1\n"
            "workqueue_queue_duration_seconds_sum{name=\"replicaset\"} 0.25\n"
            "workqueue_queue_duration_seconds_count{name=\"replicaset\"} 1\n"
            "workqueue_retries_total{name=\"replicaset\"} 1\n"
            "workqueue_work_duration_seconds_sum{name=\"replicaset\"} 0.5\n"
            "workqueue_work_duration_seconds_count{name=\"replicaset\"} 1\n");

  clock.advance(milliseconds(5));
  q.promoteDue();  // the retry comes due
  EXPECT_EQ(q.length(), 2u);
  q.get(milliseconds(0));
  q.get(milliseconds(0));
  std::string text = registry.exposition();
  EXPECT_NE(text.find("workqueue_adds_total{name=\"replicaset\"} 3\n"), std::string::npos);
  EXPECT_NE(text.find("workqueue_depth{name=\"replicaset\"} 0\n"), std::string::npos);
  // default/b waited 755 ms, the retry 0 s: buckets are cumulative up to 10 s.
  EXPECT_NE(
      text.find("workqueue_queue_duration_seconds_bucket{name=\"replicaset\",le=\"0.1\"} 1\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("workqueue_queue_duration_seconds_bucket{name=\"replicaset\",le=\"1\"} 3\n"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find("workqueue_queue_duration_seconds_bucket{name=\"replicaset\",le=\"+Inf\"} 3\n"),
      std::string::npos);
}

TEST(WorkQueue, WithoutMetricsRecordsNothing) {
  testing::FakeClock clock;
  metrics::Registry registry;
  WorkQueue q(clock);
  q.add("x");
  q.get(milliseconds(0));
  q.done("x");
  EXPECT_EQ(registry.exposition(), "");
}

}  // namespace
}  // namespace minik8s::client
