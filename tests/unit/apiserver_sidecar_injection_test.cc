#include <gtest/gtest.h>

#include "apiserver/admission/admission_chain.h"
#include "apiserver/admission/sidecar_injection.h"
#include "apiserver/registry.h"
#include "fake_store.h"

namespace minik8s::apiserver::admission {
namespace {

json pod(json annotations = json::object()) {
  return {{"metadata", {{"name", "web"}, {"namespace", "shop"}, {"annotations", annotations}}},
          {"spec", {{"containers", {{{"name", "app"}, {"image", "minik8s/python"}}}}}}};
}

json ns(const std::string& injection) {
  return {{"metadata", {{"name", "shop"}, {"labels", {{"istio-injection", injection}}}}}};
}

TEST(SidecarInjectionTest, FollowsTheNamespaceLabelAndThePodAnnotation) {
  json enabled = ns("enabled"), disabled = ns("disabled");
  EXPECT_TRUE(wantsSidecar(pod(), "shop", &enabled));
  EXPECT_FALSE(wantsSidecar(pod(), "shop", &disabled));
  EXPECT_FALSE(wantsSidecar(pod(), "shop", nullptr));
  EXPECT_TRUE(wantsSidecar(pod({{"sidecar.istio.io/inject", "true"}}), "shop", nullptr));
  EXPECT_FALSE(wantsSidecar(pod({{"sidecar.istio.io/inject", "false"}}), "shop", &enabled));
  EXPECT_FALSE(wantsSidecar(pod({{"sidecar.istio.io/inject", "true"}}), "kube-system", &enabled));
  json host = pod();
  host["spec"]["hostNetwork"] = true;
  EXPECT_FALSE(wantsSidecar(host, "shop", &enabled));
}

TEST(SidecarInjectionTest, EnableNamespacesByDefaultMeshesUnlabelledNamespaces) {
  // The server's --mesh: every namespace but the system ones and those labelled disabled.
  json disabled = ns("disabled"), unlabelled = {{"metadata", {{"name", "shop"}}}};
  EXPECT_TRUE(wantsSidecar(pod(), "shop", &unlabelled, true));
  EXPECT_TRUE(wantsSidecar(pod(), "shop", nullptr, true));
  EXPECT_FALSE(wantsSidecar(pod(), "shop", &disabled, true));
  EXPECT_FALSE(wantsSidecar(pod({{"sidecar.istio.io/inject", "false"}}), "shop", nullptr, true));
  for (const char* system : {"kube-system", "kube-public", "kube-node-lease"}) {
    EXPECT_FALSE(wantsSidecar(pod(), system, nullptr, true)) << system;
  }
}

TEST(SidecarInjectionTest, TheConfigurationIsCheckedAndApplied) {
  testing::FakeStore store;
  Registry registry{store, api::Scheme::builtin()};
  auto bad = buildAdmissionChain({"MeshSidecarInjection"}, registry,
                                 {{"MeshSidecarInjection", {{"enableNamespacesByDefault", 1}}}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "admission plugin MeshSidecarInjection: configuration: unknown field or not a "
            "boolean: enableNamespacesByDefault (known: enableNamespacesByDefault)");
  auto chain =
      buildAdmissionChain({"MeshSidecarInjection"}, registry,
                          {{"MeshSidecarInjection", {{"enableNamespacesByDefault", true}}}});
  ASSERT_TRUE(chain.ok()) << chain.status().toString();
  ASSERT_EQ(chain->size(), 1u);
  json p = pod();
  RequestInfo ri;
  ri.verb = "create";
  ri.version = "v1";
  ri.resource = "pods";
  ri.namespaceName = "shop";
  auth::UserInfo user{"alice", "", {}, {}};
  auth::AdmissionRequest req{user, ri, "CREATE", nullptr, &p, false, nullptr};
  ASSERT_TRUE((*chain)[0]->admit(req).ok());
  EXPECT_EQ(p["spec"]["containers"].size(), 2u) << p.dump();  // shop has no label: meshed
}

TEST(SidecarInjectionTest, AddsTheInitStepAndTheProxyOnce) {
  json p = pod();
  p["spec"]["initContainers"] = {{{"name", "setup"}}};
  injectSidecar(p);
  const json& spec = p["spec"];
  ASSERT_EQ(spec["initContainers"].size(), 2u);
  EXPECT_EQ(spec["initContainers"][0]["name"], "istio-init");
  EXPECT_EQ(spec["initContainers"][0]["args"][0], "mesh-init");
  EXPECT_EQ(spec["initContainers"][0]["securityContext"]["privileged"], true);
  EXPECT_EQ(spec["initContainers"][1]["name"], "setup");
  ASSERT_EQ(spec["containers"].size(), 2u);
  const json& proxy = spec["containers"][1];
  EXPECT_EQ(proxy["name"], "istio-proxy");
  EXPECT_EQ(proxy["image"], kMeshProxyImage);
  EXPECT_EQ(proxy["securityContext"]["runAsUser"], 1337);
  EXPECT_EQ(proxy["env"][2]["valueFrom"]["fieldRef"]["fieldPath"], "status.podIP");
  EXPECT_EQ(p["metadata"]["annotations"]["sidecar.istio.io/status"], "injected");
  json enabled = ns("enabled");
  EXPECT_FALSE(wantsSidecar(p, "shop", &enabled));  // never twice
}

TEST(SidecarInjectionTest, RunsBeforeServiceAccountSoTheProxyGetsTheToken) {
  auto plugins = admissionPlugins();
  ASSERT_GE(plugins.size(), 2u);
  EXPECT_EQ(plugins[0].name, "MeshSidecarInjection");
  EXPECT_TRUE(plugins[0].mutating);
  EXPECT_EQ(plugins[1].name, "ServiceAccount");
}

}  // namespace
}  // namespace minik8s::apiserver::admission
