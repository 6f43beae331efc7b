// The PodSecurity admission plugin (apiserver/admission/pod_security_admission.h) on a registry
// over a fake store: enforce refuses pods, warn warns, templates only warn, namespace labels are
// validated and tightening them warns about existing pods; the chain has it on by default; and
// through a real API server its warnings reach the client as one Warning header each.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "apiserver/admission/admission_chain.h"
#include "apiserver/admission/pod_security_admission.h"
#include "apiserver/api_server.h"
#include "common/http_client.h"
#include "common/metrics.h"
#include "common/yaml_json.h"
#include "fake_store.h"

namespace minik8s::apiserver::admission {
namespace {

const api::ResourceInfo& resourceInfo(const std::string& group, const std::string& version,
                                      const std::string& resource) {
  return *api::Scheme::builtin().byResource(group, version, resource);
}

json podWithSpec(const std::string& name, json spec) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "team"}}},
          {"spec", std::move(spec)}};
}

json plainSpec() { return {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}}; }

json privilegedSpec() {
  return {{"containers",
           {{{"name", "c"}, {"image", "busybox"}, {"securityContext", {{"privileged", true}}}}}}};
}

json restrictedSpec() {
  return {{"securityContext",
           {{"runAsNonRoot", true}, {"seccompProfile", {{"type", "RuntimeDefault"}}}}},
          {"containers",
           {{{"name", "c"},
             {"image", "busybox"},
             {"securityContext",
              {{"allowPrivilegeEscalation", false},
               {"runAsUser", 1000},
               {"capabilities", {{"drop", {"ALL"}}}}}}}}}};
}

class PodSecurityAdmissionTest : public ::testing::Test {
 protected:
  void SetUp() override { createNamespace("team", json::object()); }

  void createNamespace(const std::string& name, json labels) {
    json ns = {{"apiVersion", "v1"},
               {"kind", "Namespace"},
               {"metadata", {{"name", name}, {"labels", std::move(labels)}}}};
    auto r = registry.create(resourceInfo("", "v1", "namespaces"), "", ns);
    ASSERT_TRUE(r.ok()) << r.status().toString();
  }
  void labelNamespace(json labels) {
    auto got = registry.get(resourceInfo("", "v1", "namespaces"), "", "team");
    ASSERT_TRUE(got.ok());
    (*got)["metadata"]["labels"] = std::move(labels);
    auto r = registry.update(resourceInfo("", "v1", "namespaces"), "", "team", *got);
    ASSERT_TRUE(r.ok()) << r.status().toString();
  }
  void storePod(const json& p) {
    auto r = registry.create(resourceInfo("", "v1", "pods"), "team", p);
    ASSERT_TRUE(r.ok()) << r.status().toString();
  }

  // One write through the plugin; warnings land in `warnings`.
  Status admit(const std::string& group, const std::string& resource, json obj,
               const std::string& operation = "CREATE", const json* old = nullptr,
               const std::string& subresource = "") {
    RequestInfo ri;
    ri.isResourceRequest = true;
    ri.verb = operation == "CREATE" ? "create" : "update";
    ri.group = group;
    ri.version = "v1";
    ri.namespaceName = resource == "namespaces" ? "" : "team";
    ri.resource = resource;
    ri.subresource = subresource;
    ri.name = obj.value("/metadata/name"_json_pointer, std::string());
    auth::UserInfo user{userName, "", {}, {}};
    warnings.clear();
    auth::AdmissionRequest req{user, ri, operation, old, &obj, false, &warnings};
    return (with ? *with : plugin).admit(req);
  }

  testing::FakeStore store;
  Registry registry{store, api::Scheme::builtin()};
  PodSecurity plugin{registry};
  std::vector<std::string> warnings;
  std::string userName = "alice";
  PodSecurity* with = nullptr;  // another plugin than `plugin` (a configured one)
};

TEST_F(PodSecurityAdmissionTest, UnlabelledNamespacesArePrivileged) {
  EXPECT_TRUE(admit("", "pods", podWithSpec("p", privilegedSpec())).ok());
  EXPECT_TRUE(warnings.empty());
}

