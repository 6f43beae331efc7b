#include <gtest/gtest.h>

#include "monitoring/service_discovery.h"

namespace minik8s::monitoring {
namespace {

json node(const std::string& name, json addresses, int port = 10250) {
  return {{"metadata", {{"name", name}, {"labels", {{"kubernetes.io/hostname", name}}}}},
          {"status",
           {{"addresses", std::move(addresses)},
            {"daemonEndpoints", {{"kubeletEndpoint", {{"Port", port}}}}}}}};
}

json pod(const std::string& ns, const std::string& name, const std::string& ip) {
  json p = json::parse(R"({
    "metadata": {"namespace": "", "name": "", "uid": "u-1",
      "labels": {"app": "web", "app.kubernetes.io/name": "web"},
      "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "8000"},
      "ownerReferences": [{"kind": "ReplicaSet", "name": "web-5d4", "controller": true}]},
    "spec": {"nodeName": "node-2",
      "initContainers": [{"name": "setup", "image": "busybox"}],
      "containers": [
        {"name": "app", "image": "minik8s/python", "ports": [
          {"name": "metrics", "containerPort": 8000},
          {"containerPort": 53, "protocol": "UDP"}]},
        {"name": "sidecar", "image": "busybox"}]},
    "status": {"phase": "Running", "podIP": "", "hostIP": "172.29.0.3",
      "conditions": [{"type": "Ready", "status": "True"}],
      "containerStatuses": [{"name": "app", "containerID": "containerd://abc"}]}
  })");
  p["metadata"]["namespace"] = ns;
  p["metadata"]["name"] = name;
  p["status"]["podIP"] = ip;
  return p;
}

TEST(ServiceDiscoveryTest, RolesAndLabelNames) {
  EXPECT_EQ(*parseSdRole("node"), SdRole::kNode);
  EXPECT_EQ(*parseSdRole("pods"), SdRole::kPod);
  EXPECT_EQ(*parseSdRole("endpoints"), SdRole::kEndpoints);
  auto bad = parseSdRole("ingress");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), 404);
  EXPECT_NE(bad.status().message().find("node, pod, service and endpoints"), std::string::npos);
  EXPECT_EQ(sanitizeLabelName("app.kubernetes.io/name"), "app_kubernetes_io_name");
  EXPECT_EQ(sanitizeLabelName("prometheus.io/scrape-me"), "prometheus_io_scrape_me");
}

TEST(ServiceDiscoveryTest, NodeTargetIsTheKubeletWithKubernetesSdLabels) {
  ClusterObjects objects;
  objects.nodes = {
      node("node-1", json::array({{{"type", "Hostname"}, {"address", "node-1"}},
                                  {{"type", "InternalIP"}, {"address", "172.29.0.2"}}})),
      node("node-2", json::array({{{"type", "Hostname"}, {"address", "node-2"}}}), 10255),
      node("no-address", json::array()),
  };
  json groups = targetGroups(SdRole::kNode, objects);
  ASSERT_EQ(groups.size(), 2u) << groups.dump(2);
  // InternalIP before Hostname, whatever their order.
  EXPECT_EQ(groups[0]["targets"], json::array({"172.29.0.2:10250"}));
  const json& l = groups[0]["labels"];
  EXPECT_EQ(l["__meta_kubernetes_node_name"], "node-1");
  EXPECT_EQ(l["instance"], "node-1");
  EXPECT_EQ(l["__meta_kubernetes_node_address_InternalIP"], "172.29.0.2");
  EXPECT_EQ(l["__meta_kubernetes_node_address_Hostname"], "node-1");
  EXPECT_EQ(l["__meta_kubernetes_node_label_kubernetes_io_hostname"], "node-1");
  EXPECT_EQ(l["__meta_kubernetes_node_labelpresent_kubernetes_io_hostname"], "true");
  EXPECT_EQ(groups[1]["targets"], json::array({"node-2:10255"}));
}

