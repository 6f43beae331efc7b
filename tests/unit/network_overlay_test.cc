// The overlay's exact iproute2/iptables calls (through a fake Runner), the peers it derives from
// Node objects, and the CIDR arithmetic under node IPAM.
#include <gtest/gtest.h>

#include <map>

#include "common/cidr.h"
#include "controllers/nodeipam/node_ipam_controller.h"
#include "network/overlay.h"

namespace minik8s::network {
namespace {

// Records every command; answers from a table (command line -> output), exit 0 by default.
struct FakeRunner {
  std::vector<std::string> calls;
  std::map<std::string, CommandResult> answers;

  Runner runner() {
    return [this](const std::vector<std::string>& argv) -> Result<CommandResult> {
      const std::string line = commandLine(argv);
      calls.push_back(line);
      if (auto it = answers.find(line); it != answers.end()) return it->second;
      return CommandResult{0, ""};
    };
  }
  bool called(const std::string& line) const {
    return std::find(calls.begin(), calls.end(), line) != calls.end();
  }
};

json node(const std::string& name, const std::string& cidr, const std::string& ip) {
  json n = {{"metadata", {{"name", name}}},
            {"spec", json::object()},
            {"status", {{"addresses", json::array({{{"type", "InternalIP"}, {"address", ip}}})}}}};
  if (!cidr.empty()) n["spec"]["podCIDR"] = cidr;
  return n;
}

TEST(CidrTest, ParsesFormatsAndSplits) {
  auto c = parseCidr("10.244.0.0/16");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->toString(), "10.244.0.0/16");
  EXPECT_FALSE(parseCidr("10.244.0.1/16"));  // host bits set
  EXPECT_FALSE(parseCidr("10.244.0.0/33"));
  EXPECT_FALSE(parseCidr("10.244.0.0"));
  EXPECT_FALSE(parseCidr("nonsense/8"));
  EXPECT_EQ(subnetCount(*c, 24), 256u);
  EXPECT_EQ(nthSubnet(*c, 24, 3)->toString(), "10.244.3.0/24");
  EXPECT_FALSE(nthSubnet(*c, 24, 256));
  EXPECT_TRUE(c->overlaps(*parseCidr("10.244.7.0/24")));
  EXPECT_FALSE(c->overlaps(*parseCidr("10.245.0.0/24")));
  EXPECT_EQ(vtepMacFor(*parseCidr("10.244.1.0/24")), "0e:6b:0a:f4:01:00");
}

TEST(NodeIpamTest, FirstFreeBlockSkipsUsedAndOverlapping) {
  auto range = *parseCidr("10.244.0.0/16");
  EXPECT_EQ(controllers::firstFreeBlock(range, 24, {})->toString(), "10.244.0.0/24");
  EXPECT_EQ(controllers::firstFreeBlock(range, 24,
                                        {*parseCidr("10.244.0.0/24"), *parseCidr("10.244.2.0/24")})
                ->toString(),
            "10.244.1.0/24");
  // A node configured with a bigger block blocks all /24s inside it.
  EXPECT_EQ(controllers::firstFreeBlock(range, 24, {*parseCidr("10.244.0.0/23")})->toString(),
            "10.244.2.0/24");
  auto tiny = *parseCidr("10.244.0.0/23");
  EXPECT_FALSE(controllers::firstFreeBlock(
      tiny, 24, {*parseCidr("10.244.0.0/24"), *parseCidr("10.244.1.0/24")}));
}

TEST(OverlayTest, PeersFromNodesSkipsSelfIncompleteAndDeleting) {
  json deleting = node("d", "10.244.9.0/24", "172.29.0.9");
  deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
  auto peers = peersFromNodes(
      {node("me", "10.244.0.0/24", "172.29.0.2"), node("b", "10.244.1.0/24", "172.29.0.3"),
       node("a", "10.244.2.0/24", "172.29.0.4"), node("nocidr", "", "172.29.0.5"),
       node("noip", "10.244.3.0/24", ""), deleting},
      "me");
  ASSERT_EQ(peers.size(), 2u);
  EXPECT_EQ(peers[0].name, "a");  // sorted by name
  EXPECT_EQ(peers[0].podCidr.toString(), "10.244.2.0/24");
  EXPECT_EQ(peers[1].underlayIp, "172.29.0.3");
}

TEST(OverlayTest, VxlanSetUpCreatesDeviceAndMasqueradeException) {
  FakeRunner fake;
  fake.answers["ip -j -d link show vxlan0"] = {1, "Device \"vxlan0\" does not exist."};
  fake.answers
      ["iptables -w -t nat -C POSTROUTING -s 10.244.0.0/16 -d 10.244.0.0/16 -m comment --comment "
       "minik8s: pod to pod traffic keeps its source address -j RETURN"] = {1, ""};
  OverlayOptions o;
  o.underlayIp = "172.29.0.2";
  Overlay overlay(o, fake.runner());
  ASSERT_TRUE(overlay.setUp(*parseCidr("10.244.0.0/24")).ok());
  EXPECT_TRUE(
      fake.called("ip link add vxlan0 type vxlan id 1 local 172.29.0.2 dstport 8472 nolearning"));
  EXPECT_TRUE(fake.called("ip link set vxlan0 address 0e:6b:0a:f4:00:00 mtu 1450 up"));
  EXPECT_TRUE(fake.called("ip addr replace 10.244.0.0/32 dev vxlan0"));
  EXPECT_TRUE(fake.called(
      "iptables -w -t nat -I POSTROUTING 1 -s 10.244.0.0/16 -d 10.244.0.0/16 -m comment "
      "--comment minik8s: pod to pod traffic keeps its source address -j RETURN"));
}

// The node's pods leave through one masquerade chain (the CNI bridge runs without ipMasq),
// on every backend; set up twice it stays one jump, and tearDown removes it.
TEST(OverlayTest, SetUpMasqueradesThePodsLeavingTheNodeWithOneChain) {
  const std::string jump =
      "POSTROUTING -s 10.244.3.0/24 -m physdev ! --physdev-is-bridged -m comment --comment "
      "minik8s: pods leaving the node take its address -j MINIK8S-POD-MASQ";
  FakeRunner fake;
  fake.answers["iptables -w -t nat -C " + jump] = {1, ""};
  OverlayOptions o;
  o.backend = OverlayBackend::kNone;
  Overlay overlay(o, fake.runner());
  ASSERT_TRUE(overlay.setUp(*parseCidr("10.244.3.0/24")).ok());
  const std::vector<std::string> expected = {
      "iptables -w -t nat -N MINIK8S-POD-MASQ",
      "iptables -w -t nat -F MINIK8S-POD-MASQ",
      "iptables -w -t nat -A MINIK8S-POD-MASQ -d 10.244.3.0/24 -j RETURN",
      "iptables -w -t nat -A MINIK8S-POD-MASQ ! -d 224.0.0.0/4 -j MASQUERADE",
      "iptables -w -t nat -C " + jump,
      "iptables -w -t nat -A " + jump,
  };
  EXPECT_EQ(fake.calls, expected);  // kNone: nothing else (no device, no exception)

  // Again (an agent restart): the chain exists and the jump is there: no second jump.
  fake.calls.clear();
  fake.answers["iptables -w -t nat -N MINIK8S-POD-MASQ"] = {1, "Chain already exists."};
  fake.answers["iptables -w -t nat -C " + jump] = {0, ""};
  ASSERT_TRUE(overlay.setUp(*parseCidr("10.244.3.0/24")).ok());
  EXPECT_FALSE(fake.called("iptables -w -t nat -A " + jump));
  EXPECT_TRUE(fake.called("iptables -w -t nat -F MINIK8S-POD-MASQ"));

  fake.calls.clear();
  ASSERT_TRUE(overlay.tearDown().ok());
  EXPECT_TRUE(fake.called("iptables -w -t nat -D " + jump));
  EXPECT_TRUE(fake.called("iptables -w -t nat -X MINIK8S-POD-MASQ"));

  // A chain that cannot be filled is an error, not a node without masquerade.
  FakeRunner failing;
  failing.answers["iptables -w -t nat -A MINIK8S-POD-MASQ ! -d 224.0.0.0/4 -j MASQUERADE"] = {
      2, "iptables: No chain/target/match by that name."};
  Overlay broken(o, failing.runner());
  EXPECT_FALSE(broken.setUp(*parseCidr("10.244.3.0/24")).ok());
}

TEST(OverlayTest, VxlanSetUpKeepsAMatchingDevice) {
  FakeRunner fake;
  fake.answers["ip -j -d link show vxlan0"] = {
      0, R"([{"ifname":"vxlan0","address":"0e:6b:0a:f4:00:00","linkinfo":{"info_kind":"vxlan",
             "info_data":{"id":1,"local":"172.29.0.2","port":8472}}}])"};
  OverlayOptions o;
  o.underlayIp = "172.29.0.2";
  Overlay overlay(o, fake.runner());
  ASSERT_TRUE(overlay.setUp(*parseCidr("10.244.0.0/24")).ok());
  EXPECT_FALSE(fake.called("ip link del vxlan0"));
  for (const auto& c : fake.calls) EXPECT_EQ(c.rfind("ip link add", 0), std::string::npos) << c;
}

