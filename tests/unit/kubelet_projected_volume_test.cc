// The kubelet's service-account pieces: projected volumes (token, configMap, secret,
// downwardAPI), the plain downwardAPI volume, token refresh, and service environment variables.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "apiserver/auth/service_account_admission.h"
#include "fake_clock.h"
#include "kubelet/env_resolver.h"
#include "kubelet/token_manager.h"
#include "kubelet/volume_manager.h"
#include "kubelet_fake_objects.h"
#include "read_file.h"

namespace minik8s::kubelet {
namespace {

using namespace std::chrono_literals;
using testing::FakeClock;
using testing::MapObjects;

using testing::readFile;

int modeOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return -1;
  return static_cast<int>(st.st_mode & 0777);
}

// Hands out "token-1", "token-2", ... and records what was asked.
class FakeTokenRequester : public TokenRequester {
 public:
  Result<IssuedPodToken> requestToken(const TokenRequestSpec& spec) override {
    requests.push_back(spec);
    if (fail) return Status::Unavailable("api server down");
    return IssuedPodToken{"token-" + std::to_string(requests.size()),
                          grantedSeconds ? grantedSeconds : spec.expirationSeconds};
  }
  std::vector<TokenRequestSpec> requests;
  bool fail = false;
  int64_t grantedSeconds = 0;
};

json admittedPod() {
  json pod = json::parse(R"J({
    "metadata": {"name": "web", "namespace": "team", "uid": "uid-7",
                 "labels": {"app": "web", "tier": "a\"b"},
                 "annotations": {"note": "line1\nline2"}},
    "spec": {"serviceAccountName": "builder",
             "containers": [{"name": "app", "image": "busybox",
                             "resources": {"limits": {"memory": "64Mi", "cpu": "250m"}}}]}})J");
  pod["spec"]["volumes"] = json::array({apiserver::auth::apiAccessVolume("kube-api-access-abcde")});
  return pod;
}

class ProjectedVolumeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root = ::testing::TempDir() + "kubelet-projected-" + std::to_string(::getpid());
    std::filesystem::remove_all(root);
    objects.configMaps["team/kube-root-ca.crt"] = {{"ca.crt", "CA PEM"}};
  }
  void TearDown() override { std::filesystem::remove_all(root); }

  std::string root;
  FakeClock clock;
  MapObjects objects;
  FakeTokenRequester requester;
  TokenManager tokens{requester, clock};
};

TEST_F(ProjectedVolumeTest, ApiAccessVolumeHoldsTokenCaAndNamespace) {
  VolumeManager vm(root, objects, clock, 60s, &tokens);
  json pod = admittedPod();
  auto paths = vm.setUpPod(pod);
  ASSERT_TRUE(paths.ok()) << paths.status().toString();
  const std::string dir = (*paths)["kube-api-access-abcde"].path;
  EXPECT_EQ(dir, root + "/pods/uid-7/volumes/kubernetes.io~projected/kube-api-access-abcde");
  EXPECT_EQ(readFile(dir + "/token"), "token-1");
  EXPECT_EQ(readFile(dir + "/ca.crt"), "CA PEM");
  EXPECT_EQ(readFile(dir + "/namespace"), "team");
  EXPECT_EQ(modeOf(dir + "/token"), 0644);  // defaultMode 420
  ASSERT_EQ(requester.requests.size(), 1u);
  const TokenRequestSpec& asked = requester.requests[0];
  EXPECT_EQ(asked.namespaceName, "team");
  EXPECT_EQ(asked.serviceAccountName, "builder");
  EXPECT_EQ(asked.podName, "web");
  EXPECT_EQ(asked.podUid, "uid-7");
  EXPECT_EQ(asked.audience, "");
  EXPECT_EQ(asked.expirationSeconds, 3607);
  // No stray temp files.
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 3);
}

TEST_F(ProjectedVolumeTest, TokenIsRenewedAtEightyPercentOfItsLifetime) {
  VolumeManager vm(root, objects, clock, 60s, &tokens);
  json pod = admittedPod();
  auto paths = vm.setUpPod(pod);
  ASSERT_TRUE(paths.ok());
  const std::string token = (*paths)["kube-api-access-abcde"].path + "/token";
  // 80% of 3607 s is 2885.6 s.
  clock.advance(2885s);
  ASSERT_TRUE(vm.setUpPod(pod).ok());
  EXPECT_EQ(readFile(token), "token-1");
  EXPECT_EQ(requester.requests.size(), 1u);
  clock.advance(61s);
  ASSERT_TRUE(vm.setUpPod(pod).ok());
  EXPECT_EQ(readFile(token), "token-2");
  EXPECT_EQ(requester.requests.size(), 2u);

  // Tear-down forgets the pod's tokens.
  EXPECT_EQ(tokens.cachedTokens(), 1u);
  ASSERT_TRUE(vm.tearDownPod("uid-7").ok());
  EXPECT_EQ(tokens.cachedTokens(), 0u);
}

