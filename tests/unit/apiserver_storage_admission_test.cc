// The storage admission plugins (apiserver/admission/storage_admission.h): DefaultStorageClass
// and StorageObjectInUseProtection, on a registry over a fake store.
#include <gtest/gtest.h>

#include "api/persistent_volumes.h"
#include "apiserver/admission/storage_admission.h"
#include "fake_store.h"

namespace minik8s::apiserver::admission {
namespace {

class StorageAdmissionTest : public ::testing::Test {
 protected:
  void addClass(const std::string& name, bool isDefault) {
    json sc = {{"apiVersion", "storage.k8s.io/v1"},
               {"kind", "StorageClass"},
               {"metadata", {{"name", name}}},
               {"provisioner", "example.com/" + name}};
    if (isDefault) sc["metadata"]["annotations"][api::kAnnDefaultStorageClass] = "true";
    auto r = registry.create(
        *api::Scheme::builtin().byResource("storage.k8s.io", "v1", "storageclasses"), "", sc);
    ASSERT_TRUE(r.ok()) << r.status().toString();
  }
  Status admit(auth::AdmissionPlugin& plugin, json& obj, const std::string& resource,
               const std::string& operation = "CREATE") {
    RequestInfo ri;
    ri.isResourceRequest = true;
    ri.verb = "create";
    ri.version = "v1";
    ri.namespaceName = resource == "persistentvolumes" ? "" : "default";
    ri.resource = resource;
    auth::UserInfo user{"alice", "", {}, {}};
    auth::AdmissionRequest req{user, ri, operation, nullptr, &obj, false};
    return plugin.admit(req);
  }
  static json claim(json spec = json::object()) {
    spec["accessModes"] = {"ReadWriteOnce"};
    spec["resources"] = {{"requests", {{"storage", "1Gi"}}}};
    return {{"apiVersion", "v1"},
            {"kind", "PersistentVolumeClaim"},
            {"metadata", {{"name", "data"}, {"namespace", "default"}}},
            {"spec", spec}};
  }

  testing::FakeStore store;
  Registry registry{store, api::Scheme::builtin()};
  DefaultStorageClass defaultClass{registry};
  StorageObjectInUseProtection protection;
};

TEST_F(StorageAdmissionTest, ClaimsWithoutAClassGetTheDefaultOne) {
  json c = claim();
  ASSERT_TRUE(admit(defaultClass, c, "persistentvolumeclaims").ok());
  EXPECT_FALSE(c["spec"].contains("storageClassName"));  // no default: left unset
  addClass("slow", false);
  addClass("fast", true);
  c = claim();
  ASSERT_TRUE(admit(defaultClass, c, "persistentvolumeclaims").ok());
  EXPECT_EQ(c["spec"]["storageClassName"], "fast");
  json explicitEmpty = claim({{"storageClassName", ""}});  // "" means no class: kept
  ASSERT_TRUE(admit(defaultClass, explicitEmpty, "persistentvolumeclaims").ok());
  EXPECT_EQ(explicitEmpty["spec"]["storageClassName"], "");
  json named = claim({{"storageClassName", "slow"}});
  ASSERT_TRUE(admit(defaultClass, named, "persistentvolumeclaims").ok());
  EXPECT_EQ(named["spec"]["storageClassName"], "slow");
  json update = claim();
  ASSERT_TRUE(admit(defaultClass, update, "persistentvolumeclaims", "UPDATE").ok());
  EXPECT_FALSE(update["spec"].contains("storageClassName"));
}

TEST_F(StorageAdmissionTest, ProtectionFinalizersOnCreate) {
  json c = claim();
  ASSERT_TRUE(admit(protection, c, "persistentvolumeclaims").ok());
  EXPECT_EQ(c["metadata"]["finalizers"], json({api::kPvcProtectionFinalizer}));
  ASSERT_TRUE(admit(protection, c, "persistentvolumeclaims").ok());  // not twice
  EXPECT_EQ(c["metadata"]["finalizers"].size(), 1u);
  json pv = {{"metadata", {{"name", "pv"}, {"finalizers", {"example.com/keep"}}}}};
  ASSERT_TRUE(admit(protection, pv, "persistentvolumes").ok());
  EXPECT_EQ(pv["metadata"]["finalizers"], json({"example.com/keep", api::kPvProtectionFinalizer}));
  json pod = {{"metadata", {{"name", "p"}}}};
  ASSERT_TRUE(admit(protection, pod, "pods").ok());
  EXPECT_FALSE(pod["metadata"].contains("finalizers"));
}

}  // namespace
}  // namespace minik8s::apiserver::admission