TEST(OverlayTest, VxlanSetUpRecreatesADeviceWithAnotherIdentity) {
  FakeRunner fake;
  fake.answers["ip -j -d link show vxlan0"] = {
      0, R"([{"address":"0e:6b:0a:f4:05:00","linkinfo":{"info_data":{"id":1,
             "local":"172.29.0.2","port":8472}}}])"};
  OverlayOptions o;
  o.underlayIp = "172.29.0.2";
  Overlay overlay(o, fake.runner());
  ASSERT_TRUE(overlay.setUp(*parseCidr("10.244.0.0/24")).ok());
  EXPECT_TRUE(fake.called("ip link del vxlan0"));
  EXPECT_TRUE(
      fake.called("ip link add vxlan0 type vxlan id 1 local 172.29.0.2 dstport 8472 nolearning"));
}

TEST(OverlayTest, VxlanSyncAddsPeersAndRemovesStaleEntries) {
  FakeRunner fake;
  // Left from a node that is gone: a route, a neighbour and an FDB entry.
  fake.answers["ip -j route show proto 107"] = {
      0, R"([{"dst":"10.244.1.0/24"},{"dst":"10.244.7.0/24"}])"};
  fake.answers["ip -j neigh show dev vxlan0"] = {0,
                                                 R"([{"dst":"10.244.1.0"},{"dst":"10.244.7.0"}])"};
  fake.answers["bridge -j fdb show dev vxlan0"] = {
      0, R"([{"mac":"0e:6b:0a:f4:01:00","dst":"172.29.0.3"},
             {"mac":"0e:6b:0a:f4:07:00","dst":"172.29.0.9"},{"mac":"00:00:00:00:00:00"}])"};
  OverlayOptions o;
  o.underlayIp = "172.29.0.2";
  Overlay overlay(o, fake.runner());
  ASSERT_TRUE(overlay.sync({{"b", *parseCidr("10.244.1.0/24"), "172.29.0.3"}}).ok());
  EXPECT_TRUE(
      fake.called("ip neigh replace 10.244.1.0 lladdr 0e:6b:0a:f4:01:00 dev vxlan0 nud "
                  "permanent"));
  EXPECT_TRUE(
      fake.called("bridge fdb replace 0e:6b:0a:f4:01:00 dev vxlan0 dst 172.29.0.3 self permanent"));
  EXPECT_TRUE(
      fake.called("ip route replace 10.244.1.0/24 via 10.244.1.0 dev vxlan0 onlink proto 107"));
  EXPECT_TRUE(fake.called("ip route del 10.244.7.0/24 proto 107"));
  EXPECT_FALSE(fake.called("ip route del 10.244.1.0/24 proto 107"));
  EXPECT_TRUE(fake.called("ip neigh del 10.244.7.0 dev vxlan0"));
  EXPECT_TRUE(fake.called("bridge fdb del 0e:6b:0a:f4:07:00 dev vxlan0 dst 172.29.0.9 self"));
  EXPECT_FALSE(fake.called("bridge fdb del 0e:6b:0a:f4:01:00 dev vxlan0 dst 172.29.0.3 self"));
}

