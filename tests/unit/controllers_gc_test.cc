// Garbage-collector decisions for a dependent, given the state of its owners.
#include <gtest/gtest.h>

#include <map>

#include "controllers/gc/garbage_collector.h"

namespace minik8s::controllers {
namespace {

json dependent(std::vector<std::string> ownerUids) {
  json refs = json::array();
  for (const auto& u : ownerUids) {
    refs.push_back({{"apiVersion", "apps/v1"}, {"kind", "ReplicaSet"}, {"name", u}, {"uid", u}});
  }
  return {{"metadata", {{"name", "p"}, {"namespace", "default"}, {"ownerReferences", refs}}}};
}

GcDecision decide(const json& obj, std::map<std::string, OwnerState> states) {
  return decideForDependent(obj, [&](const json& ref) { return states.at(ref["uid"]); });
}

TEST(GcDecisionTest, NoOwnersOrLiveOwnerKeeps) {
  EXPECT_EQ(decide(dependent({}), {}).action, GcDecision::Action::kKeep);
  EXPECT_EQ(decide(dependent({"a"}), {{"a", OwnerState::kPresent}}).action,
            GcDecision::Action::kKeep);
  EXPECT_EQ(decide(dependent({"a"}), {{"a", OwnerState::kUnknownKind}}).action,
            GcDecision::Action::kKeep);
}

TEST(GcDecisionTest, AllOwnersGoneDeletesInBackground) {
  auto d = decide(dependent({"a", "b"}), {{"a", OwnerState::kGone}, {"b", OwnerState::kGone}});
  EXPECT_EQ(d.action, GcDecision::Action::kDelete);
  EXPECT_EQ(d.propagationPolicy, "Background");
}

TEST(GcDecisionTest, OwnerInForegroundDeletionDeletesInForeground) {
  auto d = decide(dependent({"a", "b"}),
                  {{"a", OwnerState::kGone}, {"b", OwnerState::kDeletingForeground}});
  EXPECT_EQ(d.action, GcDecision::Action::kDelete);
  EXPECT_EQ(d.propagationPolicy, "Foreground");
}

TEST(GcDecisionTest, LiveOwnerKeepsObjectButDropsDanglingRefs) {
  auto d = decide(dependent({"a", "b", "c"}), {{"a", OwnerState::kGone},
                                               {"b", OwnerState::kPresent},
                                               {"c", OwnerState::kDeletingForeground}});
  EXPECT_EQ(d.action, GcDecision::Action::kRemoveOwnerRefs);
  EXPECT_EQ(d.removeUids, std::vector<std::string>({"a", "c"}));
}

TEST(GcDecisionTest, ObjectAlreadyBeingDeletedIsLeftAlone) {
  json obj = dependent({"a"});
  obj["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z";
  EXPECT_EQ(decide(obj, {{"a", OwnerState::kGone}}).action, GcDecision::Action::kKeep);
}

}  // namespace
}  // namespace minik8s::controllers