TEST(ServiceDiscoveryTest, PodTargetPerDeclaredPortAndOnePortlessTargetPerContainer) {
  ClusterObjects objects;
  objects.pods = {pod("default", "web-1", "10.244.1.5"), pod("default", "pending", "")};
  json groups = targetGroups(SdRole::kPod, objects);
  // app: two ports; sidecar: no port (one target); init container without ports: none; the pod
  // without an IP: none.
  ASSERT_EQ(groups.size(), 3u) << groups.dump(2);
  EXPECT_EQ(groups[0]["targets"], json::array({"10.244.1.5:8000"}));
  const json& l = groups[0]["labels"];
  EXPECT_EQ(l["__meta_kubernetes_namespace"], "default");
  EXPECT_EQ(l["__meta_kubernetes_pod_name"], "web-1");
  EXPECT_EQ(l["__meta_kubernetes_pod_ip"], "10.244.1.5");
  EXPECT_EQ(l["__meta_kubernetes_pod_ready"], "true");
  EXPECT_EQ(l["__meta_kubernetes_pod_phase"], "Running");
  EXPECT_EQ(l["__meta_kubernetes_pod_node_name"], "node-2");
  EXPECT_EQ(l["__meta_kubernetes_pod_host_ip"], "172.29.0.3");
  EXPECT_EQ(l["__meta_kubernetes_pod_uid"], "u-1");
  EXPECT_EQ(l["__meta_kubernetes_pod_controller_kind"], "ReplicaSet");
  EXPECT_EQ(l["__meta_kubernetes_pod_controller_name"], "web-5d4");
  EXPECT_EQ(l["__meta_kubernetes_pod_container_name"], "app");
  EXPECT_EQ(l["__meta_kubernetes_pod_container_image"], "minik8s/python");
  EXPECT_EQ(l["__meta_kubernetes_pod_container_init"], "false");
  EXPECT_EQ(l["__meta_kubernetes_pod_container_id"], "containerd://abc");
  EXPECT_EQ(l["__meta_kubernetes_pod_container_port_name"], "metrics");
  EXPECT_EQ(l["__meta_kubernetes_pod_container_port_number"], "8000");
  EXPECT_EQ(l["__meta_kubernetes_pod_container_port_protocol"], "TCP");
  EXPECT_EQ(l["__meta_kubernetes_pod_label_app_kubernetes_io_name"], "web");
  EXPECT_EQ(l["__meta_kubernetes_pod_annotation_prometheus_io_scrape"], "true");
  EXPECT_EQ(l["__meta_kubernetes_pod_annotationpresent_prometheus_io_port"], "true");
  EXPECT_EQ(groups[1]["targets"], json::array({"10.244.1.5:53"}));
  EXPECT_EQ(groups[1]["labels"]["__meta_kubernetes_pod_container_port_protocol"], "UDP");
  EXPECT_EQ(groups[2]["targets"], json::array({"10.244.1.5"}));
  EXPECT_EQ(groups[2]["labels"]["__meta_kubernetes_pod_container_name"], "sidecar");
  EXPECT_FALSE(groups[2]["labels"].contains("__meta_kubernetes_pod_container_port_number"));
  // Limited to namespaces, as kubernetes_sd's namespaces.names.
  EXPECT_TRUE(targetGroups(SdRole::kPod, objects, {"kube-system"}).empty());
  EXPECT_EQ(targetGroups(SdRole::kPod, objects, {"kube-system", "default"}).size(), 3u);
}