TEST_F(PodSecurityAdmissionTest, EnforceRefusesPodsWithKubernetesMessage) {
  labelNamespace({{"pod-security.kubernetes.io/enforce", "restricted"}});
  Status s = admit("", "pods", podWithSpec("priv", privilegedSpec()));
  EXPECT_EQ(s.code(), 403);
  EXPECT_EQ(s.reason(), "Forbidden");
  EXPECT_EQ(s.message(),
            "pods \"priv\" is forbidden: violates PodSecurity \"restricted:latest\": privileged "
            "(container \"c\" must not set securityContext.privileged=true), "
            "allowPrivilegeEscalation != false (container \"c\" must set "
            "securityContext.allowPrivilegeEscalation=false), unrestricted capabilities "
            "(container \"c\" must set securityContext.capabilities.drop=[\"ALL\"]), runAsNonRoot "
            "!= true (pod or container \"c\" must set securityContext.runAsNonRoot=true), "
            "seccompProfile (pod or container \"c\" must set securityContext.seccompProfile.type "
            "to \"RuntimeDefault\" or \"Localhost\")");
  EXPECT_TRUE(warnings.empty());  // no warnings on a refused request
  EXPECT_TRUE(admit("", "pods", podWithSpec("ok", restrictedSpec())).ok());
  EXPECT_TRUE(warnings.empty());
}

TEST_F(PodSecurityAdmissionTest, GeneratedNamesAppearInRefusals) {
  labelNamespace({{"pod-security.kubernetes.io/enforce", "baseline"},
                  {"pod-security.kubernetes.io/enforce-version", "v1.30"}});
  json p = podWithSpec("", privilegedSpec());
  p["metadata"].erase("name");
  p["metadata"]["generateName"] = "web-6d4cf56db6-";
  Status s = admit("", "pods", p);
  EXPECT_EQ(s.code(), 403);
  EXPECT_EQ(s.message().rfind("pods \"web-6d4cf56db6-", 0), 0u) << s.message();
  EXPECT_NE(
      s.message().find("\" is forbidden: violates PodSecurity \"baseline:v1.30\": privileged"),
      std::string::npos)
      << s.message();
}

TEST_F(PodSecurityAdmissionTest, WarnAddsWarningsAndAdmits) {
  labelNamespace({{"pod-security.kubernetes.io/warn", "baseline"}});
  json spec = plainSpec();
  spec["volumes"] = {{{"name", "host"}, {"hostPath", {{"path", "/tmp"}}}}};
  EXPECT_TRUE(admit("", "pods", podWithSpec("p", spec)).ok());
  EXPECT_EQ(warnings, (std::vector<std::string>{
                          "would violate PodSecurity \"baseline:latest\": hostPath volumes "
                          "(volume \"host\")"}));
  // Audit alone neither refuses nor warns.
  labelNamespace({{"pod-security.kubernetes.io/audit", "restricted"}});
  EXPECT_TRUE(admit("", "pods", podWithSpec("p", spec)).ok());
  EXPECT_TRUE(warnings.empty());
}