TEST_F(ProjectedVolumeTest, TokenManagerRenewsDailyAndServesOldTokenWhileServerIsDown) {
  TokenRequestSpec spec{"team", "builder", "web", "uid-7", "vault", 7 * 24 * 3600};
  ASSERT_EQ(*tokens.token(spec), "token-1");
  clock.advance(23h);
  EXPECT_EQ(*tokens.token(spec), "token-1");
  clock.advance(2h);  // older than 24 h
  requester.fail = true;
  EXPECT_EQ(*tokens.token(spec), "token-1");  // still valid: served while the server is down
  requester.fail = false;
  EXPECT_EQ(*tokens.token(spec), "token-3");
  // Different audience: a different token.
  spec.audience = "other";
  EXPECT_EQ(*tokens.token(spec), "token-4");

  // The server shortened the lifetime: renewal follows what it granted.
  requester.grantedSeconds = 1000;
  TokenRequestSpec shortSpec{"team", "builder", "web", "uid-8", "", 100000};
  ASSERT_EQ(*tokens.token(shortSpec), "token-5");
  clock.advance(801s);
  EXPECT_EQ(*tokens.token(shortSpec), "token-6");
  // Expired and the server down: an error.
  requester.fail = true;
  clock.advance(1001s);
  EXPECT_FALSE(tokens.token(shortSpec).ok());
}

TEST_F(ProjectedVolumeTest, TokenRequestBodyIsBoundToThePod) {
  json body = tokenRequestBody({"team", "builder", "web", "uid-7", "vault", 600});
  EXPECT_EQ(body["apiVersion"], "authentication.k8s.io/v1");
  EXPECT_EQ(body["kind"], "TokenRequest");
  EXPECT_EQ(body["spec"]["audiences"], json::array({"vault"}));
  EXPECT_EQ(body["spec"]["expirationSeconds"], 600);
  EXPECT_EQ(body["spec"]["boundObjectRef"],
            json({{"apiVersion", "v1"}, {"kind", "Pod"}, {"name", "web"}, {"uid", "uid-7"}}));
  EXPECT_EQ(tokenRequestBody({"team", "b", "web", "u", "", 600})["spec"]["audiences"],
            json::array());
}

TEST_F(ProjectedVolumeTest, AnOptionalSourceThatCannotBeReadKeepsThePodWaiting) {
  objects.failReads = true;
  json pod = admittedPod();
  pod["spec"]["volumes"] = json::parse(R"J([{"name": "all", "projected": {"sources": [
      {"configMap": {"name": "cfg", "optional": true}}]}}])J");
  VolumeManager vm(root, objects, clock, 60s, &tokens);
  auto paths = vm.setUpPod(pod);
  ASSERT_FALSE(paths.ok());
  EXPECT_EQ(paths.status().message(),
            "configmap \"cfg\" could not be read: cannot connect to the API server");
  objects.failReads = false;
  EXPECT_TRUE(vm.setUpPod(pod).ok());
}

