// Filters, scores, policies and the FitError message of the scheduling framework, on fake node
// and pod lists.
#include <gtest/gtest.h>

#include <map>
#include <optional>

#include "scheduler/framework.h"
#include "scheduler/plugins.h"
#include "scheduler/scheduler_cache.h"

namespace minik8s::scheduler {
namespace {

json node(const std::string& name, const std::string& cpu = "4", const std::string& mem = "8Gi",
          json labels = json::object()) {
  labels["kubernetes.io/hostname"] = name;
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}, {"labels", labels}}},
          {"spec", json::object()},
          {"status",
           {{"allocatable", {{"cpu", cpu}, {"memory", mem}, {"pods", "110"}}},
            {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
}

json pod(const std::string& name, const std::string& cpu = "", const std::string& mem = "") {
  json requests = json::object();
  if (!cpu.empty()) requests["cpu"] = cpu;
  if (!mem.empty()) requests["memory"] = mem;
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "default"}, {"uid", "uid-" + name}}},
          {"spec",
           {{"containers",
             {{{"name", "c"}, {"image", "busybox"}, {"resources", {{"requests", requests}}}}}}}}};
}

json onNode(json p, const std::string& nodeName) {
  p["spec"]["nodeName"] = nodeName;
  return p;
}

// A cluster of nodes with pods, and the default framework over it.
class FrameworkTest : public ::testing::Test {
 protected:
  void addNode(json n) { cache.addOrUpdateNode(std::move(n)); }
  void addPod(json p) { cache.addOrUpdatePod(p); }
  ScheduleResult schedule(const json& p, Policy policy = Policy::kDefault) {
    auto fw = Framework::withDefaultPlugins(policy, 1);
    PodInfo info = makePodInfo(p);
    return cache.withView([&](const ClusterView& v) { return fw->schedule(info, v); });
  }
  std::vector<std::string> filter(const std::string& plugin, const json& p,
                                  const std::string& nodeName) {
    auto f = filterPlugins().at(plugin)();
    PodInfo info = makePodInfo(p);
    return cache.withView([&](const ClusterView& nodes) {
      ClusterView v = nodes;
      v.claim = [this](const std::string& k) { return lookup(claims, k); };
      v.volume = [this](const std::string& k) { return lookup(volumes, k); };
      v.volumes = [this] {
        std::vector<json> out;
        for (const auto& [k, vol] : volumes) out.push_back(vol);
        return out;
      };
      v.storageClass = [this](const std::string& k) { return lookup(classes, k); };
      v.csiNode = [this](const std::string& k) { return lookup(csiNodes, k); };
      v.csiNodes = [this] {
        std::vector<json> out;
        for (const auto& [k, n] : csiNodes) out.push_back(n);
        return out;
      };
      for (const NodeInfo* n : v.nodes) {
        if (n->name() == nodeName) return f->filter(info, *n, v);
      }
      ADD_FAILURE() << "no node " << nodeName;
      return std::vector<std::string>{};
    });
  }
  std::vector<int64_t> score(const std::string& plugin, const json& p) {
    auto s = scorePlugins().at(plugin)();
    PodInfo info = makePodInfo(p);
    return cache.withView([&](const ClusterView& v) { return s->score(info, v.nodes); });
  }
  static std::optional<json> lookup(const std::map<std::string, json>& m, const std::string& k) {
    auto it = m.find(k);
    return it == m.end() ? std::nullopt : std::optional<json>(it->second);
  }
  SchedulerCache cache;
  std::map<std::string, json> claims;    // "ns/name", as VolumeBinding sees them
  std::map<std::string, json> volumes;   // by name
  std::map<std::string, json> classes;   // StorageClasses by name
  std::map<std::string, json> csiNodes;  // CSINodes by node name
};

