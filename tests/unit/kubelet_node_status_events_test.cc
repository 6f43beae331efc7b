// The kubelet's node Events: registering tells each condition (NodeHasSufficientMemory, ...,
// NodeReady), later status writes tell only what the API shows changing (NodeNotReady,
// NodeReady, and everything again after the node controller set Unknown), against a real
// in-process API server.
#include <gtest/gtest.h>

#include "client/event_recorder.h"
#include "in_process_api_server.h"
#include "kubelet/node_status.h"

namespace minik8s::kubelet {
namespace {

namespace res = client::resources;

class NodeStatusEventsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(apiServer.start().ok());
    rest = std::make_unique<client::RestClient>(apiServer.url());
  }
  void TearDown() override { apiServer.stop(); }

  std::unique_ptr<NodeStatus> nodeStatus() {
    NodeStatusOptions o;
    o.nodeName = "n1";
    o.hostIP = "10.0.0.1";
    o.events = &events;
    MachineInfo m;
    m.cpuCores = 2;
    m.memoryBytes = 1 << 30;
    return std::make_unique<NodeStatus>(*rest, o, m);
  }
  // "reason: message" of every record since the last call.
  std::vector<std::string> take() {
    std::vector<std::string> out;
    for (const auto& e : events.events()) {
      EXPECT_EQ(e.type, "Normal");
      EXPECT_EQ(e.involvedObject["kind"], "Node");
      EXPECT_EQ(e.involvedObject["name"], "n1");
      EXPECT_EQ(e.involvedObject["uid"], "n1");
      out.push_back(e.reason + ": " + e.message);
    }
    events.clear();
    return out;
  }
  // What the node lifecycle controller does to a silent node.
  void setAllUnknown() {
    json node = *rest->get(res::kNodes, "", "n1");
    for (auto& c : node["status"]["conditions"]) c["status"] = "Unknown";
    ASSERT_TRUE(rest->update(res::kNodes, node, "status").ok());
  }

  testing::InProcessApiServer apiServer;
  std::unique_ptr<client::RestClient> rest;
  client::FakeEventRecorder events;
};

const std::vector<std::string> kAllHealthy = {
    "NodeHasSufficientMemory: Node n1 status is now: NodeHasSufficientMemory",
    "NodeHasNoDiskPressure: Node n1 status is now: NodeHasNoDiskPressure",
    "NodeHasSufficientPID: Node n1 status is now: NodeHasSufficientPID",
    "NodeReady: Node n1 status is now: NodeReady"};

TEST_F(NodeStatusEventsTest, RegistrationAndReadinessChanges) {
  auto status = nodeStatus();
  status->recordNodeEvent("Starting", "Starting kubelet.");
  ASSERT_TRUE(status->registerNode().ok());
  std::vector<std::string> want = {"Starting: Starting kubelet."};
  want.insert(want.end(), kAllHealthy.begin(), kAllHealthy.end());
  EXPECT_EQ(take(), want);

  // A heartbeat changes nothing.
  ASSERT_TRUE(status->updateStatus(true).ok());
  EXPECT_TRUE(take().empty());

  ASSERT_TRUE(status->updateStatus(false, "container runtime is down").ok());
  EXPECT_EQ(take(), std::vector<std::string>{"NodeNotReady: Node n1 status is now: NodeNotReady"});
  ASSERT_TRUE(status->updateStatus(false, "container runtime is down").ok());
  EXPECT_TRUE(take().empty());
  ASSERT_TRUE(status->updateStatus(true).ok());
  EXPECT_EQ(take(), std::vector<std::string>{"NodeReady: Node n1 status is now: NodeReady"});

  // Back after the node controller marked everything Unknown: every condition is news.
  setAllUnknown();
  ASSERT_TRUE(status->updateStatus(true).ok());
  EXPECT_EQ(take(), kAllHealthy);
}

TEST_F(NodeStatusEventsTest, ReRegistrationTellsOnlyWhatChanged) {
  ASSERT_TRUE(nodeStatus()->registerNode().ok());
  take();
  // A restarted kubelet finds its node as it left it: nothing to tell.
  ASSERT_TRUE(nodeStatus()->registerNode().ok());
  EXPECT_TRUE(take().empty());
  // After a long outage the node controller had set Unknown.
  setAllUnknown();
  ASSERT_TRUE(nodeStatus()->registerNode().ok());
  EXPECT_EQ(take(), kAllHealthy);
}

TEST_F(NodeStatusEventsTest, NoRecorderNoEvents) {
  NodeStatusOptions o;
  o.nodeName = "n1";
  NodeStatus status(*rest, o, MachineInfo{});
  ASSERT_TRUE(status.registerNode().ok());
  status.recordNodeEvent("Starting", "Starting kubelet.");
  ASSERT_TRUE(status.updateStatus(false, "down").ok());
  EXPECT_TRUE(events.events().empty());
}

}  // namespace
}  // namespace minik8s::kubelet
