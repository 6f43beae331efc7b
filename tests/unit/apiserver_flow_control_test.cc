#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "apiserver/flow_control.h"
#include "auth_user.h"
#include "eventually.h"

namespace minik8s::apiserver {
namespace {

using namespace std::chrono_literals;

using testing::user;

FlowControlOptions noQueue(int readOnly, int mutating) {
  FlowControlOptions o;
  o.maxRequestsInflight = readOnly;
  o.maxMutatingRequestsInflight = mutating;
  o.queueLengthPerFlow = 0;
  return o;
}

using testing::eventually;

TEST(FlowControlTest, ClassifiesCallersLikeKubernetesPriorityLevels) {
  EXPECT_EQ(classify(user("kubernetes-admin", {"system:masters"})).level, PriorityLevel::kExempt);
  EXPECT_EQ(classify(user("system:kube-controller-manager")).level, PriorityLevel::kSystem);
  EXPECT_EQ(classify(user("system:kube-controller-manager")).flowSchema, "kube-controller-manager");
  EXPECT_EQ(classify(user("system:kube-scheduler")).level, PriorityLevel::kSystem);
  EXPECT_EQ(classify(user("system:node:n1", {"system:nodes"})).flowSchema, "system-nodes");
  EXPECT_EQ(classify(user("system:serviceaccount:kube-system:coredns")).level,
            PriorityLevel::kSystem);
  EXPECT_EQ(classify(user("system:minik8s-monitoring")).level, PriorityLevel::kSystem);
  EXPECT_EQ(classify(user("system:serviceaccount:default:app")).level, PriorityLevel::kWorkload);
  EXPECT_EQ(classify(user("system:serviceaccount:default:app")).flowSchema, "service-accounts");
  EXPECT_EQ(classify(user("alice")).flowSchema, "global-default");
  EXPECT_EQ(classify(user("system:anonymous", {"system:unauthenticated"})).level,
            PriorityLevel::kWorkload);
  // Impersonating a control-plane name is not enough without the name itself: a group alone
  // such as system:serviceaccounts:kube-system is not matched.
  EXPECT_EQ(classify(user("mallory", {"system:serviceaccounts:kube-system"})).level,
            PriorityLevel::kWorkload);
}

TEST(FlowControlTest, SplitsEachBudgetBetweenSystemAndWorkload) {
  FlowControl fc({400, 200});
  EXPECT_EQ(fc.limit(RequestKind::kReadOnly, PriorityLevel::kSystem), 400);
  EXPECT_EQ(fc.limit(RequestKind::kReadOnly, PriorityLevel::kWorkload), 200);
  EXPECT_EQ(fc.limit(RequestKind::kMutating, PriorityLevel::kWorkload), 100);
  FlowControl small({1, 3});
  EXPECT_EQ(small.limit(RequestKind::kReadOnly, PriorityLevel::kWorkload), 1);
  EXPECT_EQ(small.limit(RequestKind::kMutating, PriorityLevel::kWorkload), 1);
  FlowControl off({0, 0});
  EXPECT_EQ(off.limit(RequestKind::kReadOnly, PriorityLevel::kWorkload), 0);
}

TEST(FlowControlTest, CountsSeatsAndRejectsPastTheLimit) {
  FlowControl fc(noQueue(4, 2));
  auto alice = user("alice"), bob = user("bob");
  // Workload gets 2 of the 4 read-only seats.
  auto a1 = fc.admit(RequestKind::kReadOnly, alice);
  auto a2 = fc.admit(RequestKind::kReadOnly, bob);
  ASSERT_TRUE(a1.admitted());
  ASSERT_TRUE(a2.admitted());
  EXPECT_EQ(fc.executing(RequestKind::kReadOnly, PriorityLevel::kWorkload), 2);
  EXPECT_FALSE(fc.admit(RequestKind::kReadOnly, alice).admitted());
  // The mutating budget is separate.
  auto m1 = fc.admit(RequestKind::kMutating, alice);
  EXPECT_TRUE(m1.admitted());
  EXPECT_FALSE(fc.admit(RequestKind::kMutating, bob).admitted());
  // A finished request gives its seat back.
  a1 = FlowControl::Seat();
  EXPECT_EQ(fc.executing(RequestKind::kReadOnly, PriorityLevel::kWorkload), 1);
  EXPECT_TRUE(fc.admit(RequestKind::kReadOnly, bob).admitted());
}

TEST(FlowControlTest, SystemKeepsItsReserveAndBorrowsFreeSeats) {
  FlowControl fc(noQueue(4, 2));
  auto cm = user("system:kube-controller-manager");
  std::vector<FlowControl::Seat> held;
  for (int i = 0; i < 2; ++i) held.push_back(fc.admit(RequestKind::kReadOnly, user("flooder")));
  EXPECT_FALSE(fc.admit(RequestKind::kReadOnly, user("flooder")).admitted());
  // Workload is full; the control plane still has its two reserved seats.
  auto s1 = fc.admit(RequestKind::kReadOnly, cm);
  auto s2 = fc.admit(RequestKind::kReadOnly, user("system:node:n1", {"system:nodes"}));
  EXPECT_TRUE(s1.admitted());
  EXPECT_TRUE(s2.admitted());
  EXPECT_FALSE(fc.admit(RequestKind::kReadOnly, cm).admitted());  // the budget is used up
  held.clear();
  s2 = FlowControl::Seat();
  // With workload idle, system may use every seat.
  std::vector<FlowControl::Seat> system;
  for (int i = 0; i < 3; ++i) system.push_back(fc.admit(RequestKind::kReadOnly, cm));
  for (auto& s : system) EXPECT_TRUE(s.admitted());
  EXPECT_FALSE(fc.admit(RequestKind::kReadOnly, user("alice")).admitted());
}

TEST(FlowControlTest, SystemMastersAndUnlimitedBudgetsAreNeverRejected) {
  FlowControl fc(noQueue(1, 1));
  auto admin = user("kubernetes-admin", {"system:masters"});
  std::vector<FlowControl::Seat> seats;
  for (int i = 0; i < 50; ++i) seats.push_back(fc.admit(RequestKind::kMutating, admin));
  for (auto& s : seats) EXPECT_TRUE(s.admitted());
  EXPECT_EQ(fc.executing(RequestKind::kMutating, PriorityLevel::kWorkload), 0);
  FlowControl off(noQueue(0, 0));
  seats.clear();
  for (int i = 0; i < 50; ++i) seats.push_back(off.admit(RequestKind::kReadOnly, user("alice")));
  for (auto& s : seats) EXPECT_TRUE(s.admitted());
}

TEST(FlowControlTest, AQueuedRequestGetsTheNextSeatOrTimesOut) {
  FlowControlOptions o;
  o.maxRequestsInflight = 2;  // workload: 1 seat
  o.queueLengthPerFlow = 1;
  o.maxQueueWait = 200ms;
  FlowControl fc(o);
  auto alice = user("alice");
  auto first = fc.admit(RequestKind::kReadOnly, alice);
  ASSERT_TRUE(first.admitted());
  std::atomic<bool> admitted{false};
  std::thread waiter([&] {
    auto s = fc.admit(RequestKind::kReadOnly, alice);
    admitted = s.admitted();
  });
  ASSERT_TRUE(
      eventually([&] { return fc.queued(RequestKind::kReadOnly, PriorityLevel::kWorkload) == 1; }));
  // Alice's queue (length 1) is full: rejected at once.
  EXPECT_FALSE(fc.admit(RequestKind::kReadOnly, alice).admitted());
  first = FlowControl::Seat();
  waiter.join();
  EXPECT_TRUE(admitted);
  // Nothing frees the seat: the queued request gives up after maxQueueWait.
  auto holder = fc.admit(RequestKind::kReadOnly, alice);
  ASSERT_TRUE(holder.admitted());
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(fc.admit(RequestKind::kReadOnly, alice).admitted());
  EXPECT_GE(std::chrono::steady_clock::now() - start, 190ms);
  EXPECT_EQ(fc.queued(RequestKind::kReadOnly, PriorityLevel::kWorkload), 0);
}

TEST(FlowControlTest, AFreedSeatGoesToTheUserHoldingFewest) {
  FlowControlOptions o;
  o.maxRequestsInflight = 4;  // workload: 2 seats
  o.queueLengthPerFlow = 8;
  o.maxQueueWait = 5s;
  FlowControl fc(o);
  // The flooder holds both seats and queues more.
  std::vector<FlowControl::Seat> flood;
  for (int i = 0; i < 2; ++i) flood.push_back(fc.admit(RequestKind::kReadOnly, user("flooder")));
  std::atomic<int> flooderServed{0}, bobServed{0};
  std::vector<std::thread> queued;
  for (int i = 0; i < 3; ++i) {
    queued.emplace_back([&] {
      auto s = fc.admit(RequestKind::kReadOnly, user("flooder"));
      if (s.admitted()) ++flooderServed;
      std::this_thread::sleep_for(20ms);
    });
  }
  ASSERT_TRUE(
      eventually([&] { return fc.queued(RequestKind::kReadOnly, PriorityLevel::kWorkload) == 3; }));
  // Bob arrives after the flooder's queued requests, and still gets the first free seat.
  std::thread bob([&] {
    auto s = fc.admit(RequestKind::kReadOnly, user("bob"));
    if (s.admitted()) ++bobServed;
    std::this_thread::sleep_for(200ms);  // keeps the seat while we look
  });
  ASSERT_TRUE(
      eventually([&] { return fc.queued(RequestKind::kReadOnly, PriorityLevel::kWorkload) == 4; }));
  flood.pop_back();
  ASSERT_TRUE(eventually([&] { return bobServed.load() == 1; }));
  EXPECT_EQ(flooderServed.load(), 0);
  flood.clear();
  bob.join();
  for (auto& t : queued) t.join();
  EXPECT_EQ(flooderServed.load(), 3);
}

TEST(FlowControlTest, OneUsersFloodIsRejectedWhileOthersAreServed) {
  FlowControlOptions o;
  o.maxRequestsInflight = 4;  // workload: 2 seats
  o.queueLengthPerFlow = 2;
  o.maxQueueWait = 2s;
  FlowControl fc(o);
  std::atomic<int> flooderOk{0}, flooderRejected{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> flood;
  for (int i = 0; i < 12; ++i) {
    flood.emplace_back([&] {
      while (!stop) {
        auto s = fc.admit(RequestKind::kReadOnly, user("flooder"));
        if (!s.admitted()) {
          ++flooderRejected;
          std::this_thread::sleep_for(1ms);
          continue;
        }
        ++flooderOk;
        std::this_thread::sleep_for(5ms);
      }
    });
  }
  ASSERT_TRUE(eventually([&] { return flooderRejected.load() > 10; }));
  int othersOk = 0;
  for (int i = 0; i < 20; ++i) {
    if (fc.admit(RequestKind::kReadOnly, user("bob")).admitted()) ++othersOk;
    if (fc.admit(RequestKind::kReadOnly, user("system:kube-controller-manager")).admitted()) {
      ++othersOk;
    }
  }
  stop = true;
  for (auto& t : flood) t.join();
  EXPECT_EQ(othersOk, 40);
  EXPECT_GT(flooderOk.load(), 0);
}

TEST(FlowControlTest, TooManyRequestsAnswerIsKubernetesShaped) {
  http::Response r = tooManyRequestsResponse();
  EXPECT_EQ(r.status, 429);
  bool retryAfter = false;
  for (auto& [k, v] : r.headers) retryAfter |= k == "Retry-After" && v == "1";
  EXPECT_TRUE(retryAfter);
  json body = json::parse(r.body);
  EXPECT_EQ(body["kind"], "Status");
  EXPECT_EQ(body["code"], 429);
  EXPECT_EQ(body["reason"], "TooManyRequests");
  EXPECT_EQ(body["message"], "Too many requests, please try again later.");
  EXPECT_EQ(body["details"]["retryAfterSeconds"], 1);
}

TEST(FlowControlTest, LongRunningRequestsAreRecognised) {
  RequestInfo watch;
  watch.verb = "watch";
  EXPECT_TRUE(isLongRunning(watch));
  RequestInfo logs;
  logs.verb = "get";
  logs.subresource = "log";
  EXPECT_TRUE(isLongRunning(logs));
  RequestInfo list;
  list.verb = "list";
  EXPECT_FALSE(isLongRunning(list));
}

}  // namespace
}  // namespace minik8s::apiserver