TEST(PodInfoTest, RequestsSumContainersTakeMaxOfInitContainersAndAddOverhead) {
  json p = pod("p", "100m", "100Mi");
  p["spec"]["containers"].push_back(
      {{"name", "d"}, {"resources", {{"limits", {{"cpu", "200m"}, {"memory", "1Gi"}}}}}});
  p["spec"]["initContainers"] = {
      {{"name", "i"}, {"resources", {{"requests", {{"cpu", "1"}, {"memory", "10Mi"}}}}}}};
  p["spec"]["overhead"] = {{"cpu", "10m"}};
  PodInfo info = makePodInfo(p);
  EXPECT_EQ(info.requests.milliCpu, 1010);  // max(100m + 200m, 1) + 10m
  EXPECT_EQ(info.requests.memory, (100 + 1024) * 1024 * 1024);
  EXPECT_EQ(info.requests.pods, 1);
  PodInfo empty = makePodInfo(pod("e"));
  EXPECT_EQ(empty.requests.milliCpu, 0);
  EXPECT_EQ(empty.nonZeroRequests.milliCpu, kDefaultMilliCpuRequest);
  EXPECT_EQ(empty.nonZeroRequests.memory, kDefaultMemoryRequest);
}

TEST_F(FrameworkTest, NodeResourcesFitCountsBoundPodsAgainstAllocatable) {
  addNode(node("n1", "2", "4Gi"));
  addPod(onNode(pod("a", "1500m", "1Gi"), "n1"));
  EXPECT_TRUE(filter("NodeResourcesFit", pod("b", "500m", "3Gi"), "n1").empty());
  EXPECT_EQ(filter("NodeResourcesFit", pod("b", "501m", "3Gi"), "n1"),
            (std::vector<std::string>{"Insufficient cpu"}));
  EXPECT_EQ(filter("NodeResourcesFit", pod("b", "1", "4Gi"), "n1"),
            (std::vector<std::string>{"Insufficient cpu", "Insufficient memory"}));
  // A terminated pod frees its requests.
  json done = onNode(pod("a", "1500m", "1Gi"), "n1");
  done["status"]["phase"] = "Succeeded";
  addPod(done);
  EXPECT_TRUE(filter("NodeResourcesFit", pod("b", "2", "4Gi"), "n1").empty());
}

TEST_F(FrameworkTest, NodeResourcesFitLimitsPodCountAndExtendedResources) {
  json n = node("n1");
  n["status"]["allocatable"]["pods"] = "1";
  n["status"]["allocatable"]["example.com/gpu"] = "1";
  addNode(n);
  json gpu = pod("g");
  gpu["spec"]["containers"][0]["resources"]["requests"]["example.com/gpu"] = "2";
  EXPECT_EQ(filter("NodeResourcesFit", gpu, "n1"),
            (std::vector<std::string>{"Insufficient example.com/gpu"}));
  addPod(onNode(pod("a"), "n1"));
  EXPECT_EQ(filter("NodeResourcesFit", pod("b"), "n1"),
            (std::vector<std::string>{"Too many pods"}));
}

TEST_F(FrameworkTest, NodeReadyAndNodeUnschedulable) {
  json notReady = node("n1");
  notReady["status"]["conditions"][0]["status"] = "False";
  addNode(notReady);
  json cordoned = node("n2");
  cordoned["spec"]["unschedulable"] = true;
  addNode(cordoned);
  EXPECT_EQ(filter("NodeReady", pod("p"), "n1"),
            (std::vector<std::string>{"node(s) were not ready"}));
  EXPECT_TRUE(filter("NodeReady", pod("p"), "n2").empty());
  EXPECT_EQ(filter("NodeUnschedulable", pod("p"), "n2"),
            (std::vector<std::string>{"node(s) were unschedulable"}));
  json tolerant = pod("t");
  tolerant["spec"]["tolerations"] = {{{"key", "node.kubernetes.io/unschedulable"},
                                      {"operator", "Exists"},
                                      {"effect", "NoSchedule"}}};
  EXPECT_TRUE(filter("NodeUnschedulable", tolerant, "n2").empty());
}

