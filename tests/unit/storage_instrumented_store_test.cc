#include <gtest/gtest.h>

#include "fake_store.h"
#include "storage/instrumented_store.h"

namespace minik8s::storage {
namespace {

TEST(InstrumentedStore, ResourceOfAKey) {
  char buf[64];
  EXPECT_EQ(storageResourceOf("/registry/core/pods/default/web", buf, sizeof buf), "pods");
  EXPECT_EQ(storageResourceOf("/registry/core/namespaces/", buf, sizeof buf), "namespaces");
  EXPECT_EQ(storageResourceOf("/registry/apps/deployments/default/web", buf, sizeof buf),
            "deployments.apps");
  EXPECT_EQ(storageResourceOf("/registry/apps/deployments/", buf, sizeof buf), "deployments.apps");
  EXPECT_EQ(storageResourceOf("/registry/", buf, sizeof buf), "");
  EXPECT_EQ(storageResourceOf("/other/x/y", buf, sizeof buf), "");
  EXPECT_EQ(storageResourceOf("", buf, sizeof buf), "");
}

TEST(InstrumentedStore, TimesEachRequestByOperationAndResource) {
  metrics::Registry registry;
  InstrumentedStore store(std::make_unique<testing::FakeStore>(), registry);
  ASSERT_TRUE(store.create("/registry/core/pods/default/a", "{}").ok());
  auto rev = store.create("/registry/apps/deployments/default/d", "{}");
  ASSERT_TRUE(rev.ok());
  ASSERT_TRUE(store.update("/registry/apps/deployments/default/d", "{\"x\":1}", *rev).ok());
  EXPECT_TRUE(store.get("/registry/core/pods/default/a").ok());
  EXPECT_EQ(store.get("/registry/core/pods/default/missing").status().code(), 404);
  EXPECT_EQ(store.list("/registry/core/pods/")->items.size(), 1u);
  ASSERT_TRUE(store.remove("/registry/core/pods/default/a", 0).ok());

  std::string text = registry.exposition();
  for (
      const char* sample : {
          "etcd_request_duration_seconds_count{operation=\"create\",type=\"pods\"} 1\n",
          "etcd_request_duration_seconds_count{operation=\"create\",type=\"deployments.apps\"} 1\n",
          "etcd_request_duration_seconds_count{operation=\"update\",type=\"deployments.apps\"} 1\n",
          "etcd_request_duration_seconds_count{operation=\"get\",type=\"pods\"} 2\n",
          "etcd_request_duration_seconds_count{operation=\"list\",type=\"pods\"} 1\n",
          "etcd_request_duration_seconds_count{operation=\"delete\",type=\"pods\"} 1\n",
      }) {
    EXPECT_NE(text.find(sample), std::string::npos) << sample << text;
  }
}

}  // namespace
}  // namespace minik8s::storage
