// How claims and volumes match (controllers/volume/volume_binding.h, api/persistent_volumes.h):
// class, access modes, capacity, volumeMode, selector, pre-binding, the smallest fit, the
// default StorageClass, the claims a pod mounts.
#include <gtest/gtest.h>

#include "api/persistent_volumes.h"
#include "controllers/volume/volume_binding.h"

namespace minik8s::controllers {
namespace {

using api::capacityBytes;
using api::findMatchingVolume;
using api::requestedBytes;
using api::volumeBoundToClaim;
using api::volumeMismatch;

json volume(const std::string& name, const std::string& size, json modes = {"ReadWriteOnce"},
            const std::string& cls = "", const std::string& phase = "Available") {
  json v = {{"metadata", {{"name", name}, {"labels", {{"tier", "fast"}}}}},
            {"spec", {{"capacity", {{"storage", size}}}, {"accessModes", modes}}},
            {"status", {{"phase", phase}}}};
  if (!cls.empty()) v["spec"]["storageClassName"] = cls;
  return v;
}

json claim(const std::string& size, json modes = {"ReadWriteOnce"}, json cls = json()) {
  json c = {{"metadata", {{"name", "data"}, {"namespace", "default"}, {"uid", "u1"}}},
            {"spec", {{"accessModes", modes}, {"resources", {{"requests", {{"storage", size}}}}}}}};
  if (!cls.is_null()) c["spec"]["storageClassName"] = cls;
  return c;
}

std::string chosen(const json& c, const std::vector<json>& vs) {
  auto v = findMatchingVolume(c, vs);
  return v ? (*v)["metadata"]["name"].get<std::string>() : "<none>";
}

TEST(VolumeBindingTest, TheSmallestVolumeThatFitsWins) {
  std::vector<json> vs = {volume("big", "10Gi"), volume("small", "1Gi"), volume("tiny", "100Mi"),
                          volume("mid", "2Gi")};
  EXPECT_EQ(chosen(claim("500Mi"), vs), "small");
  EXPECT_EQ(chosen(claim("1Gi"), vs), "small");
  EXPECT_EQ(chosen(claim("1025Mi"), vs), "mid");
  EXPECT_EQ(chosen(claim("20Gi"), vs), "<none>");
}

TEST(VolumeBindingTest, ClassModesVolumeModeAndSelectorMustFit) {
  std::vector<json> vs = {volume("rwo", "1Gi"),
                          volume("rwx", "5Gi", {"ReadWriteMany", "ReadWriteOnce"}),
                          volume("gold", "1Gi", {"ReadWriteOnce"}, "gold")};
  EXPECT_EQ(chosen(claim("1Gi", {"ReadWriteMany"}), vs), "rwx");
  EXPECT_EQ(chosen(claim("1Gi", {"ReadWriteOnce"}, "gold"), vs), "gold");
  EXPECT_EQ(chosen(claim("1Gi", {"ReadWriteOnce"}, "silver"), vs), "<none>");
  EXPECT_EQ(chosen(claim("1Gi", {"ReadOnlyMany"}), vs), "<none>");
  json block = claim("1Gi");
  block["spec"]["volumeMode"] = "Block";
  EXPECT_EQ(chosen(block, vs), "<none>");
  json selective = claim("1Gi");
  selective["spec"]["selector"] = {{"matchLabels", {{"tier", "slow"}}}};
  EXPECT_EQ(chosen(selective, vs), "<none>");
  selective["spec"]["selector"] = {{"matchLabels", {{"tier", "fast"}}}};
  EXPECT_EQ(chosen(selective, vs), "rwo");
  EXPECT_EQ(volumeMismatch(vs[0], claim("2Gi")), "requested PV is too small");
  EXPECT_EQ(volumeMismatch(vs[0], claim("1Gi", {"ReadWriteMany"})), "incompatible accessMode");
  EXPECT_EQ(volumeMismatch(vs[2], claim("1Gi")), "storageClassName does not match");
}

TEST(VolumeBindingTest, OnlyAvailableUnclaimedVolumesUnlessPreBound) {
  json released = volume("released", "1Gi", {"ReadWriteOnce"}, "", "Released");
  json taken = volume("taken", "1Gi");
  taken["spec"]["claimRef"] = {{"namespace", "default"}, {"name", "other"}, {"uid", "u9"}};
  json deleting = volume("deleting", "1Gi");
  deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
  EXPECT_EQ(chosen(claim("1Gi"), {released, taken, deleting}), "<none>");
  // Created together with its claim, before the controller marked it Available.
  EXPECT_EQ(
      chosen(claim("1Gi"), {released, volume("new", "1Gi", {"ReadWriteOnce"}, "", "Pending")}),
      "new");
  // Pre-bound (claimRef without uid, as an administrator writes it) beats a smaller free one,
  // and skips the phase and selector checks.
  json reserved = volume("reserved", "5Gi", {"ReadWriteOnce"}, "", "Pending");
  reserved["spec"]["claimRef"] = {{"namespace", "default"}, {"name", "data"}};
  json c = claim("1Gi");
  c["spec"]["selector"] = {{"matchLabels", {{"tier", "slow"}}}};
  EXPECT_EQ(chosen(c, {volume("free", "1Gi"), reserved}), "reserved");
  EXPECT_TRUE(volumeBoundToClaim(reserved, c));
  reserved["spec"]["claimRef"]["uid"] = "another-incarnation";
  EXPECT_FALSE(volumeBoundToClaim(reserved, c));
}

TEST(VolumeBindingTest, ClassesOfClaimsAndVolumes) {
  json c = claim("1Gi");
  EXPECT_TRUE(api::claimClassUnset(c));
  EXPECT_EQ(api::claimClassOf(c), "");
  c["spec"]["storageClassName"] = "";
  EXPECT_FALSE(api::claimClassUnset(c));  // "" asks for volumes without a class
  c["metadata"]["annotations"][api::kAnnBetaStorageClass] = "old";
  EXPECT_EQ(api::claimClassOf(c), "old");
  json v = volume("v", "1Gi");
  v["metadata"]["annotations"][api::kAnnBetaStorageClass] = "old";
  EXPECT_EQ(api::volumeClassOf(v), "old");
  EXPECT_EQ(requestedBytes(claim("1Ki")), 1024);
  EXPECT_EQ(capacityBytes(volume("v", "1G")), 1000000000);
  EXPECT_FALSE(requestedBytes(claim("lots")).has_value());
}

TEST(VolumeBindingTest, TheDefaultStorageClassIsTheNewestMarkedOne) {
  auto sc = [](const std::string& name, const std::string& created, bool isDefault) {
    json c = {{"metadata", {{"name", name}, {"creationTimestamp", created}}}};
    if (isDefault) c["metadata"]["annotations"][api::kAnnDefaultStorageClass] = "true";
    return c;
  };
  EXPECT_FALSE(api::defaultStorageClass({sc("a", "2026-01-01T00:00:00Z", false)}));
  auto d = api::defaultStorageClass({sc("a", "2026-01-01T00:00:00Z", true),
                                     sc("b", "2026-02-01T00:00:00Z", true),
                                     sc("c", "2026-03-01T00:00:00Z", false)});
  ASSERT_TRUE(d);
  EXPECT_EQ((*d)["metadata"]["name"], "b");
}

TEST(VolumeBindingTest, ClaimsAPodMounts) {
  json pod = {
      {"metadata", {{"name", "web-0"}}},
      {"spec",
       {{"volumes",
         {{{"name", "data"}, {"persistentVolumeClaim", {{"claimName", "data-web-0"}}}},
          {{"name", "tmp"}, {"emptyDir", json::object()}},
          {{"name", "scratch"}, {"ephemeral", {{"volumeClaimTemplate", json::object()}}}}}}}}};
  EXPECT_EQ(api::podClaimNames(pod), (std::vector<std::string>{"data-web-0", "web-0-scratch"}));
}

}  // namespace
}  // namespace minik8s::controllers