TEST_F(FrameworkTest, TaintTolerationChecksNoScheduleAndNoExecuteOnly) {
  json n = node("n1");
  n["spec"]["taints"] = {{{"key", "soft"}, {"value", "x"}, {"effect", "PreferNoSchedule"}},
                         {{"key", "dedicated"}, {"value", "gpu"}, {"effect", "NoSchedule"}}};
  addNode(n);
  EXPECT_EQ(filter("TaintToleration", pod("p"), "n1"),
            (std::vector<std::string>{"node(s) had untolerated taint {dedicated: gpu}"}));
  json p = pod("p");
  p["spec"]["tolerations"] = {{{"key", "dedicated"}, {"value", "cpu"}, {"effect", "NoSchedule"}}};
  EXPECT_FALSE(filter("TaintToleration", p, "n1").empty());  // wrong value
  p["spec"]["tolerations"] = {{{"key", "dedicated"}, {"operator", "Equal"}, {"value", "gpu"}}};
  EXPECT_TRUE(filter("TaintToleration", p, "n1").empty());  // empty effect matches all
  p["spec"]["tolerations"] = {{{"operator", "Exists"}}};
  EXPECT_TRUE(filter("TaintToleration", p, "n1").empty());
  p["spec"]["tolerations"] = {
      {{"key", "dedicated"}, {"operator", "Exists"}, {"effect", "NoExecute"}}};
  EXPECT_FALSE(filter("TaintToleration", p, "n1").empty());  // wrong effect
}

TEST_F(FrameworkTest, NodeAffinityHonoursNodeSelectorAndRequiredTerms) {
  addNode(node("n1", "4", "8Gi", {{"disk", "ssd"}, {"cores", "8"}}));
  addNode(node("n2", "4", "8Gi", {{"disk", "hdd"}}));
  json p = pod("p");
  p["spec"]["nodeSelector"] = {{"disk", "ssd"}};
  EXPECT_TRUE(filter("NodeAffinity", p, "n1").empty());
  EXPECT_EQ(filter("NodeAffinity", p, "n2"),
            (std::vector<std::string>{"node(s) didn't match Pod's node affinity/selector"}));
  json a = pod("a");
  a["spec"]["affinity"] = R"({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
      {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["4"]}]},
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]}]}}})"_json;
  EXPECT_TRUE(filter("NodeAffinity", a, "n1").empty());  // first term
  EXPECT_TRUE(filter("NodeAffinity", a, "n2").empty());  // second term (terms are ORed)
  json b = pod("b");
  b["spec"]["affinity"] = R"({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
      {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "disk", "operator": "NotIn", "values": ["ssd"]},
        {"key": "gpu", "operator": "DoesNotExist"}]}]}}})"_json;
  EXPECT_FALSE(filter("NodeAffinity", b, "n1").empty());
  EXPECT_TRUE(filter("NodeAffinity", b, "n2").empty());
}

TEST_F(FrameworkTest, NodePortsConflictOnSameProtocolPortAndOverlappingIp) {
  addNode(node("n1"));
  auto withPort = [](json p, int port, const std::string& protocol, const std::string& ip) {
    json cp = {{"containerPort", 80}, {"hostPort", port}, {"protocol", protocol}};
    if (!ip.empty()) cp["hostIP"] = ip;
    p["spec"]["containers"][0]["ports"] = {cp};
    return p;
  };
  addPod(onNode(withPort(pod("a"), 8080, "TCP", "10.0.0.1"), "n1"));
  EXPECT_EQ(
      filter("NodePorts", withPort(pod("b"), 8080, "TCP", ""), "n1"),
      (std::vector<std::string>{"node(s) didn't have free ports for the requested pod ports"}));
  EXPECT_TRUE(filter("NodePorts", withPort(pod("b"), 8080, "UDP", ""), "n1").empty());
  EXPECT_TRUE(filter("NodePorts", withPort(pod("b"), 8080, "TCP", "10.0.0.2"), "n1").empty());
  EXPECT_TRUE(filter("NodePorts", withPort(pod("b"), 8081, "TCP", ""), "n1").empty());
}