TEST_F(PodSecurityAdmissionTest, EnforceAlsoWarnsAtItsLevelForTemplates) {
  labelNamespace({{"pod-security.kubernetes.io/enforce", "restricted"}});
  json deploy = {
      {"apiVersion", "apps/v1"},
      {"kind", "Deployment"},
      {"metadata", {{"name", "web"}, {"namespace", "team"}}},
      {"spec",
       {{"template", {{"metadata", {{"labels", {{"app", "web"}}}}}, {"spec", privilegedSpec()}}}}}};
  // Templates are never refused: the warning (warn follows enforce) says what will happen.
  EXPECT_TRUE(admit("apps", "deployments", deploy).ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].rfind("would violate PodSecurity \"restricted:latest\": privileged "
                              "(container \"c\" must not set securityContext.privileged=true), ",
                              0),
            0u)
      << warnings[0];
  EXPECT_TRUE(admit("apps", "deployments", deploy, "UPDATE", &deploy).ok());
  EXPECT_EQ(warnings.size(), 1u);
  // Status writes are not looked at.
  EXPECT_TRUE(admit("apps", "deployments", deploy, "UPDATE", &deploy, "status").ok());
  EXPECT_TRUE(warnings.empty());

  json cron = {{"apiVersion", "batch/v1"},
               {"kind", "CronJob"},
               {"metadata", {{"name", "nightly"}, {"namespace", "team"}}},
               {"spec",
                {{"schedule", "0 0 * * *"},
                 {"jobTemplate", {{"spec", {{"template", {{"spec", privilegedSpec()}}}}}}}}}};
  EXPECT_TRUE(admit("batch", "cronjobs", cron).ok());
  EXPECT_EQ(warnings.size(), 1u);
  for (const auto& [group, resource] :
       std::vector<std::pair<std::string, std::string>>{{"apps", "replicasets"},
                                                        {"apps", "statefulsets"},
                                                        {"apps", "daemonsets"},
                                                        {"batch", "jobs"},
                                                        {"", "replicationcontrollers"}}) {
    json obj = {{"metadata", {{"name", "x"}}},
                {"spec", {{"template", {{"spec", privilegedSpec()}}}}}};
    EXPECT_TRUE(admit(group, resource, obj).ok()) << resource;
    EXPECT_EQ(warnings.size(), 1u) << resource;
  }
  json compliant = deploy;
  compliant["spec"]["template"]["spec"] = restrictedSpec();
  EXPECT_TRUE(admit("apps", "deployments", compliant).ok());
  EXPECT_TRUE(warnings.empty());
}

TEST_F(PodSecurityAdmissionTest, OnlySignificantPodUpdatesAreChecked) {
  labelNamespace({{"pod-security.kubernetes.io/enforce", "baseline"}});
  json old = podWithSpec("p", privilegedSpec());  // admitted before the label
  json relabelled = old;
  relabelled["metadata"]["labels"] = {{"app", "x"}};
  relabelled["metadata"]["finalizers"] = {"example.com/keep"};
  EXPECT_TRUE(admit("", "pods", relabelled, "UPDATE", &old).ok());
  json newImage = old;
  newImage["spec"]["containers"][0]["image"] = "busybox:2";
  EXPECT_EQ(admit("", "pods", newImage, "UPDATE", &old).code(), 403);
  json debug = old;
  debug["spec"]["ephemeralContainers"] = {{{"name", "dbg"}, {"image", "busybox"}}};
  EXPECT_EQ(admit("", "pods", debug, "UPDATE", &old, "ephemeralcontainers").code(), 403);
  EXPECT_TRUE(admit("", "pods", newImage, "UPDATE", &old, "status").ok());
}

TEST_F(PodSecurityAdmissionTest, InvalidNamespaceLabelsAreRefused) {
  json ns = {{"metadata",
              {{"name", "bad"}, {"labels", {{"pod-security.kubernetes.io/enforce", "strict"}}}}}};
  Status s = admit("", "namespaces", ns);
  EXPECT_EQ(s.code(), 422);
  EXPECT_EQ(s.message(),
            "Namespace \"bad\" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: "
            "Invalid value: \"strict\": must be one of privileged, baseline, restricted");
  ASSERT_EQ(s.causes().size(), 1u);
  EXPECT_EQ(s.causes()[0].field, "metadata.labels[pod-security.kubernetes.io/enforce]");

  json old = {{"metadata", {{"name", "team"}}}};
  json next = {
      {"metadata",
       {{"name", "team"}, {"labels", {{"pod-security.kubernetes.io/warn-version", "1.25"}}}}}};
  EXPECT_EQ(admit("", "namespaces", next, "UPDATE", &old).code(), 422);
  // Labels already bad may stay so when something else changes.
  json same = next;
  same["metadata"]["annotations"] = {{"note", "x"}};
  EXPECT_TRUE(admit("", "namespaces", same, "UPDATE", &next).ok());
}