TEST(OverlayTest, HostGwRoutesViaThePeerAddress) {
  FakeRunner fake;
  fake.answers["ip -j route show proto 107"] = {0, R"([{"dst":"10.244.4.0/24"}])"};
  OverlayOptions o;
  o.backend = OverlayBackend::kHostGw;
  o.underlayIp = "172.29.0.2";
  Overlay overlay(o, fake.runner());
  ASSERT_TRUE(overlay.setUp(*parseCidr("10.244.0.0/24")).ok());
  ASSERT_TRUE(overlay.sync({{"b", *parseCidr("10.244.1.0/24"), "172.29.0.3"}}).ok());
  EXPECT_TRUE(fake.called("ip route replace 10.244.1.0/24 via 172.29.0.3 proto 107"));
  EXPECT_TRUE(fake.called("ip route del 10.244.4.0/24 proto 107"));
  for (const auto& c : fake.calls) EXPECT_EQ(c.find("vxlan"), std::string::npos) << c;
}

TEST(OverlayTest, FailedCommandIsReportedAndBackendsParse) {
  FakeRunner fake;
  fake.answers["ip route replace 10.244.1.0/24 via 172.29.0.3 proto 107"] = {2, "RTNETLINK: boom"};
  OverlayOptions o;
  o.backend = OverlayBackend::kHostGw;
  Overlay overlay(o, fake.runner());
  Status s = overlay.sync({{"b", *parseCidr("10.244.1.0/24"), "172.29.0.3"}});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("RTNETLINK: boom"), std::string::npos);
  EXPECT_TRUE(parseOverlayBackend("vxlan").ok());
  EXPECT_TRUE(parseOverlayBackend("host-gw").ok());
  EXPECT_TRUE(parseOverlayBackend("none").ok());
  EXPECT_FALSE(parseOverlayBackend("udp").ok());
}

}  // namespace
}  // namespace minik8s::network