TEST_F(FrameworkTest, VolumeBindingKeepsPodsWithClaimsPendingUntilStorageExists) {
  addNode(node("n1"));
  json p = pod("db-0");
  p["spec"]["volumes"] = {
      {{"name", "tmp"}, {"emptyDir", json::object()}},
      {{"name", "data"}, {"persistentVolumeClaim", {{"claimName", "data-db-0"}}}}};
  EXPECT_EQ(filter("VolumeBinding", p, "n1"),
            (std::vector<std::string>{"persistentvolumeclaim \"data-db-0\" not found"}));
  EXPECT_TRUE(filter("VolumeBinding", pod("plain"), "n1").empty());
  claims["default/data-db-0"] = {{"metadata", {{"name", "data-db-0"}}}, {"spec", json::object()}};
  EXPECT_EQ(filter("VolumeBinding", p, "n1"),
            (std::vector<std::string>{"pod has unbound immediate PersistentVolumeClaims"}));
  claims["default/data-db-0"]["spec"]["volumeName"] = "pv1";
  EXPECT_EQ(filter("VolumeBinding", p, "n1"),
            (std::vector<std::string>{"persistentvolume \"pv1\" not found"}));
  volumes["pv1"] = {{"spec", {{"hostPath", {{"path", "/x"}}}}}};
  EXPECT_TRUE(filter("VolumeBinding", p, "n1").empty());
  claims["default/data-db-0"]["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
  EXPECT_EQ(filter("VolumeBinding", p, "n1"),
            (std::vector<std::string>{"persistentvolumeclaim \"data-db-0\" is being deleted"}));
}

TEST_F(FrameworkTest, VolumeBindingWaitsForFirstConsumerOnNodesWhereAVolumeFitsOrCanBeMade) {
  addNode(node("n1", "4", "8Gi", {{"kubernetes.io/hostname", "n1"}}));
  addNode(node("n2", "4", "8Gi", {{"kubernetes.io/hostname", "n2"}}));
  classes["local"] = {{"metadata", {{"name", "local"}}},
                      {"provisioner", "kubernetes.io/no-provisioner"},
                      {"volumeBindingMode", "WaitForFirstConsumer"}};
  claims["default/disk"] = {{"metadata", {{"name", "disk"}, {"namespace", "default"}}},
                            {"spec",
                             {{"storageClassName", "local"},
                              {"accessModes", {"ReadWriteOnce"}},
                              {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}};
  json p = pod("p");
  p["spec"]["volumes"] = {{{"name", "d"}, {"persistentVolumeClaim", {{"claimName", "disk"}}}}};
  const std::vector<std::string> none = {
      "node(s) didn't find available persistent volumes to bind"};
  EXPECT_EQ(filter("VolumeBinding", p, "n1"), none);
  volumes["local-n2"] = R"({"metadata": {"name": "local-n2"}, "spec": {"storageClassName": "local",
      "capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOnce"], "local": {"path": "/mnt"},
      "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n2"]}]}]}}},
      "status": {"phase": "Available"}})"_json;
  EXPECT_EQ(filter("VolumeBinding", p, "n1"), none);
  EXPECT_TRUE(filter("VolumeBinding", p, "n2").empty());
  // A class that provisions fits anywhere; an Immediate class still waits for the binder.
  classes["local"]["provisioner"] = "dir.csi.minik8s.io";
  EXPECT_TRUE(filter("VolumeBinding", p, "n1").empty());
  classes["local"]["volumeBindingMode"] = "Immediate";
  EXPECT_EQ(filter("VolumeBinding", p, "n1"),
            (std::vector<std::string>{"pod has unbound immediate PersistentVolumeClaims"}));
}

