// Node IPAM against a real in-process API server: distinct /24s for nodes joining at once, a
// configured podCIDR kept, a deleted node's block handed out again.
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "client/informer.h"
#include "controllers/nodeipam/node_ipam_controller.h"
#include "eventually.h"
#include "in_process_api_server.h"

namespace minik8s::controllers {
namespace {

namespace res = client::resources;

json nodeObj(const std::string& name, const std::string& cidr = "") {
  json n = {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", name}}}};
  if (!cidr.empty()) n["spec"] = {{"podCIDR", cidr}, {"podCIDRs", json::array({cidr})}};
  return n;
}

std::string cidrOf(client::RestClient& rest, const std::string& name) {
  auto n = rest.get(res::kNodes, "", name);
  return n.ok() ? n->value("spec", json::object()).value("podCIDR", "") : "";
}

using testing::eventually;

TEST(NodeIpamControllerTest, AllocatesDistinctBlocksKeepsConfiguredAndReuses) {
  testing::InProcessApiServer server;
  ASSERT_TRUE(server.start().ok());
  client::RestClient rest(server.url());
  ASSERT_TRUE(rest.create(res::kNodes, "", nodeObj("fixed", "10.244.0.0/24")).ok());
  client::Informer nodes(rest, res::kNodes);
  NodeIpamController ipam(rest, nodes, {"10.244.0.0/16", 24});
  nodes.start();
  ASSERT_TRUE(nodes.waitForSync(std::chrono::seconds(5)));
  ipam.start();
  for (const char* n : {"a", "b", "c", "d"})
    ASSERT_TRUE(rest.create(res::kNodes, "", nodeObj(n)).ok());
  ASSERT_TRUE(eventually([&] {
    for (const char* n : {"a", "b", "c", "d"})
      if (cidrOf(rest, n).empty()) return false;
    return true;
  }));
  std::set<std::string> seen = {cidrOf(rest, "fixed")};
  EXPECT_EQ(cidrOf(rest, "fixed"), "10.244.0.0/24");
  for (const char* n : {"a", "b", "c", "d"}) EXPECT_TRUE(seen.insert(cidrOf(rest, n)).second) << n;
  EXPECT_EQ(seen.count("10.244.1.0/24") + seen.count("10.244.2.0/24") +
                seen.count("10.244.3.0/24") + seen.count("10.244.4.0/24"),
            4u);
  // A deleted node's block is free again.
  const std::string freed = cidrOf(rest, "b");
  ASSERT_TRUE(rest.remove(res::kNodes, "", "b").ok());
  ASSERT_TRUE(eventually([&] { return !nodes.get("b").has_value(); }));
  ASSERT_TRUE(rest.create(res::kNodes, "", nodeObj("e")).ok());
  ASSERT_TRUE(eventually([&] { return !cidrOf(rest, "e").empty(); }));
  EXPECT_EQ(cidrOf(rest, "e"), freed);
  ipam.stop();
  nodes.stop();
}

}  // namespace
}  // namespace minik8s::controllers