TEST_F(ProjectedVolumeTest, SourcesWithItemsModesAndDownwardApiFields) {
  objects.secrets["team/creds"] = {{"user", "admin"}, {"pass", "s3cret"}};
  objects.configMaps["team/cfg"] = {{"a", "1"}, {"b", "2"}};
  json pod = admittedPod();
  pod["spec"]["volumes"] = json::parse(R"J([{"name": "all", "projected": {
      "defaultMode": 288,
      "sources": [
        {"secret": {"name": "creds", "items": [{"key": "pass", "path": "db/password",
                                                "mode": 256}]}},
        {"configMap": {"name": "cfg"}},
        {"configMap": {"name": "missing", "optional": true}},
        {"downwardAPI": {"items": [
          {"path": "name", "fieldRef": {"fieldPath": "metadata.name"}},
          {"path": "uid", "fieldRef": {"fieldPath": "metadata.uid"}},
          {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
          {"path": "annotations", "fieldRef": {"fieldPath": "metadata.annotations"}},
          {"path": "app", "fieldRef": {"fieldPath": "metadata.labels['app']"}},
          {"path": "mem", "resourceFieldRef": {"containerName": "app",
                                               "resource": "limits.memory",
                                               "divisor": "1Mi"}}]}},
        {"serviceAccountToken": {"audience": "vault", "expirationSeconds": 7200,
                                 "path": "vault/token"}}
      ]}}])J");
  VolumeManager vm(root, objects, clock, 60s, &tokens);
  auto paths = vm.setUpPod(pod);
  ASSERT_TRUE(paths.ok()) << paths.status().toString();
  const std::string dir = (*paths)["all"].path;
  EXPECT_EQ(readFile(dir + "/db/password"), "s3cret");
  EXPECT_EQ(modeOf(dir + "/db/password"), 0400);
  EXPECT_FALSE(std::filesystem::exists(dir + "/user"));
  EXPECT_EQ(readFile(dir + "/a"), "1");
  EXPECT_EQ(modeOf(dir + "/a"), 0440);
  EXPECT_EQ(readFile(dir + "/name"), "web");
  EXPECT_EQ(readFile(dir + "/uid"), "uid-7");
  EXPECT_EQ(readFile(dir + "/labels"), "app=\"web\"\ntier=\"a\\\"b\"");
  EXPECT_EQ(readFile(dir + "/annotations"), "note=\"line1\\nline2\"");
  EXPECT_EQ(readFile(dir + "/app"), "web");
  EXPECT_EQ(readFile(dir + "/mem"), "64");
  EXPECT_EQ(readFile(dir + "/vault/token"), "token-1");
  EXPECT_EQ(requester.requests.at(0).audience, "vault");
  EXPECT_EQ(requester.requests.at(0).expirationSeconds, 7200);

  // A label changes: the file follows after the refresh interval.
  pod["metadata"]["labels"]["app"] = "api";
  clock.advance(61s);
  ASSERT_TRUE(vm.setUpPod(pod).ok());
  EXPECT_EQ(readFile(dir + "/app"), "api");
}

TEST_F(ProjectedVolumeTest, FailuresAreReported) {
  json pod = admittedPod();
  // Without a token manager the token cannot be fetched.
  VolumeManager noTokens(root, objects, clock);
  EXPECT_FALSE(noTokens.setUpPod(pod).ok());

  VolumeManager vm(root, objects, clock, 60s, &tokens);
  requester.fail = true;
  auto r = vm.setUpPod(pod);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("failed to fetch token"), std::string::npos);
  requester.fail = false;

  objects.configMaps.erase("team/kube-root-ca.crt");
  json other = admittedPod();
  other["metadata"]["uid"] = "uid-8";
  r = vm.setUpPod(other);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "configmap \"kube-root-ca.crt\" not found");

  json escape = admittedPod();
  escape["metadata"]["uid"] = "uid-9";
  escape["spec"]["volumes"] = json::parse(
      R"J([{"name": "x", "projected": {"sources": [{"downwardAPI": {"items": [
          {"path": "../evil", "fieldRef": {"fieldPath": "metadata.name"}}]}}]}}])J");
  EXPECT_FALSE(vm.setUpPod(escape).ok());
}

TEST_F(ProjectedVolumeTest, PlainDownwardApiVolume) {
  json pod = admittedPod();
  pod["spec"]["volumes"] = json::parse(R"J([{"name": "info", "downwardAPI": {"items": [
      {"path": "ns", "fieldRef": {"fieldPath": "metadata.namespace"}},
      {"path": "cpu", "resourceFieldRef": {"containerName": "app", "resource": "limits.cpu",
                                           "divisor": "1m"}}]}}])J");
  VolumeManager vm(root, objects, clock);
  auto paths = vm.setUpPod(pod);
  ASSERT_TRUE(paths.ok()) << paths.status().toString();
  EXPECT_EQ((*paths)["info"].path, root + "/pods/uid-7/volumes/kubernetes.io~downward-api/info");
  EXPECT_EQ(readFile((*paths)["info"].path + "/ns"), "team");
  EXPECT_EQ(readFile((*paths)["info"].path + "/cpu"), "250");
  EXPECT_EQ(modeOf((*paths)["info"].path + "/ns"), 0644);
}

json service(const std::string& ns, const std::string& name, const std::string& ip, json ports) {
  return {{"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec", {{"clusterIP", ip}, {"ports", ports}}}};
}

class ServiceEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    objects.serviceObjects["default"] = {
        service("default", "kubernetes", "10.96.0.1",
                {{{"name", "https"}, {"port", 443}, {"protocol", "TCP"}}}),
        service("default", "other", "10.96.0.9", {{{"port", 1}}})};
    objects.serviceObjects["team"] = {
        service("team", "redis-master", "10.96.3.4",
                {{{"name", "redis"}, {"port", 6379}, {"protocol", "TCP"}},
                 {{"name", "metrics-udp"}, {"port", 9121}, {"protocol", "UDP"}}}),
        service("team", "headless", "None", {{{"port", 80}}}),
        service("team", "external", "", {{{"port", 80}}})};
  }
  std::map<std::string, std::string> envOf(const json& pod) {
    auto env = resolveEnv(pod, pod["spec"]["containers"][0], {}, objects);
    EXPECT_TRUE(env.ok()) << env.status().toString();
    std::map<std::string, std::string> out;
    if (env.ok()) {
      for (const auto& [k, v] : *env) out[k] = v;
    }
    return out;
  }
  MapObjects objects;
};