TEST_F(FrameworkTest, VolumeRestrictionsAllowOnePodPerReadWriteOncePodClaim) {
  addNode(node("n1"));
  addNode(node("n2"));
  claims["default/solo"] = {{"spec", {{"accessModes", {"ReadWriteOncePod"}}}}};
  claims["default/shared"] = {{"spec", {{"accessModes", {"ReadWriteOnce"}}}}};
  auto using_ = [](const std::string& name, const std::string& claim) {
    json p = pod(name);
    p["spec"]["volumes"] = {{{"name", "d"}, {"persistentVolumeClaim", {{"claimName", claim}}}}};
    return p;
  };
  EXPECT_TRUE(filter("VolumeRestrictions", using_("first", "solo"), "n1").empty());
  addPod(onNode(using_("first", "solo"), "n1"));
  addPod(onNode(using_("a", "shared"), "n1"));
  const std::vector<std::string> conflict = {
      "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access "
      "mode"};
  EXPECT_EQ(filter("VolumeRestrictions", using_("second", "solo"), "n2"), conflict);
  EXPECT_EQ(filter("VolumeRestrictions", using_("second", "solo"), "n1"), conflict);
}

TEST_F(FrameworkTest, VolumeRestrictionsKeepAReadWriteOnceClaimOnOneNode) {
  addNode(node("n1"));
  addNode(node("n2"));
  claims["default/shared"] = {{"spec", {{"accessModes", {"ReadWriteOnce"}}}}};
  claims["default/many"] = {{"spec", {{"accessModes", {"ReadWriteOnce", "ReadWriteMany"}}}}};
  claims["other/shared"] = {{"spec", {{"accessModes", {"ReadWriteOnce"}}}}};
  auto using_ = [](const std::string& name, const std::string& claim, const std::string& ns) {
    json p = pod(name);
    p["metadata"]["namespace"] = ns;
    p["spec"]["volumes"] = {{{"name", "d"}, {"persistentVolumeClaim", {{"claimName", claim}}}}};
    return p;
  };
  EXPECT_TRUE(filter("VolumeRestrictions", using_("a", "shared", "default"), "n2").empty());
  addPod(onNode(using_("a", "shared", "default"), "n1"));
  addPod(onNode(using_("m", "many", "default"), "n1"));
  // Another pod may join it on its node, not on another one.
  EXPECT_TRUE(filter("VolumeRestrictions", using_("b", "shared", "default"), "n1").empty());
  EXPECT_EQ(filter("VolumeRestrictions", using_("b", "shared", "default"), "n2"),
            (std::vector<std::string>{
                "persistentvolumeclaim \"shared\" is ReadWriteOnce and in use on node \"n1\""}));
  // ReadWriteMany too: any node; a claim of the same name in another namespace is another claim.
  EXPECT_TRUE(filter("VolumeRestrictions", using_("n", "many", "default"), "n2").empty());
  EXPECT_TRUE(filter("VolumeRestrictions", using_("o", "shared", "other"), "n2").empty());
}