TEST(ServiceDiscoveryTest, ServiceAndEndpointsCarryServiceAndPodLabels) {
  ClusterObjects objects;
  objects.pods = {pod("default", "web-1", "10.244.1.5")};
  objects.services = {json::parse(R"({
    "metadata": {"namespace": "default", "name": "web", "labels": {"tier": "front"},
                 "annotations": {"prometheus.io/scrape": "true"}},
    "spec": {"type": "NodePort", "clusterIP": "10.96.0.20",
             "ports": [{"name": "http", "port": 80}, {"name": "metrics", "port": 8000}]}})")};
  objects.endpoints = {json::parse(R"({
    "metadata": {"namespace": "default", "name": "web"},
    "subsets": [{"addresses": [{"ip": "10.244.1.5", "nodeName": "node-2",
                                "targetRef": {"kind": "Pod", "name": "web-1"}}],
                 "notReadyAddresses": [{"ip": "10.244.2.9"}],
                 "ports": [{"name": "metrics", "port": 8000, "protocol": "TCP"}]}]})")};
  json services = targetGroups(SdRole::kService, objects);
  ASSERT_EQ(services.size(), 2u);
  EXPECT_EQ(services[0]["targets"], json::array({"web.default.svc:80"}));
  EXPECT_EQ(services[0]["labels"]["__meta_kubernetes_service_name"], "web");
  EXPECT_EQ(services[0]["labels"]["__meta_kubernetes_service_type"], "NodePort");
  EXPECT_EQ(services[0]["labels"]["__meta_kubernetes_service_cluster_ip"], "10.96.0.20");
  EXPECT_EQ(services[0]["labels"]["__meta_kubernetes_service_port_name"], "http");
  EXPECT_EQ(services[1]["labels"]["__meta_kubernetes_service_port_number"], "8000");
  EXPECT_EQ(services[0]["labels"]["__meta_kubernetes_service_label_tier"], "front");

  json eps = targetGroups(SdRole::kEndpoints, objects);
  ASSERT_EQ(eps.size(), 2u) << eps.dump(2);
  EXPECT_EQ(eps[0]["targets"], json::array({"10.244.1.5:8000"}));
  const json& l = eps[0]["labels"];
  EXPECT_EQ(l["__meta_kubernetes_endpoints_name"], "web");
  EXPECT_EQ(l["__meta_kubernetes_endpoint_ready"], "true");
  EXPECT_EQ(l["__meta_kubernetes_endpoint_node_name"], "node-2");
  EXPECT_EQ(l["__meta_kubernetes_endpoint_port_name"], "metrics");
  EXPECT_EQ(l["__meta_kubernetes_endpoint_address_target_kind"], "Pod");
  EXPECT_EQ(l["__meta_kubernetes_endpoint_address_target_name"], "web-1");
  EXPECT_EQ(l["__meta_kubernetes_service_annotation_prometheus_io_scrape"], "true");
  EXPECT_EQ(l["__meta_kubernetes_pod_name"], "web-1");
  EXPECT_EQ(l["__meta_kubernetes_pod_label_app"], "web");
  EXPECT_EQ(eps[1]["targets"], json::array({"10.244.2.9:8000"}));
  EXPECT_EQ(eps[1]["labels"]["__meta_kubernetes_endpoint_ready"], "false");
  EXPECT_FALSE(eps[1]["labels"].contains("__meta_kubernetes_pod_name"));
}

TEST(ServiceDiscoveryTest, MalformedObjectsAreSkippedNotFatal) {
  ClusterObjects objects;
  objects.nodes = {json::parse(R"({"metadata": 5, "status": {"addresses": "x"}})")};
  objects.pods = {json::parse(R"({"status": {"podIP": "10.0.0.1"}, "spec": {"containers": 3}})"),
                  json::parse(R"({"status": {"podIP": 7}})")};
  objects.endpoints = {json::parse(R"({"subsets": [{"ports": [{"port": "x"}],
                                       "addresses": [{"ip": "1.2.3.4"}]}]})")};
  EXPECT_TRUE(targetGroups(SdRole::kNode, objects).empty());
  EXPECT_TRUE(targetGroups(SdRole::kPod, objects).empty());
  json eps = targetGroups(SdRole::kEndpoints, objects);
  ASSERT_EQ(eps.size(), 1u);
  EXPECT_EQ(eps[0]["targets"], json::array({"1.2.3.4"}));
}

}  // namespace
}  // namespace minik8s::monitoring
