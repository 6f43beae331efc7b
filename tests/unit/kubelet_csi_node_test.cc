// CSINode registration against a real in-process API server and the node-local CSI driver on a
// unix socket: the node's CSINode lists its drivers with node id and topology keys, is owned by
// the Node, follows a change of drivers, and leaves out a driver that does not answer.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "csi/directory_driver.h"
#include "in_process_api_server.h"
#include "kubelet/csi_node_registration.h"

namespace minik8s::kubelet {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

TEST(CsiNodeRegistrationTest, ListsTheDriversOfTheNode) {
  const fs::path dir =
      fs::temp_directory_path() / ("minik8s-csinode-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  csi::DirectoryDriverOptions o;
  o.name = csi::kLocalDriverName;
  o.baseDir = (dir / "local-volumes").string();
  o.nodeId = "node-1";
  o.topologyKey = csi::kLocalTopologyKey;
  csi::DirectoryDriver local(o);
  ASSERT_TRUE(local.start((dir / "local.sock").string()).ok());

  testing::InProcessApiServer apiServer;
  ASSERT_TRUE(apiServer.start().ok());
  client::RestClient rest(apiServer.url());
  auto node =
      rest.create(client::resources::kNodes, "",
                  {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "node-1"}}}});
  ASSERT_TRUE(node.ok()) << node.status().toString();

  const std::string localEndpoint = "unix://" + (dir / "local.sock").string();
  Status s = registerCsiNode(rest, "node-1",
                             {{csi::kLocalDriverName, localEndpoint},
                              {"gone.example.com", "unix://" + (dir / "nobody.sock").string()}},
                             300ms);
  ASSERT_TRUE(s.ok()) << s.toString();
  auto got = rest.get(kCsiNodes, "", "node-1");
  ASSERT_TRUE(got.ok()) << got.status().toString();
  EXPECT_EQ((*got)["spec"]["drivers"],
            json::parse(R"([{"name": "local.csi.minik8s.io", "nodeID": "node-1",
                             "topologyKeys": ["kubernetes.io/hostname"]}])"));
  EXPECT_EQ((*got)["metadata"]["ownerReferences"][0]["kind"], "Node");
  EXPECT_EQ((*got)["metadata"]["ownerReferences"][0]["uid"], (*node)["metadata"]["uid"]);

  // Another start with one more driver rewrites the list.
  csi::DirectoryDriverOptions shared;
  shared.baseDir = (dir / "volumes").string();
  shared.nodeId = "node-1";
  shared.controllerService = false;
  csi::DirectoryDriver dir_driver(shared);
  ASSERT_TRUE(dir_driver.start((dir / "dir.sock").string()).ok());
  s = registerCsiNode(rest, "node-1",
                      {{csi::kLocalDriverName, localEndpoint},
                       {csi::kDirectoryDriverName, "unix://" + (dir / "dir.sock").string()}});
  ASSERT_TRUE(s.ok()) << s.toString();
  got = rest.get(kCsiNodes, "", "node-1");
  ASSERT_TRUE(got.ok());
  ASSERT_EQ((*got)["spec"]["drivers"].size(), 2u);
  EXPECT_EQ((*got)["spec"]["drivers"][0]["name"], "dir.csi.minik8s.io");
  EXPECT_EQ((*got)["spec"]["drivers"][0]["topologyKeys"], json::array());

  apiServer.stop();
  dir_driver.stop();
  local.stop();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace minik8s::kubelet
