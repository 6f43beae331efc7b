// findPointer/valueAt: the same answers as nlohmann's JSON pointer lookups, without their throw.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "common/json_pointer.h"

namespace minik8s {
namespace {

const json kPod = json::parse(R"({
  "metadata": {"name": "web", "labels": {"app/tier": "a", "x~y": "b"}, "ownerReferences": []},
  "spec": {"containers": [{"name": "c0", "ports": [{"containerPort": 80}]}, {"name": "c1"}],
           "replicas": 3, "": "empty key"}
})");

TEST(JsonPointer, FindsMembersIndexesAndEscapes) {
  EXPECT_EQ(findPointer(kPod, ""), &kPod);
  EXPECT_EQ(*findPointer(kPod, "/metadata/name"), "web");
  EXPECT_EQ(*findPointer(kPod, "/spec/containers/1/name"), "c1");
  EXPECT_EQ(*findPointer(kPod, "/spec/containers/0/ports/0/containerPort"), 80);
  EXPECT_EQ(*findPointer(kPod, "/metadata/labels/app~1tier"), "a");
  EXPECT_EQ(*findPointer(kPod, "/metadata/labels/x~0y"), "b");
  EXPECT_EQ(*findPointer(kPod, "/spec/"), "empty key");
}

TEST(JsonPointer, AbsentMalformedOrThroughAScalarIsNull) {
  for (const char* p :
       {"/status", "/status/phase", "/metadata/name/x", "/spec/containers/2", "/spec/containers/01",
        "/spec/containers/-", "/spec/containers/x", "/spec/containers/-1", "/metadata/labels/x~2y",
        "/metadata/labels/x~", "metadata", "/spec/replicas/0"}) {
    EXPECT_EQ(findPointer(kPod, p), nullptr) << p;
  }
}

TEST(JsonPointer, ValueAtIsValueWithoutTheThrow) {
  EXPECT_EQ(valueAt(kPod, "/metadata/name", ""), "web");
  EXPECT_EQ(valueAt(kPod, "/metadata/namespace", "default"), "default");
  EXPECT_EQ(valueAt(kPod, "/spec/replicas", 1), 3);
  EXPECT_EQ(valueAt(kPod, "/spec/paused", false), false);
  EXPECT_EQ(valueAt(kPod, "/metadata/ownerReferences", json::array()), json::array());
  EXPECT_EQ(valueAt(kPod, "/status/conditions", json()), json());
  EXPECT_THROW(valueAt(kPod, "/metadata/name", 0), json::type_error);  // as value() does
}

// Random pointers over random documents: found exactly where nlohmann's contains() says, and the
// same value as its at().
TEST(JsonPointer, AgreesWithNlohmann) {
  std::mt19937 rng(27112026);
  const std::vector<std::string> tokens = {
      "metadata", "name", "labels", "app~1tier",     "x~0y", "spec",     "containers", "0",
      "1",        "2",    "ports",  "containerPort", "",     "replicas", "00",         "-"};
  for (int i = 0; i < 5000; ++i) {
    std::string p;
    for (int n = static_cast<int>(rng() % 6); n > 0; --n) p += "/" + tokens[rng() % tokens.size()];
    SCOPED_TRACE(p);
    const json* found = findPointer(kPod, p);
    bool theirs = false;
    try {
      theirs = kPod.contains(json::json_pointer(p));
    } catch (const json::exception&) {
      theirs = false;  // "00" or "-" as an index: an error to nlohmann, absent to us
    }
    ASSERT_EQ(found != nullptr, theirs);
    if (found) {
      EXPECT_EQ(*found, kPod.at(json::json_pointer(p)));
    }
  }
}

}  // namespace
}  // namespace minik8s
