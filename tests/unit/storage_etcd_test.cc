// EtcdStore specifics beyond the shared conformance suite: endpoint fail-over and URL errors.
#include <gtest/gtest.h>

#include <chrono>

#include "storage/etcd/etcd_process.h"
#include "storage/etcd/etcd_store.h"
#include "storage/store.h"

namespace minik8s::storage::etcd {
namespace {

using namespace std::chrono_literals;

TEST(EtcdStoreTest, TriesEndpointsInOrderUntilOneAnswers) {
  auto proc = EtcdProcess::start();
  ASSERT_TRUE(proc.ok()) << "needs a real etcd (/usr/bin/etcd): " << proc.status().toString();
  // Port 1 on loopback refuses connections: the store must move on to the live endpoint.
  auto store = openStore("etcd://127.0.0.1:1," + (*proc)->endpoint());
  ASSERT_TRUE(store.ok()) << store.status().toString();
  auto rev = (*store)->create("/failover/a", "1");
  ASSERT_TRUE(rev.ok()) << rev.status().toString();
  EXPECT_EQ((*store)->get("/failover/a")->value, "1");

  auto w = (*store)->watch("/failover/", *rev);
  ASSERT_TRUE(w.ok()) << w.status().toString();
  ASSERT_TRUE((*store)->update("/failover/a", "2", *rev).ok());
  std::vector<WatchEvent> events;
  for (int i = 0; i < 50 && events.empty(); ++i) ASSERT_TRUE((*w)->next(events, 100ms).ok());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].prevValue, "1");
}

// Which failed writes may have been applied: after one of those, a refusal of the repeated write
// is checked against the value it wrote (the chaos soak's applied-but-409 case).
TEST(EtcdStoreTest, TellsWritesThatNeverReachedAMemberFromThoseThatMayHaveApplied) {
  constexpr int kUnavailable = 14, kDeadlineExceeded = 4;
  EXPECT_TRUE(writeNeverProposed(kUnavailable,
                                 "failed to connect to all addresses; last error: UNKNOWN: "
                                 "ipv4:127.0.0.1:1: Connection refused"));
  EXPECT_TRUE(writeNeverProposed(kUnavailable, "etcdserver: no leader"));
  EXPECT_FALSE(writeNeverProposed(kUnavailable, "Socket closed"));
  EXPECT_FALSE(writeNeverProposed(kUnavailable, "recvmsg:Connection reset by peer"));
  EXPECT_FALSE(writeNeverProposed(kUnavailable, "etcdserver: leader changed"));
  EXPECT_FALSE(writeNeverProposed(kUnavailable, "etcdserver: request timed out"));
  EXPECT_FALSE(writeNeverProposed(kDeadlineExceeded, "Deadline Exceeded"));
}

TEST(EtcdStoreTest, AllEndpointsDownIsUnavailable) {
  auto store = openStore("etcd://127.0.0.1:1,127.0.0.1:2");
  ASSERT_TRUE(store.ok());  // connecting is lazy
  auto got = (*store)->get("/x");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), 503) << got.status().toString();
  auto w = (*store)->watch("/x/", 0);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), 503) << w.status().toString();
}

TEST(EtcdStoreTest, RejectsEndpointsWithoutPort) {
  EXPECT_EQ(openStore("etcd://").status().reason(), "BadRequest");
  EXPECT_EQ(openStore("etcd://localhost").status().reason(), "BadRequest");
}

}  // namespace
}  // namespace minik8s::storage::etcd
