#include "apiserver/request_info.h"

#include <gtest/gtest.h>

namespace minik8s::apiserver {
namespace {

RequestInfo parse(const std::string& method, const std::string& target) {
  http::Request req;
  req.method = method;
  req.target = target;
  size_t q = target.find('?');
  req.path = target.substr(0, q);
  if (q != std::string::npos) req.query = http::parseQuery(target.substr(q + 1));
  return parseRequestInfo(req, api::Scheme::builtin());
}

TEST(RequestInfoTest, NamespacedItemWithSubresource) {
  auto ri = parse("PUT", "/api/v1/namespaces/default/pods/web/status");
  EXPECT_TRUE(ri.isResourceRequest);
  EXPECT_EQ(ri.verb, "update");
  EXPECT_EQ(ri.namespaceName, "default");
  EXPECT_EQ(ri.resource, "pods");
  EXPECT_EQ(ri.name, "web");
  EXPECT_EQ(ri.subresource, "status");
  ASSERT_NE(ri.info, nullptr);
  EXPECT_EQ(ri.info->kind, "Pod");
}

TEST(RequestInfoTest, ListWatchAndGroups) {
  auto all = parse("GET", "/apis/apps/v1/deployments?watch=True");
  EXPECT_EQ(all.verb, "watch");
  EXPECT_EQ(all.group, "apps");
  EXPECT_EQ(all.namespaceName, "");
  auto list = parse("GET", "/apis/apps/v1/namespaces/shop/deployments?limit=500");
  EXPECT_EQ(list.verb, "list");
  EXPECT_EQ(list.namespaceName, "shop");
  auto dc = parse("DELETE", "/api/v1/namespaces/shop/configmaps?labelSelector=a%3Db");
  EXPECT_EQ(dc.verb, "deletecollection");
}

TEST(RequestInfoTest, NamespacesAreClusterScopedWithTheirOwnSubresources) {
  auto ns = parse("GET", "/api/v1/namespaces/shop");
  EXPECT_EQ(ns.resource, "namespaces");
  EXPECT_EQ(ns.name, "shop");
  EXPECT_EQ(ns.namespaceName, "");
  auto fin = parse("PUT", "/api/v1/namespaces/shop/finalize");
  EXPECT_EQ(fin.resource, "namespaces");
  EXPECT_EQ(fin.name, "shop");
  EXPECT_EQ(fin.subresource, "finalize");
  auto node = parse("GET", "/api/v1/nodes/n1");
  EXPECT_EQ(node.info->kind, "Node");
  EXPECT_EQ(node.verb, "get");
}

TEST(RequestInfoTest, UnknownResourcesAndNonResourcePaths) {
  auto unknown = parse("GET", "/api/v1/namespaces/default/frobs");
  EXPECT_TRUE(unknown.isResourceRequest);
  EXPECT_EQ(unknown.info, nullptr);
  EXPECT_FALSE(parse("GET", "/api/v1").isResourceRequest);
  EXPECT_FALSE(parse("GET", "/version").isResourceRequest);
  EXPECT_FALSE(parse("GET", "/api/v1/namespaces/a/pods/b/log/extra").isResourceRequest);
}

}  // namespace
}  // namespace minik8s::apiserver