TEST_F(PodSecurityAdmissionTest, TighteningEnforceWarnsAboutExistingPods) {
  storePod(podWithSpec("priv-a", privilegedSpec()));
  storePod(podWithSpec("priv-b", privilegedSpec()));
  json host = plainSpec();
  host["hostNetwork"] = true;
  storePod(podWithSpec("host", host));
  storePod(podWithSpec("fine", restrictedSpec()));

  json old = {{"metadata", {{"name", "team"}}}};
  json next = {
      {"metadata",
       {{"name", "team"}, {"labels", {{"pod-security.kubernetes.io/enforce", "baseline"}}}}}};
  EXPECT_TRUE(admit("", "namespaces", next, "UPDATE", &old).ok());
  EXPECT_EQ(warnings, (std::vector<std::string>{
                          "existing pods in namespace \"team\" violate the new PodSecurity "
                          "enforce level \"baseline:latest\"",
                          "host: host namespaces", "priv-a (and 1 other pod): privileged"}));

  // Relaxing, or keeping the level, says nothing.
  EXPECT_TRUE(admit("", "namespaces", old, "UPDATE", &next).ok());
  EXPECT_TRUE(warnings.empty());
  EXPECT_TRUE(admit("", "namespaces", next, "UPDATE", &next).ok());
  EXPECT_TRUE(warnings.empty());
  // New namespaces have no pods to warn about.
  EXPECT_TRUE(admit("", "namespaces", next).ok());
  EXPECT_TRUE(warnings.empty());

  json restricted = next;
  restricted["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] = "restricted";
  EXPECT_TRUE(admit("", "namespaces", restricted, "UPDATE", &next).ok());
  ASSERT_EQ(warnings.size(), 3u);
  EXPECT_EQ(warnings[1],
            "host: host namespaces, allowPrivilegeEscalation != false, unrestricted "
            "capabilities, runAsNonRoot != true, seccompProfile");
}

TEST_F(PodSecurityAdmissionTest, IsInTheDefaultChainBeforeTheValidatingWebhooks) {
  auto names = defaultAdmissionPlugins();
  auto at = [&](const std::string& n) { return std::find(names.begin(), names.end(), n); };
  ASSERT_NE(at("PodSecurity"), names.end());
  EXPECT_LT(at("NodeRestriction"), at("PodSecurity"));
  EXPECT_LT(at("PodSecurity"), at("ValidatingAdmissionWebhook"));
  auto chain = buildAdmissionChain({"PodSecurity"}, registry);
  ASSERT_TRUE(chain.ok());
  ASSERT_EQ(chain->size(), 1u);
  EXPECT_NE(dynamic_cast<PodSecurity*>((*chain)[0].get()), nullptr);
}

TEST_F(PodSecurityAdmissionTest, CountsEvaluationsAsKubernetesDoes) {
  labelNamespace({{"pod-security.kubernetes.io/enforce", "restricted"},
                  {"pod-security.kubernetes.io/warn", "baseline"},
                  {"pod-security.kubernetes.io/warn-version", "v1.40"}});
  auto counter = [](std::initializer_list<std::string_view> labels) {
    return metrics::defaultRegistry()
        .counterVec("pod_security_evaluations_total", "",
                    {"decision", "policy_level", "policy_version", "mode", "request_operation",
                     "resource", "subresource"})
        .with(labels)
        .value();
  };
  const double denied = counter({"deny", "restricted", "latest", "enforce", "create", "pod", ""});
  const double allowed = counter({"allow", "restricted", "latest", "enforce", "create", "pod", ""});
  const double warned = counter({"deny", "baseline", "future", "warn", "create", "controller", ""});
  EXPECT_EQ(admit("", "pods", podWithSpec("p", privilegedSpec())).code(), 403);
  EXPECT_TRUE(admit("", "pods", podWithSpec("ok", restrictedSpec())).ok());
  json rs = {{"metadata", {{"name", "x"}}}, {"spec", {{"template", {{"spec", privilegedSpec()}}}}}};
  EXPECT_TRUE(admit("apps", "replicasets", rs).ok());
  EXPECT_EQ(counter({"deny", "restricted", "latest", "enforce", "create", "pod", ""}), denied + 1);
  EXPECT_EQ(counter({"allow", "restricted", "latest", "enforce", "create", "pod", ""}),
            allowed + 1);
  EXPECT_EQ(counter({"deny", "baseline", "future", "warn", "create", "controller", ""}),
            warned + 1);
}

TEST_F(PodSecurityAdmissionTest, ConfiguredDefaultsAndExemptions) {
  auto config = PodSecurityConfiguration::fromJson(parseYaml(R"(
apiVersion: pod-security.admission.config.k8s.io/v1
kind: PodSecurityConfiguration
defaults: {enforce: baseline, warn: restricted, warn-version: v1.30}
exemptions: {usernames: [ci-bot], namespaces: [sys], runtimeClasses: [kata]}
)")
                                                       .value());
  ASSERT_TRUE(config.ok()) << config.status().toString();
  EXPECT_EQ(config->defaults.enforce.toString(), "baseline:latest");
  EXPECT_EQ(config->defaults.warn.toString(), "restricted:v1.30");
  PodSecurity configured(registry, *config);
  with = &configured;
  // Unlabelled namespaces now get the defaults.
  Status s = admit("", "pods", podWithSpec("p", privilegedSpec()));
  EXPECT_EQ(s.code(), 403);
  EXPECT_NE(s.message().find("violates PodSecurity \"baseline:latest\": privileged"),
            std::string::npos);
  EXPECT_TRUE(admit("", "pods", podWithSpec("p", plainSpec())).ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].rfind("would violate PodSecurity \"restricted:v1.30\": ", 0), 0u);
  // Exempt runtime classes, users and namespaces pass.
  json kata = privilegedSpec();
  kata["runtimeClassName"] = "kata";
  EXPECT_TRUE(admit("", "pods", podWithSpec("p", kata)).ok());
  userName = "ci-bot";
  EXPECT_TRUE(admit("", "pods", podWithSpec("p", privilegedSpec())).ok());
  userName = "alice";
  // An exempt namespace's labels change nothing, and saying so is a warning.
  json ns = {
      {"metadata",
       {{"name", "sys"}, {"labels", {{"pod-security.kubernetes.io/enforce", "restricted"}}}}}};
  EXPECT_TRUE(admit("", "namespaces", ns).ok());
  EXPECT_EQ(warnings, (std::vector<std::string>{
                          "namespace \"sys\" is exempt from Pod Security, and the policy "
                          "(enforce=restricted:latest) will be ignored"}));
}

