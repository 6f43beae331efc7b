// Table printing for `kubectl get`: columns and cells per kind, as upstream's printers.go.
#include <gtest/gtest.h>

#include "api/table.h"
#include "test_times.h"

namespace minik8s::api {
namespace {

using std::chrono::seconds;

// 2024-01-02T03:04:05Z
using testing::kNow;

std::vector<std::string> columnNames(const std::string& kind, int priority) {
  std::vector<std::string> out;
  for (const auto& c : tableColumns(kind)) {
    if (c.priority == priority) out.push_back(c.name);
  }
  return out;
}

TEST(HumanDurationTest, FollowsKubectlRules) {
  EXPECT_EQ(humanDuration(seconds(-5)), "<invalid>");
  EXPECT_EQ(humanDuration(seconds(-1)), "0s");
  EXPECT_EQ(humanDuration(seconds(0)), "0s");
  EXPECT_EQ(humanDuration(seconds(119)), "119s");
  EXPECT_EQ(humanDuration(seconds(120)), "2m");
  EXPECT_EQ(humanDuration(seconds(200)), "3m20s");
  EXPECT_EQ(humanDuration(seconds(599)), "9m59s");
  EXPECT_EQ(humanDuration(seconds(600)), "10m");
  EXPECT_EQ(humanDuration(seconds(3 * 3600 - 1)), "179m");
  EXPECT_EQ(humanDuration(seconds(3 * 3600)), "3h");
  EXPECT_EQ(humanDuration(seconds(4 * 3600 + 5 * 60 + 7)), "4h5m");
  EXPECT_EQ(humanDuration(seconds(8 * 3600)), "8h");
  EXPECT_EQ(humanDuration(seconds(47 * 3600 + 59 * 60)), "47h");
  EXPECT_EQ(humanDuration(seconds(48 * 3600)), "2d");
  EXPECT_EQ(humanDuration(seconds(3 * 86400 + 4 * 3600)), "3d4h");
  EXPECT_EQ(humanDuration(seconds(8 * 86400)), "8d");
  EXPECT_EQ(humanDuration(seconds(729 * 86400)), "729d");
  EXPECT_EQ(humanDuration(seconds(730 * 86400)), "2y");
  EXPECT_EQ(humanDuration(seconds(3 * 365 * 86400 + 20 * 86400)), "3y20d");
  EXPECT_EQ(humanDuration(seconds(9 * 365 * 86400 + 86400)), "9y");
}

TEST(TableColumnsTest, DefaultKindHasNameAndAge) {
  auto cols = tableColumns("Widget");
  ASSERT_EQ(cols.size(), 2u);
  EXPECT_EQ(cols[0].name, "Name");
  EXPECT_EQ(cols[0].format, "name");
  EXPECT_EQ(cols[1].name, "Age");
  json obj = {{"metadata", {{"name", "w"}, {"creationTimestamp", "2024-01-02T03:00:05Z"}}}};
  EXPECT_EQ(tableCells("Widget", obj, kNow), json::array({"w", "4m"}));
  EXPECT_EQ(tableCells("Widget", json::object(), kNow), json::array({"", "<unknown>"}));
}

TEST(TableColumnsTest, DefinitionsJson) {
  json defs = tableColumnDefinitions("Namespace");
  ASSERT_EQ(defs.size(), 3u);
  EXPECT_EQ(defs[0]["name"], "Name");
  EXPECT_EQ(defs[0]["type"], "string");
  EXPECT_EQ(defs[0]["format"], "name");
  EXPECT_EQ(defs[0]["priority"], 0);
  EXPECT_TRUE(defs[0]["description"].is_string());
  EXPECT_EQ(defs[1]["name"], "Status");
}

// ---- Pod

json pod(json status, json spec = json::object(), json meta = json::object()) {
  meta["name"] = "web-1";
  meta["creationTimestamp"] = "2024-01-02T02:04:05Z";  // 60m before kNow
  if (!spec.contains("containers")) spec["containers"] = {{{"name", "app"}}};
  return {{"metadata", meta}, {"spec", spec}, {"status", status}};
}

json containerStatus(json state, bool ready = false, int restarts = 0) {
  return {{"name", "app"}, {"ready", ready}, {"restartCount", restarts}, {"state", state}};
}

std::string podStatus(const json& p) { return tableCells("Pod", p, kNow)[2]; }

TEST(PodTableTest, Columns) {
  EXPECT_EQ(columnNames("Pod", 0),
            (std::vector<std::string>{"Name", "Ready", "Status", "Restarts", "Age"}));
  EXPECT_EQ(columnNames("Pod", 1),
            (std::vector<std::string>{"IP", "Node", "Nominated Node", "Readiness Gates"}));
}

TEST(PodTableTest, RunningPodFullRow) {
  json p = pod({{"phase", "Running"},
                {"podIP", "10.244.1.5"},
                {"podIPs", {{{"ip", "10.244.1.5"}}}},
                {"conditions", {{{"type", "Ready"}, {"status", "True"}}}},
                {"containerStatuses",
                 {containerStatus({{"running", {{"startedAt", "2024-01-02T02:05:00Z"}}}}, true)}}},
               {{"nodeName", "node-a"}, {"containers", {{{"name", "app"}}}}});
  EXPECT_EQ(tableCells("Pod", p, kNow), json::array({"web-1", "1/1", "Running", "0", "60m",
                                                     "10.244.1.5", "node-a", "<none>", "<none>"}));
}

TEST(PodTableTest, PendingAndWaitingReasons) {
  EXPECT_EQ(podStatus(pod({{"phase", "Pending"}})), "Pending");
  EXPECT_EQ(podStatus(pod({{"phase", "Pending"},
                           {"containerStatuses",
                            {containerStatus({{"waiting", {{"reason", "ContainerCreating"}}}})}}})),
            "ContainerCreating");
  EXPECT_EQ(podStatus(pod({{"phase", "Pending"},
                           {"containerStatuses",
                            {containerStatus({{"waiting", {{"reason", "ImagePullBackOff"}}}})}}})),
            "ImagePullBackOff");
  EXPECT_EQ(podStatus(pod({{"phase", "Pending"},
                           {"containerStatuses",
                            {containerStatus({{"waiting", {{"reason", "ErrImagePull"}}}})}}})),
            "ErrImagePull");
  EXPECT_EQ(
      podStatus(pod(
          {{"phase", "Pending"},
           {"conditions",
            {{{"type", "PodScheduled"}, {"status", "False"}, {"reason", "SchedulingGated"}}}}})),
      "SchedulingGated");
}

TEST(PodTableTest, CrashLoopBackOffWithRestartsAgo) {
  json cs = containerStatus({{"waiting", {{"reason", "CrashLoopBackOff"}}}}, false, 2);
  cs["lastState"] = {
      {"terminated",
       {{"exitCode", 1}, {"reason", "Error"}, {"finishedAt", "2024-01-02T02:59:05Z"}}}};
  auto cells = tableCells("Pod", pod({{"phase", "Running"}, {"containerStatuses", {cs}}}), kNow);
  EXPECT_EQ(cells[1], "0/1");
  EXPECT_EQ(cells[2], "CrashLoopBackOff");
  EXPECT_EQ(cells[3], "2 (5m ago)");
}

TEST(PodTableTest, RestartsWithoutTerminationTimeShowCountOnly) {
  json cs = containerStatus({{"running", json::object()}}, true, 3);
  EXPECT_EQ(tableCells("Pod", pod({{"phase", "Running"}, {"containerStatuses", {cs}}}), kNow)[3],
            "3");
}

TEST(PodTableTest, TerminatedReasons) {
  auto terminated = [](json t) {
    return podStatus(
        pod({{"phase", "Failed"}, {"containerStatuses", {containerStatus({{"terminated", t}})}}}));
  };
  EXPECT_EQ(terminated({{"exitCode", 0}, {"reason", "Completed"}}), "Completed");
  EXPECT_EQ(terminated({{"exitCode", 1}, {"reason", "Error"}}), "Error");
  EXPECT_EQ(terminated({{"exitCode", 137}, {"reason", "OOMKilled"}}), "OOMKilled");
  EXPECT_EQ(terminated({{"exitCode", 2}}), "ExitCode:2");
  EXPECT_EQ(terminated({{"exitCode", 0}, {"signal", 9}}), "Signal:9");
}

TEST(PodTableTest, CompletedButAnotherContainerRunning) {
  json status = {{"phase", "Running"},
                 {"containerStatuses",
                  {containerStatus({{"running", json::object()}}, true),
                   containerStatus({{"terminated", {{"exitCode", 0}, {"reason", "Completed"}}}})}}};
  json spec = {{"containers", {{{"name", "a"}}, {{"name", "b"}}}}};
  EXPECT_EQ(podStatus(pod(status, spec)), "NotReady");
  status["conditions"] = {{{"type", "Ready"}, {"status", "True"}}};
  auto cells = tableCells("Pod", pod(status, spec), kNow);
  EXPECT_EQ(cells[2], "Running");
  EXPECT_EQ(cells[1], "1/2");
}

TEST(PodTableTest, InitContainers) {
  json spec = {{"initContainers", {{{"name", "init-a"}}, {{"name", "init-b"}}}},
               {"containers", {{{"name", "app"}}}}};
  auto initStatus = [](const std::string& name, json state) {
    return json{{"name", name}, {"ready", false}, {"restartCount", 0}, {"state", state}};
  };
  json waiting = {{"waiting", {{"reason", "PodInitializing"}}}};
  EXPECT_EQ(
      podStatus(pod(
          {{"phase", "Pending"},
           {"initContainerStatuses",
            {initStatus("init-a", {{"running", json::object()}}), initStatus("init-b", waiting)}}},
          spec)),
      "Init:0/2");
  EXPECT_EQ(podStatus(pod({{"phase", "Pending"},
                           {"initContainerStatuses",
                            {initStatus("init-a", {{"terminated", {{"exitCode", 0}}}}),
                             initStatus("init-b", {{"running", json::object()}})}}},
                          spec)),
            "Init:1/2");
  EXPECT_EQ(
      podStatus(
          pod({{"phase", "Pending"},
               {"initContainerStatuses",
                {initStatus("init-a", {{"terminated", {{"exitCode", 1}, {"reason", "Error"}}}})}}},
              spec)),
      "Init:Error");
  EXPECT_EQ(
      podStatus(pod({{"phase", "Pending"},
                     {"initContainerStatuses",
                      {initStatus("init-a", {{"waiting", {{"reason", "CrashLoopBackOff"}}}})}}},
                    spec)),
      "Init:CrashLoopBackOff");
  // All init containers done, app container still being created.
  EXPECT_EQ(podStatus(pod({{"phase", "Pending"},
                           {"initContainerStatuses",
                            {initStatus("init-a", {{"terminated", {{"exitCode", 0}}}}),
                             initStatus("init-b", {{"terminated", {{"exitCode", 0}}}})}},
                           {"containerStatuses",
                            {containerStatus({{"waiting", {{"reason", "PodInitializing"}}}})}}},
                          spec)),
            "PodInitializing");
}

TEST(PodTableTest, SidecarInitContainerCountsAsContainer) {
  json spec = {{"initContainers", {{{"name", "proxy"}, {"restartPolicy", "Always"}}}},
               {"containers", {{{"name", "app"}}}}};
  json status = {
      {"phase", "Running"},
      {"conditions",
       {{{"type", "Initialized"}, {"status", "True"}}, {{"type", "Ready"}, {"status", "True"}}}},
      {"initContainerStatuses",
       {{{"name", "proxy"},
         {"ready", true},
         {"started", true},
         {"restartCount", 1},
         {"state", {{"running", json::object()}}}}}},
      {"containerStatuses", {containerStatus({{"running", json::object()}}, true)}}};
  auto cells = tableCells("Pod", pod(status, spec), kNow);
  EXPECT_EQ(cells[1], "2/2");
  EXPECT_EQ(cells[2], "Running");
  EXPECT_EQ(cells[3], "1");
}

TEST(PodTableTest, TerminatingAndNodeLost) {
  json meta = {{"deletionTimestamp", "2024-01-02T03:04:00Z"}};
  EXPECT_EQ(podStatus(pod({{"phase", "Running"}}, json::object(), meta)), "Terminating");
  EXPECT_EQ(podStatus(pod({{"phase", "Succeeded"}}, json::object(), meta)), "Succeeded");
  EXPECT_EQ(podStatus(pod({{"phase", "Running"}, {"reason", "NodeLost"}}, json::object(), meta)),
            "Unknown");
  EXPECT_EQ(podStatus(pod({{"phase", "Failed"}, {"reason", "Evicted"}})), "Evicted");
}

TEST(PodTableTest, ReadinessGatesAndNominatedNode) {
  json spec = {{"containers", {{{"name", "app"}}}},
               {"readinessGates",
                {{{"conditionType", "example.com/lb"}}, {{"conditionType", "example.com/dns"}}}}};
  json status = {{"phase", "Pending"},
                 {"nominatedNodeName", "node-b"},
                 {"conditions",
                  {{{"type", "example.com/lb"}, {"status", "True"}},
                   {{"type", "example.com/dns"}, {"status", "False"}}}}};
  auto cells = tableCells("Pod", pod(status, spec), kNow);
  EXPECT_EQ(cells[5], "<none>");
  EXPECT_EQ(cells[6], "<none>");
  EXPECT_EQ(cells[7], "node-b");
  EXPECT_EQ(cells[8], "1/2");
}

// ---- workloads

TEST(WorkloadTableTest, Deployment) {
  EXPECT_EQ(columnNames("Deployment", 0),
            (std::vector<std::string>{"Name", "Ready", "Up-to-date", "Available", "Age"}));
  EXPECT_EQ(columnNames("Deployment", 1),
            (std::vector<std::string>{"Containers", "Images", "Selector"}));
  json d = {
      {"metadata", {{"name", "web"}, {"creationTimestamp", "2024-01-01T03:04:05Z"}}},
      {"spec",
       {{"replicas", 3},
        {"selector",
         {{"matchLabels", {{"app", "web"}}},
          {"matchExpressions", {{{"key", "tier"}, {"operator", "In"}, {"values", {"b", "a"}}}}}}},
        {"template",
         {{"spec",
           {{"containers",
             {{{"name", "nginx"}, {"image", "nginx:1.25"}},
              {{"name", "side"}, {"image", "busybox"}}}}}}}}}},
      {"status", {{"readyReplicas", 2}, {"updatedReplicas", 3}, {"availableReplicas", 2}}}};
  EXPECT_EQ(tableCells("Deployment", d, kNow),
            json::array({"web", "2/3", 3, 2, "24h", "nginx,side", "nginx:1.25,busybox",
                         "app=web,tier in (a,b)"}));
}

TEST(WorkloadTableTest, ReplicaSet) {
  EXPECT_EQ(columnNames("ReplicaSet", 0),
            (std::vector<std::string>{"Name", "Desired", "Current", "Ready", "Age"}));
  json rs = {{"metadata", {{"name", "web-abc"}, {"creationTimestamp", "2024-01-02T03:04:00Z"}}},
             {"spec",
              {{"replicas", 2},
               {"selector", {{"matchLabels", {{"pod-template-hash", "abc"}, {"app", "web"}}}}},
               {"template", {{"spec", {{"containers", {{{"name", "c"}, {"image", "i"}}}}}}}}}},
             {"status", {{"replicas", 2}, {"readyReplicas", 1}}}};
  EXPECT_EQ(tableCells("ReplicaSet", rs, kNow),
            json::array({"web-abc", 2, 2, 1, "5s", "c", "i", "app=web,pod-template-hash=abc"}));
}

TEST(WorkloadTableTest, Job) {
  EXPECT_EQ(columnNames("Job", 0),
            (std::vector<std::string>{"Name", "Status", "Completions", "Duration", "Age"}));
  json job = {
      {"metadata", {{"name", "pi"}, {"creationTimestamp", "2024-01-02T03:00:05Z"}}},
      {"spec", {{"completions", 3}, {"template", {{"spec", {{"containers", json::array()}}}}}}},
      {"status", {{"succeeded", 1}, {"startTime", "2024-01-02T03:00:05Z"}}}};
  EXPECT_EQ(tableCells("Job", job, kNow),
            json::array({"pi", "Running", "1/3", "4m", "4m", "", "", "<none>"}));
  job["status"]["succeeded"] = 3;
  job["status"]["completionTime"] = "2024-01-02T03:01:05Z";
  job["status"]["conditions"] = {{{"type", "Complete"}, {"status", "True"}}};
  auto cells = tableCells("Job", job, kNow);
  EXPECT_EQ(cells[1], "Complete");
  EXPECT_EQ(cells[2], "3/3");
  EXPECT_EQ(cells[3], "60s");
  json parallel = {{"metadata", {{"name", "p"}}},
                   {"spec", {{"parallelism", 4}}},
                   {"status", {{"conditions", {{{"type", "Failed"}, {"status", "True"}}}}}}};
  cells = tableCells("Job", parallel, kNow);
  EXPECT_EQ(cells[1], "Failed");
  EXPECT_EQ(cells[2], "0/1 of 4");
  EXPECT_EQ(cells[3], "");
}

TEST(WorkloadTableTest, CronJob) {
  EXPECT_EQ(columnNames("CronJob", 0),
            (std::vector<std::string>{"Name", "Schedule", "Timezone", "Suspend", "Active",
                                      "Last Schedule", "Age"}));
  json cj = {
      {"metadata", {{"name", "backup"}, {"creationTimestamp", "2024-01-01T03:04:05Z"}}},
      {"spec",
       {{"schedule", "*/5 * * * *"},
        {"suspend", false},
        {"jobTemplate",
         {{"spec",
           {{"template",
             {{"spec", {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}}}}}}}}},
      {"status",
       {{"active", {{{"name", "backup-1"}}}}, {"lastScheduleTime", "2024-01-02T03:00:05Z"}}}};
  EXPECT_EQ(tableCells("CronJob", cj, kNow),
            json::array({"backup", "*/5 * * * *", "<none>", "False", 1, "4m", "24h", "c", "busybox",
                         "<none>"}));
  json bare = {{"metadata", {{"name", "x"}}}, {"spec", {{"timeZone", "Etc/UTC"}}}};
  auto cells = tableCells("CronJob", bare, kNow);
  EXPECT_EQ(cells[2], "Etc/UTC");
  EXPECT_EQ(cells[3], "<unset>");
  EXPECT_EQ(cells[5], "<none>");
}

// ---- services and networking

json service(json spec, json status = json::object()) {
  return {{"metadata", {{"name", "svc"}, {"creationTimestamp", "2024-01-02T03:04:05Z"}}},
          {"spec", spec},
          {"status", status}};
}

TEST(ServiceTableTest, ClusterIPAndNodePort) {
  EXPECT_EQ(columnNames("Service", 0), (std::vector<std::string>{"Name", "Type", "Cluster-IP",
                                                                 "External-IP", "Port(s)", "Age"}));
  EXPECT_EQ(columnNames("Service", 1), (std::vector<std::string>{"Selector"}));
  EXPECT_EQ(
      tableCells(
          "Service",
          service({{"type", "ClusterIP"},
                   {"clusterIP", "10.96.0.10"},
                   {"clusterIPs", {"10.96.0.10"}},
                   {"ports",
                    {{{"port", 80}, {"protocol", "TCP"}}, {{"port", 53}, {"protocol", "UDP"}}}},
                   {"selector", {{"app", "web"}, {"tier", "fe"}}}}),
          kNow),
      json::array(
          {"svc", "ClusterIP", "10.96.0.10", "<none>", "80/TCP,53/UDP", "0s", "app=web,tier=fe"}));
  EXPECT_EQ(
      tableCells("Service",
                 service({{"type", "NodePort"},
                          {"clusterIPs", {"10.96.0.11"}},
                          {"externalIPs", {"192.0.2.1"}},
                          {"ports", {{{"port", 80}, {"nodePort", 30080}, {"protocol", "TCP"}}}}}),
                 kNow),
      json::array({"svc", "NodePort", "10.96.0.11", "192.0.2.1", "80:30080/TCP", "0s", "<none>"}));
}

TEST(ServiceTableTest, LoadBalancerHeadlessAndExternalName) {
  auto lb = service({{"type", "LoadBalancer"}, {"clusterIP", "10.96.0.12"}});
  EXPECT_EQ(tableCells("Service", lb, kNow)[3], "<pending>");
  lb["status"] = {
      {"loadBalancer", {{"ingress", {{{"ip", "203.0.113.9"}}, {{"hostname", "lb.x"}}}}}}};
  EXPECT_EQ(tableCells("Service", lb, kNow)[3], "203.0.113.9,lb.x");
  auto headless = service({{"type", "ClusterIP"}, {"clusterIP", "None"}, {"clusterIPs", {"None"}}});
  EXPECT_EQ(tableCells("Service", headless, kNow)[2], "None");
  EXPECT_EQ(tableCells("Service", headless, kNow)[4], "<none>");
  auto ext = service({{"type", "ExternalName"}, {"externalName", "example.com"}});
  EXPECT_EQ(tableCells("Service", ext, kNow)[2], "<none>");
  EXPECT_EQ(tableCells("Service", ext, kNow)[3], "example.com");
}

TEST(NetworkTableTest, Endpoints) {
  json ep = {{"metadata", {{"name", "web"}}},
             {"subsets",
              {{{"addresses", {{{"ip", "10.0.0.1"}}, {{"ip", "10.0.0.2"}}}},
                {"ports", {{{"port", 80}}, {{"port", 443}}}}},
               {{"addresses", {{{"ip", "fd00::1"}}}}, {"ports", {{{"port", 8080}}}}}}}};
  EXPECT_EQ(tableCells("Endpoints", ep, kNow),
            json::array({"web", "10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 2 more...", "<unknown>"}));
  json small = {{"metadata", {{"name", "one"}}},
                {"subsets", {{{"addresses", {{{"ip", "fd00::1"}}}}, {"ports", {{{"port", 80}}}}}}}};
  EXPECT_EQ(tableCells("Endpoints", small, kNow)[1], "[fd00::1]:80");
  json headless = {{"metadata", {{"name", "h"}}},
                   {"subsets", {{{"addresses", {{{"ip", "10.0.0.1"}}}}}}}};
  EXPECT_EQ(tableCells("Endpoints", headless, kNow)[1], "10.0.0.1");
  EXPECT_EQ(tableCells("Endpoints", {{"metadata", {{"name", "e"}}}}, kNow)[1], "<none>");
}

TEST(NetworkTableTest, EndpointSlice) {
  EXPECT_EQ(columnNames("EndpointSlice", 0),
            (std::vector<std::string>{"Name", "AddressType", "Ports", "Endpoints", "Age"}));
  json slice = {{"metadata", {{"name", "web-x1"}}},
                {"addressType", "IPv4"},
                {"ports", {{{"port", 80}, {"name", "http"}}, {{"name", "metrics"}}}},
                {"endpoints",
                 {{{"addresses", {"10.0.0.1"}}},
                  {{"addresses", {"10.0.0.2"}}},
                  {{"addresses", {"10.0.0.3"}}},
                  {{"addresses", {"10.0.0.4"}}}}}};
  EXPECT_EQ(tableCells("EndpointSlice", slice, kNow),
            json::array({"web-x1", "IPv4", "80,metrics", "10.0.0.1,10.0.0.2,10.0.0.3 + 1 more...",
                         "<unknown>"}));
  json empty = {{"metadata", {{"name", "e"}}}, {"addressType", "IPv4"}};
  EXPECT_EQ(tableCells("EndpointSlice", empty, kNow)[2], "<unset>");
  EXPECT_EQ(tableCells("EndpointSlice", empty, kNow)[3], "<unset>");
}

TEST(NetworkTableTest, Dns) {
  EXPECT_EQ(columnNames("Dns", 0), (std::vector<std::string>{"Name", "Host", "Paths", "Age"}));
  json dns = {{"metadata", {{"name", "app"}}},
              {"spec",
               {{"host", "app.example.com"},
                {"paths",
                 {{{"path", "/a"}, {"serviceName", "svc-a"}, {"servicePort", 80}},
                  {{"path", "/b"}, {"serviceName", "svc-b"}, {"servicePort", 8080}}}}}}};
  EXPECT_EQ(tableCells("Dns", dns, kNow),
            json::array({"app", "app.example.com", "/a->svc-a:80,/b->svc-b:8080", "<unknown>"}));
}

// ---- cluster objects

TEST(ClusterTableTest, Node) {
  EXPECT_EQ(columnNames("Node", 0),
            (std::vector<std::string>{"Name", "Status", "Roles", "Age", "Version"}));
  EXPECT_EQ(columnNames("Node", 1),
            (std::vector<std::string>{"Internal-IP", "External-IP", "OS-Image", "Kernel-Version",
                                      "Container-Runtime"}));
  json node = {{"metadata",
                {{"name", "n1"},
                 {"creationTimestamp", "2023-12-30T03:04:05Z"},
                 {"labels",
                  {{"node-role.kubernetes.io/worker", ""},
                   {"node-role.kubernetes.io/control-plane", ""},
                   {"kubernetes.io/role", "edge"}}}}},
               {"spec", {{"unschedulable", true}}},
               {"status",
                {{"conditions",
                  {{{"type", "MemoryPressure"}, {"status", "False"}},
                   {{"type", "Ready"}, {"status", "True"}}}},
                 {"addresses",
                  {{{"type", "InternalIP"}, {"address", "192.168.50.2"}},
                   {{"type", "Hostname"}, {"address", "n1"}}}},
                 {"nodeInfo",
                  {{"kubeletVersion", "v1.32.0-minik8s"},
                   {"osImage", "Debian GNU/Linux 12"},
                   {"kernelVersion", "6.1.0"}}}}}};
  EXPECT_EQ(tableCells("Node", node, kNow),
            json::array({"n1", "Ready,SchedulingDisabled", "control-plane,edge,worker", "3d",
                         "v1.32.0-minik8s", "192.168.50.2", "<none>", "Debian GNU/Linux 12",
                         "6.1.0", "<unknown>"}));
  json bare = {{"metadata", {{"name", "n2"}}},
               {"status", {{"conditions", {{{"type", "Ready"}, {"status", "Unknown"}}}}}}};
  auto cells = tableCells("Node", bare, kNow);
  EXPECT_EQ(cells[1], "NotReady");
  EXPECT_EQ(cells[2], "<none>");
  EXPECT_EQ(tableCells("Node", {{"metadata", {{"name", "n3"}}}}, kNow)[1], "Unknown");
}

TEST(ClusterTableTest, NamespaceConfigMapSecretServiceAccountLease) {
  json ns = {{"metadata", {{"name", "prod"}, {"creationTimestamp", "2024-01-02T03:03:05Z"}}},
             {"status", {{"phase", "Active"}}}};
  EXPECT_EQ(tableCells("Namespace", ns, kNow), json::array({"prod", "Active", "60s"}));

  EXPECT_EQ(columnNames("ConfigMap", 0), (std::vector<std::string>{"Name", "Data", "Age"}));
  json cm = {{"metadata", {{"name", "cfg"}}},
             {"data", {{"a", "1"}, {"b", "2"}}},
             {"binaryData", {{"c", "AA=="}}}};
  EXPECT_EQ(tableCells("ConfigMap", cm, kNow), json::array({"cfg", 3, "<unknown>"}));

  EXPECT_EQ(columnNames("Secret", 0), (std::vector<std::string>{"Name", "Type", "Data", "Age"}));
  json secret = {{"metadata", {{"name", "tls"}}},
                 {"type", "kubernetes.io/tls"},
                 {"data", {{"tls.crt", "eA=="}, {"tls.key", "eA=="}}}};
  EXPECT_EQ(tableCells("Secret", secret, kNow),
            json::array({"tls", "kubernetes.io/tls", 2, "<unknown>"}));
  EXPECT_EQ(tableCells("Secret", {{"metadata", {{"name", "s"}}}}, kNow)[1], "Opaque");

  json sa = {{"metadata", {{"name", "default"}}}, {"secrets", {{{"name", "default-token"}}}}};
  EXPECT_EQ(tableCells("ServiceAccount", sa, kNow), json::array({"default", 1, "<unknown>"}));
  EXPECT_EQ(tableCells("ServiceAccount", {{"metadata", {{"name", "x"}}}}, kNow)[1], 0);

  json lease = {{"metadata", {{"name", "kube-scheduler"}}},
                {"spec", {{"holderIdentity", "server-1_abc"}}}};
  EXPECT_EQ(tableCells("Lease", lease, kNow),
            json::array({"kube-scheduler", "server-1_abc", "<unknown>"}));
  EXPECT_EQ(tableCells("Lease", {{"metadata", {{"name", "l"}}}}, kNow)[1], "");
}

TEST(ClusterTableTest, Event) {
  EXPECT_EQ(columnNames("Event", 0),
            (std::vector<std::string>{"Last Seen", "Type", "Reason", "Object", "Message"}));
  EXPECT_EQ(columnNames("Event", 1),
            (std::vector<std::string>{"Subobject", "Source", "First Seen", "Count", "Name"}));
  json ev = {{"metadata", {{"name", "web-1.17a"}}},
             {"type", "Normal"},
             {"reason", "Pulled"},
             {"message", "  Container image pulled\n"},
             {"involvedObject",
              {{"kind", "Pod"}, {"name", "web-1"}, {"fieldPath", "spec.containers{app}"}}},
             {"source", {{"component", "kubelet"}, {"host", "n1"}}},
             {"firstTimestamp", "2024-01-02T02:04:05Z"},
             {"lastTimestamp", "2024-01-02T03:02:05Z"},
             {"count", 4}};
  EXPECT_EQ(tableCells("Event", ev, kNow),
            json::array({"2m", "Normal", "Pulled", "pod/web-1", "spec.containers{app}",
                         "kubelet, n1", "Container image pulled", "60m", 4, "web-1.17a"}));
  json fresh = {{"metadata", {{"name", "e"}}},
                {"involvedObject", {{"kind", "Node"}}},
                {"eventTime", "2024-01-02T03:04:00.123456Z"},
                {"reportingComponent", "scheduler"}};
  auto cells = tableCells("Event", fresh, kNow);
  EXPECT_EQ(cells[0], "5s");
  EXPECT_EQ(cells[3], "node");
  EXPECT_EQ(cells[5], "scheduler");
  EXPECT_EQ(cells[8], 1);
}

TEST(ClusterTableTest, RoleBinding) {
  json rb = {{"metadata", {{"name", "rb"}}},
             {"roleRef", {{"kind", "ClusterRole"}, {"name", "view"}}},
             {"subjects",
              {{{"kind", "User"}, {"name", "alice"}},
               {{"kind", "ServiceAccount"}, {"name", "sa1"}, {"namespace", "ns"}},
               {{"kind", "User"}, {"name", "bob"}}}}};
  EXPECT_EQ(tableCells("RoleBinding", rb, kNow),
            json::array({"rb", "ClusterRole/view", "<unknown>", "alice, bob", "", "ns:sa1"}));
}

// ---- HPA

json hpa(json spec, json status = json::object()) {
  spec["scaleTargetRef"] = {{"kind", "Deployment"}, {"name", "web"}, {"apiVersion", "apps/v1"}};
  return {{"metadata", {{"name", "web"}}}, {"spec", spec}, {"status", status}};
}

TEST(HpaTableTest, Columns) {
  EXPECT_EQ(columnNames("HorizontalPodAutoscaler", 0),
            (std::vector<std::string>{"Name", "Reference", "Targets", "MinPods", "MaxPods",
                                      "Replicas", "Age"}));
}

TEST(HpaTableTest, V2Metrics) {
  json spec = {
      {"minReplicas", 2},
      {"maxReplicas", 5},
      {"metrics",
       {{{"type", "Resource"},
         {"resource",
          {{"name", "cpu"}, {"target", {{"type", "Utilization"}, {"averageUtilization", 50}}}}}}}}};
  EXPECT_EQ(tableCells("HorizontalPodAutoscaler", hpa(spec), kNow),
            json::array({"web", "Deployment/web", "cpu: <unknown>/50%", "2", 5, 0, "<unknown>"}));
  json status = {{"currentReplicas", 3},
                 {"currentMetrics",
                  {{{"type", "Resource"},
                    {"resource", {{"name", "cpu"}, {"current", {{"averageUtilization", 30}}}}}}}}};
  EXPECT_EQ(tableCells("HorizontalPodAutoscaler", hpa(spec, status), kNow)[2], "cpu: 30%/50%");
  EXPECT_EQ(tableCells("HorizontalPodAutoscaler", hpa(spec, status), kNow)[5], 3);

  json many = {
      {"maxReplicas", 4},
      {"metrics",
       {{{"type", "Resource"},
         {"resource",
          {{"name", "memory"}, {"target", {{"type", "AverageValue"}, {"averageValue", "500Mi"}}}}}},
        {{"type", "Pods"},
         {"pods",
          {{"metric", {{"name", "qps"}}},
           {"target", {{"type", "AverageValue"}, {"averageValue", "10"}}}}}},
        {{"type", "Resource"},
         {"resource", {{"name", "cpu"}, {"target", {{"type", "Utilization"}}}}}}}}};
  auto cells = tableCells("HorizontalPodAutoscaler", hpa(many), kNow);
  EXPECT_EQ(cells[2], "memory: <unknown>/500Mi, <unknown>/10 + 1 more...");
  EXPECT_EQ(cells[3], "<unset>");
  EXPECT_EQ(tableCells("HorizontalPodAutoscaler", hpa({{"maxReplicas", 3}}), kNow)[2], "<none>");
}

TEST(HpaTableTest, V1CpuTarget) {
  json spec = {{"minReplicas", 1}, {"maxReplicas", 10}, {"targetCPUUtilizationPercentage", 80}};
  EXPECT_EQ(tableCells("HorizontalPodAutoscaler", hpa(spec), kNow)[2], "cpu: <unknown>/80%");
  EXPECT_EQ(tableCells("HorizontalPodAutoscaler",
                       hpa(spec, {{"currentCPUUtilizationPercentage", 12}}), kNow)[2],
            "cpu: 12%/80%");
}

TEST(TableCellsTest, EveryPrinterMatchesItsColumnCountEvenOnEmptyObjects) {
  for (const char* kind : {"Pod",
                           "Deployment",
                           "ReplicaSet",
                           "Job",
                           "CronJob",
                           "Service",
                           "Endpoints",
                           "EndpointSlice",
                           "Ingress",
                           "Dns",
                           "Node",
                           "Namespace",
                           "Event",
                           "ConfigMap",
                           "Secret",
                           "ServiceAccount",
                           "HorizontalPodAutoscaler",
                           "Lease",
                           "RoleBinding",
                           "ClusterRoleBinding",
                           "Unknown"}) {
    for (const json& obj : {json::object(), json::array(), json("x"),
                            json{{"metadata", 3}, {"spec", "x"}, {"status", {1, 2}}}}) {
      EXPECT_EQ(tableCells(kind, obj, kNow).size(), tableColumns(kind).size()) << kind;
    }
  }
}

}  // namespace
}  // namespace minik8s::api