TEST_F(ServiceEnvTest, KubernetesServiceAndServiceLinks) {
  json pod = admittedPod();
  auto env = envOf(pod);
  std::map<std::string, std::string> want = {{"KUBERNETES_SERVICE_HOST", "10.96.0.1"},
                                             {"KUBERNETES_SERVICE_PORT", "443"},
                                             {"KUBERNETES_SERVICE_PORT_HTTPS", "443"},
                                             {"KUBERNETES_PORT", "tcp://10.96.0.1:443"},
                                             {"KUBERNETES_PORT_443_TCP", "tcp://10.96.0.1:443"},
                                             {"KUBERNETES_PORT_443_TCP_PROTO", "tcp"},
                                             {"KUBERNETES_PORT_443_TCP_PORT", "443"},
                                             {"KUBERNETES_PORT_443_TCP_ADDR", "10.96.0.1"},
                                             {"REDIS_MASTER_SERVICE_HOST", "10.96.3.4"},
                                             {"REDIS_MASTER_SERVICE_PORT", "6379"},
                                             {"REDIS_MASTER_SERVICE_PORT_REDIS", "6379"},
                                             {"REDIS_MASTER_SERVICE_PORT_METRICS_UDP", "9121"},
                                             {"REDIS_MASTER_PORT", "tcp://10.96.3.4:6379"},
                                             {"REDIS_MASTER_PORT_6379_TCP", "tcp://10.96.3.4:6379"},
                                             {"REDIS_MASTER_PORT_6379_TCP_PROTO", "tcp"},
                                             {"REDIS_MASTER_PORT_6379_TCP_PORT", "6379"},
                                             {"REDIS_MASTER_PORT_6379_TCP_ADDR", "10.96.3.4"},
                                             {"REDIS_MASTER_PORT_9121_UDP", "udp://10.96.3.4:9121"},
                                             {"REDIS_MASTER_PORT_9121_UDP_PROTO", "udp"},
                                             {"REDIS_MASTER_PORT_9121_UDP_PORT", "9121"},
                                             {"REDIS_MASTER_PORT_9121_UDP_ADDR", "10.96.3.4"}};
  EXPECT_EQ(env, want);  // headless, external and other namespaces' services excluded

  pod["spec"]["enableServiceLinks"] = false;
  env = envOf(pod);
  EXPECT_EQ(env.size(), 8u);
  EXPECT_EQ(env["KUBERNETES_SERVICE_HOST"], "10.96.0.1");
  EXPECT_EQ(env.count("REDIS_MASTER_SERVICE_HOST"), 0u);
}

TEST_F(ServiceEnvTest, ExplicitEnvWinsAndCanReferToServiceVariables) {
  json pod = admittedPod();
  pod["spec"]["containers"][0]["env"] = json::parse(R"J([
      {"name": "KUBERNETES_SERVICE_HOST", "value": "override"},
      {"name": "REDIS_URL", "value": "redis://$(REDIS_MASTER_SERVICE_HOST):6379"}])J");
  auto env = envOf(pod);
  EXPECT_EQ(env["KUBERNETES_SERVICE_HOST"], "override");
  EXPECT_EQ(env["REDIS_URL"], "redis://10.96.3.4:6379");
  // The explicit variables come after the service ones (a container sees the last one).
  auto list = resolveEnv(pod, pod["spec"]["containers"][0], {}, objects);
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->back().first, "REDIS_URL");
}

TEST_F(ServiceEnvTest, ServiceListingFailureIsAnError) {
  objects.failServices = true;
  json pod = admittedPod();
  auto env = resolveEnv(pod, pod["spec"]["containers"][0], {}, objects);
  ASSERT_FALSE(env.ok());
  EXPECT_NE(env.status().message().find("failed to list services"), std::string::npos);
}

TEST(ServiceEnv, PodNamespaceDefaultListsKubernetesOnce) {
  MapObjects objects;
  objects.serviceObjects["default"] = {
      service("default", "kubernetes", "10.96.0.1", {{{"name", "https"}, {"port", 443}}})};
  json pod = admittedPod();
  pod["metadata"]["namespace"] = "default";
  auto env = resolveEnv(pod, pod["spec"]["containers"][0], {}, objects);
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env->size(), 8u);
}

}  // namespace
}  // namespace minik8s::kubelet