TEST_F(PodSecurityAdmissionTest, BadConfigurationsAreRefused) {
  auto bad = PodSecurityConfiguration::fromJson({{"defaults", {{"enforce", "strict"}}}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "defaults.enforce: Invalid value: \"strict\": must be one of privileged, baseline, "
            "restricted");
  EXPECT_FALSE(PodSecurityConfiguration::fromJson({{"defaults", {{"audit-version", "1.2"}}}}).ok());
  EXPECT_FALSE(
      PodSecurityConfiguration::fromJson({{"exemptions", {{"namespaces", "kube-system"}}}}).ok());
  auto chain = buildAdmissionChain({"PodSecurity"}, registry,
                                   {{"PodSecurity", {{"defaults", {{"warn", "strict"}}}}}});
  ASSERT_FALSE(chain.ok());
  EXPECT_EQ(chain.status().message().rfind("admission plugin PodSecurity: defaults.warn", 0), 0u);
}

TEST(AdmissionConfigurationTest, InlineAndPathConfigurations) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("minik8s-admission-config-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "admission.yaml") << R"(apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    defaults: {enforce: restricted}
    exemptions: {namespaces: [kube-system]}
- name: Other
  path: other.yaml
)";
  std::ofstream(dir / "other.yaml") << "kind: Something\nvalue: 3\n";
  auto configs = readAdmissionConfiguration((dir / "admission.yaml").string());
  ASSERT_TRUE(configs.ok()) << configs.status().toString();
  EXPECT_EQ((*configs)["PodSecurity"]["defaults"]["enforce"], "restricted");
  EXPECT_EQ((*configs)["Other"]["value"], 3);
  std::ofstream(dir / "wrong.yaml") << "kind: Pod\n";
  EXPECT_FALSE(readAdmissionConfiguration((dir / "wrong.yaml").string()).ok());
  EXPECT_FALSE(readAdmissionConfiguration((dir / "missing.yaml").string()).ok());
  testing::FakeStore store;
  Registry registry(store, api::Scheme::builtin());
  auto chain = buildAdmissionChain({"PodSecurity"}, registry, *configs);
  ASSERT_TRUE(chain.ok()) << chain.status().toString();
  std::filesystem::remove_all(dir);
}

// The plugin in a real API server over HTTP: refusals are 403 Status objects, and every warning
// is its own `Warning: 299 - "..."` header, as kubectl expects them.
TEST(PodSecurityServerTest, WarningsAreHeadersAndRefusalsAre403) {
  const std::string dir =
      std::filesystem::temp_directory_path() / ("minik8s-psa-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto store = storage::openStore("sqlite://" + dir + "/state.db");
  ASSERT_TRUE(store.ok());
  Registry pluginRegistry(**store, api::Scheme::builtin());
  ApiServerOptions options;
  options.admissionPlugins.push_back(std::make_shared<PodSecurity>(pluginRegistry));
  ApiServer api(**store, api::Scheme::builtin(), options);
  ASSERT_TRUE(api.start().ok());
  http::Server server(
      [&](const http::Request& req, http::ResponseWriter& w) { api.handle(req, w); });
  ASSERT_TRUE(server.start("127.0.0.1:0").ok());
  http::Client client("http://127.0.0.1:" + std::to_string(server.port()));
  const std::vector<std::pair<std::string, std::string>> jsonBody = {
      {"Content-Type", "application/json"}};
  auto warningsOf = [](const http::Response& r) {
    std::vector<std::string> out;
    for (const auto& [k, v] : r.headers) {
      if (k == "Warning") out.push_back(v);
    }
    return out;
  };

  json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "team"}}}};
  ASSERT_EQ(client.request("POST", "/api/v1/namespaces", ns.dump(), jsonBody)->status, 201);
  for (const std::string name : {"a", "b"}) {
    json p = podWithSpec(name, name == "a"
                                   ? privilegedSpec()
                                   : json{{"hostPID", true},
                                          {"containers", {{{"name", "c"}, {"image", "busybox"}}}}});
    auto created = client.request("POST", "/api/v1/namespaces/team/pods", p.dump(), jsonBody);
    ASSERT_EQ(created->status, 201) << created->body;
  }
  auto labelled =
      client.request("PATCH", "/api/v1/namespaces/team",
                     R"({"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"baseline"}}})",
                     {{"Content-Type", "application/merge-patch+json"}});
  ASSERT_EQ(labelled->status, 200) << labelled->body;
  EXPECT_EQ(
      warningsOf(*labelled),
      (std::vector<std::string>{
          R"(299 - "existing pods in namespace \"team\" violate the new PodSecurity enforce level \"baseline:latest\"")",
          R"(299 - "a: privileged")", R"(299 - "b: host namespaces")"}));

  auto refused = client.request("POST", "/api/v1/namespaces/team/pods",
                                podWithSpec("c", privilegedSpec()).dump(), jsonBody);
  EXPECT_EQ(refused->status, 403);
  json status = json::parse(refused->body);
  EXPECT_EQ(status["reason"], "Forbidden");
  EXPECT_EQ(status["details"]["kind"], "pods");
  EXPECT_EQ(status["message"],
            "pods \"c\" is forbidden: violates PodSecurity \"baseline:latest\": privileged "
            "(container \"c\" must not set securityContext.privileged=true)");
  server.stop();
  api.stop();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace minik8s::apiserver::admission