TEST_F(FrameworkTest, VolumeBindingProvisionsANodeLocalDriversClaimOnlyWhereTheDriverRuns) {
  addNode(node("n1"));
  addNode(node("n2"));
  addNode(node("n3"));
  classes["local-path"] = {{"metadata", {{"name", "local-path"}}},
                           {"provisioner", "local.csi.minik8s.io"},
                           {"volumeBindingMode", "WaitForFirstConsumer"}};
  claims["default/fast"] = {{"metadata", {{"name", "fast"}, {"namespace", "default"}}},
                            {"spec",
                             {{"storageClassName", "local-path"},
                              {"accessModes", {"ReadWriteOnce"}},
                              {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}};
  json p = pod("p");
  p["spec"]["volumes"] = {{{"name", "d"}, {"persistentVolumeClaim", {{"claimName", "fast"}}}}};
  // No node lists the driver yet: taken for a central provisioner, any node.
  EXPECT_TRUE(filter("VolumeBinding", p, "n3").empty());
  auto csiNode = [](const std::string& name, std::vector<std::string> drivers) {
    json d = json::array();
    for (const auto& n : drivers) d.push_back({{"name", n}, {"nodeID", name}});
    return json{{"metadata", {{"name", name}}}, {"spec", {{"drivers", d}}}};
  };
  csiNodes["n1"] = csiNode("n1", {"dir.csi.minik8s.io", "local.csi.minik8s.io"});
  csiNodes["n2"] = csiNode("n2", {"dir.csi.minik8s.io"});  // --disable-local-storage
  const std::vector<std::string> none = {
      "node(s) didn't find available persistent volumes to bind"};
  EXPECT_TRUE(filter("VolumeBinding", p, "n1").empty());
  EXPECT_EQ(filter("VolumeBinding", p, "n2"), none);
  EXPECT_EQ(filter("VolumeBinding", p, "n3"), none);  // no CSINode: does not serve it
}

TEST_F(FrameworkTest, VolumeBindingHonoursTheVolumesNodeAffinity) {
  addNode(node("n1", "4", "8Gi", {{"kubernetes.io/hostname", "n1"}}));
  addNode(node("n2", "4", "8Gi", {{"kubernetes.io/hostname", "n2"}}));
  claims["default/local"] = {{"spec", {{"volumeName", "local-n2"}}}};
  volumes["local-n2"] = R"({"spec": {"local": {"path": "/mnt/disk"}, "nodeAffinity": {"required":
      {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n2"]}]}]}}}})"_json;
  json p = pod("p");
  p["spec"]["volumes"] = {{{"name", "d"}, {"persistentVolumeClaim", {{"claimName", "local"}}}}};
  EXPECT_EQ(filter("VolumeBinding", p, "n1"),
            (std::vector<std::string>{"node(s) had volume node affinity conflict"}));
  EXPECT_TRUE(filter("VolumeBinding", p, "n2").empty());
}

TEST_F(FrameworkTest, InterPodAffinityAndAntiAffinityOnHostname) {
  addNode(node("n1"));
  addNode(node("n2"));
  json web = pod("web");
  web["metadata"]["labels"] = {{"app", "web"}};
  addPod(onNode(web, "n1"));
  auto term = json{{"labelSelector", {{"matchLabels", {{"app", "web"}}}}},
                   {"topologyKey", "kubernetes.io/hostname"}};
  json near = pod("near");
  near["spec"]["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = {
      term};
  EXPECT_TRUE(filter("InterPodAffinity", near, "n1").empty());
  EXPECT_EQ(filter("InterPodAffinity", near, "n2"),
            (std::vector<std::string>{"node(s) didn't match pod affinity rules"}));
  json away = pod("away");
  away["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = {
      term};
  EXPECT_EQ(filter("InterPodAffinity", away, "n1"),
            (std::vector<std::string>{"node(s) didn't match pod anti-affinity rules"}));
  EXPECT_TRUE(filter("InterPodAffinity", away, "n2").empty());
  // A pod in another namespace is not matched by a term without namespaces.
  away["metadata"]["namespace"] = "other";
  EXPECT_TRUE(filter("InterPodAffinity", away, "n1").empty());

  // An existing pod's anti-affinity keeps matching pods off its node.
  json loner = pod("loner");
  loner["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = {
      {{"labelSelector", {{"matchLabels", {{"app", "db"}}}}},
       {"topologyKey", "kubernetes.io/hostname"}}};
  addPod(onNode(loner, "n2"));
  json db = pod("db");
  db["metadata"]["labels"] = {{"app", "db"}};
  EXPECT_EQ(filter("InterPodAffinity", db, "n2"),
            (std::vector<std::string>{"node(s) didn't satisfy existing pods anti-affinity rules"}));
  EXPECT_TRUE(filter("InterPodAffinity", db, "n1").empty());

  // The framework works the node-independent part out once per cycle (preFilter) and reaches
  // the same verdicts for every node.
  EXPECT_EQ(schedule(db).nodeName, "n1");
  EXPECT_EQ(schedule(near).nodeName, "n1");
  json both = db;
  both["spec"]["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = {
      term};
  EXPECT_EQ(schedule(both).nodeName, "n1");
  both["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = {
      term};
  auto r = schedule(both);
  EXPECT_EQ(r.nodeName, "");
  EXPECT_EQ(r.reasonCounts["node(s) didn't match pod anti-affinity rules"], 1);
  EXPECT_EQ(r.reasonCounts["node(s) didn't satisfy existing pods anti-affinity rules"], 1);
}

TEST_F(FrameworkTest, FirstPodOfASelfAffineGroupMayGoAnywhere) {
  addNode(node("n1"));
  json p = pod("first");
  p["metadata"]["labels"] = {{"app", "cache"}};
  p["spec"]["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = {
      {{"labelSelector", {{"matchLabels", {{"app", "cache"}}}}},
       {"topologyKey", "kubernetes.io/hostname"}}};
  EXPECT_TRUE(filter("InterPodAffinity", p, "n1").empty());
}

TEST_F(FrameworkTest, LeastAllocatedAndBalancedAllocationScores) {
  addNode(node("n1", "4", "8Gi"));
  addNode(node("n2", "4", "8Gi"));
  addPod(onNode(pod("a", "2", "2Gi"), "n1"));
  json p = pod("p", "1", "2Gi");
  // n1: cpu (4-3)/4 = 25, mem (8-4)/8 = 50 -> 37; n2: cpu 75, mem 75 -> 75.
  EXPECT_EQ(score("NodeResourcesLeastAllocated", p), (std::vector<int64_t>{37, 75}));
  // n1: fractions 0.75 / 0.5 -> 100 * (1 - 0.125) = 87; n2: 0.25 / 0.25 -> 100.
  EXPECT_EQ(score("NodeResourcesBalancedAllocation", p), (std::vector<int64_t>{87, 100}));
  // Containers without requests count as 100m / 200Mi for LeastAllocated.
  // n2: cpu (4000-100)*100/4000 = 97, mem (8192-200)*100/8192 = 97.
  EXPECT_EQ(score("NodeResourcesLeastAllocated", pod("e"))[1], 97);
}

TEST_F(FrameworkTest, SelectorSpreadPrefersNodesWithFewerPodsOfTheSameOwner) {
  addNode(node("n1"));
  addNode(node("n2"));
  addNode(node("n3"));
  auto owned = [](const std::string& name) {
    json p = pod(name);
    p["metadata"]["ownerReferences"] = {
        {{"kind", "ReplicaSet"}, {"name", "rs"}, {"uid", "rs-uid"}, {"controller", true}}};
    return p;
  };
  addPod(onNode(owned("a"), "n1"));
  addPod(onNode(owned("b"), "n1"));
  addPod(onNode(owned("c"), "n2"));
  EXPECT_EQ(score("SelectorSpread", owned("d")), (std::vector<int64_t>{0, 50, 100}));
  EXPECT_EQ(score("SelectorSpread", pod("lonely")), (std::vector<int64_t>{100, 100, 100}));
  EXPECT_EQ(schedule(owned("d")).nodeName, "n3");
}

TEST_F(FrameworkTest, MessageCountsReasonsPerNodeSortedAsKubernetesDoes) {
  addNode(node("n1", "1"));
  addNode(node("n2", "1"));
  addNode(node("n3", "1"));
  auto r = schedule(pod("big", "2"));
  EXPECT_EQ(r.nodeName, "");
  EXPECT_EQ(r.message, "0/3 nodes are available: 3 Insufficient cpu.");

  json cordoned = node("n3", "1");
  cordoned["spec"]["unschedulable"] = true;
  addNode(cordoned);
  json n2 = node("n2", "1", "100Mi");
  addNode(n2);
  r = schedule(pod("big", "2", "1Gi"));
  EXPECT_EQ(r.message,
            "0/3 nodes are available: 1 Insufficient memory, 1 node(s) were unschedulable, "
            "2 Insufficient cpu.");
  EXPECT_EQ(fitErrorMessage(2, {{"Too many pods", 2}}),
            "0/2 nodes are available: 2 Too many pods.");
}

TEST_F(FrameworkTest, NoNodesMessage) {
  EXPECT_EQ(schedule(pod("p")).message, "no nodes available to schedule pods");
}

TEST_F(FrameworkTest, DefaultPolicyPicksTheLeastLoadedFeasibleNode) {
  addNode(node("small", "1", "1Gi"));
  addNode(node("busy", "8", "16Gi"));
  addNode(node("free", "8", "16Gi"));
  addPod(onNode(pod("x", "6", "12Gi"), "busy"));
  EXPECT_EQ(schedule(pod("p", "2", "1Gi")).nodeName, "free");
  EXPECT_EQ(schedule(pod("p", "2", "1Gi"), Policy::kLeastAllocated).nodeName, "free");
}

TEST_F(FrameworkTest, RoundRobinAndRandomPoliciesOnlyPickFeasibleNodes) {
  addNode(node("a"));
  addNode(node("b"));
  json cordoned = node("c");
  cordoned["spec"]["unschedulable"] = true;
  addNode(cordoned);
  auto fw = Framework::withDefaultPlugins(Policy::kRoundRobin, 1);
  EXPECT_TRUE(fw->scoreNames().empty());
  std::vector<std::string> picked;
  PodInfo p = makePodInfo(pod("p"));
  for (int i = 0; i < 4; ++i) {
    picked.push_back(
        cache.withView([&](const ClusterView& v) { return fw->schedule(p, v).nodeName; }));
  }
  EXPECT_EQ(picked, (std::vector<std::string>{"a", "b", "a", "b"}));
  auto rnd = Framework::withDefaultPlugins(Policy::kRandom, 7);
  std::set<std::string> seen;
  for (int i = 0; i < 50; ++i) {
    seen.insert(cache.withView([&](const ClusterView& v) { return rnd->schedule(p, v).nodeName; }));
  }
  EXPECT_EQ(seen, (std::set<std::string>{"a", "b"}));
}

TEST(PolicyTest, ParsesTheFourPolicies) {
  EXPECT_EQ(*parsePolicy("default"), Policy::kDefault);
  EXPECT_EQ(*parsePolicy("round-robin"), Policy::kRoundRobin);
  EXPECT_EQ(*parsePolicy("random"), Policy::kRandom);
  EXPECT_EQ(*parsePolicy("least-allocated"), Policy::kLeastAllocated);
  EXPECT_EQ(parsePolicy("best").status().code(), 400);
  auto fw = Framework::withDefaultPlugins(Policy::kDefault);
  EXPECT_EQ(fw->filterNames(), defaultFilterOrder());
  EXPECT_EQ(fw->scoreNames(),
            (std::vector<std::string>{"NodeResourcesLeastAllocated",
                                      "NodeResourcesBalancedAllocation", "SelectorSpread"}));
}

TEST(SchedulerCacheTest, AssumedPodsCountUntilConfirmedOrForgotten) {
  SchedulerCache cache;
  cache.addOrUpdateNode(node("n1", "1"));
  cache.assumePod(makePodInfo(pod("a", "600m")), "n1");
  EXPECT_TRUE(cache.isAssumed("default/a"));
  auto fits = [&](const json& p) {
    auto f = filterPlugins().at("NodeResourcesFit")();
    PodInfo info = makePodInfo(p);
    return cache.withView([&](const ClusterView& v) { return f->filter(info, *v.nodes[0], v); })
        .empty();
  };
  EXPECT_FALSE(fits(pod("b", "600m")));
  // The informer still shows it pending: the assumption stays.
  cache.addOrUpdatePod(pod("a", "600m"));
  EXPECT_EQ(cache.nodeOf("default/a"), "n1");
  cache.addOrUpdatePod(onNode(pod("a", "600m"), "n1"));  // confirmed
  EXPECT_FALSE(cache.isAssumed("default/a"));
  cache.forgetPod("default/a");  // no effect on a confirmed pod
  EXPECT_FALSE(fits(pod("b", "600m")));
  cache.removePod("default/a");
  EXPECT_TRUE(fits(pod("b", "600m")));
  cache.assumePod(makePodInfo(pod("c", "600m")), "n1");
  cache.forgetPod("default/c");
  EXPECT_TRUE(fits(pod("b", "600m")));
  EXPECT_EQ(cache.nodeOf("default/c"), "");
}

}  // namespace
}  // namespace minik8s::scheduler
