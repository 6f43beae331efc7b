// The Function kind's pure parts: the CRD, spec reading and validation, the Deployment and
// Service built from a Function, and its status.
#include <gtest/gtest.h>

#include "api/json_schema.h"
#include "serverless/function.h"

namespace minik8s::serverless {
namespace {

json function(const json& spec) {
  return {
      {"apiVersion", kApiVersion},
      {"kind", "Function"},
      {"metadata", {{"name", "hello"}, {"namespace", "apps"}, {"uid", "u-1"}, {"generation", 3}}},
      {"spec", spec}};
}

json minimal() {
  return function({{"handler", "hello.handle"}, {"code", {{"configMap", "hello-code"}}}});
}

TEST(FunctionSpec, AppliesTheDefaults) {
  auto spec = parseFunctionSpec(minimal());
  ASSERT_TRUE(spec.ok()) << spec.status().toString();
  EXPECT_EQ(spec->runtime, "python3");
  EXPECT_EQ(spec->handler, "hello.handle");
  EXPECT_EQ(spec->codeConfigMap, "hello-code");
  EXPECT_EQ(spec->containerConcurrency, 0);
  EXPECT_EQ(spec->timeoutSeconds, 30);
  EXPECT_EQ(spec->scale.minScale, 0);
  EXPECT_EQ(spec->scale.maxScale, 10);
  EXPECT_EQ(spec->scale.targetConcurrency, 10);
  EXPECT_EQ(spec->scale.scaleToZeroAfter, std::chrono::seconds(30));
}

TEST(FunctionSpec, ReadsEveryField) {
  auto spec = parseFunctionSpec(function({{"handler", "pkg.mod.main"},
                                          {"code", {{"configMap", "c"}}},
                                          {"env", {{{"name", "GREETING"}, {"value", "hi"}}}},
                                          {"resources", {{"limits", {{"memory", "128Mi"}}}}},
                                          {"containerConcurrency", 4},
                                          {"timeoutSeconds", 5},
                                          {"scale",
                                           {{"minScale", 1},
                                            {"maxScale", 3},
                                            {"targetConcurrency", 2},
                                            {"scaleToZeroAfter", "1m30s"}}}}));
  ASSERT_TRUE(spec.ok()) << spec.status().toString();
  EXPECT_EQ(spec->handler, "pkg.mod.main");
  EXPECT_EQ(spec->env.size(), 1u);
  EXPECT_EQ(spec->resources["limits"]["memory"], "128Mi");
  EXPECT_EQ(spec->containerConcurrency, 4);
  EXPECT_EQ(spec->timeoutSeconds, 5);
  EXPECT_EQ(spec->scale.minScale, 1);
  EXPECT_EQ(spec->scale.maxScale, 3);
  EXPECT_EQ(spec->scale.targetConcurrency, 2);
  EXPECT_EQ(spec->scale.scaleToZeroAfter, std::chrono::seconds(90));
}

TEST(FunctionSpec, RefusesWithTheField) {
  auto noHandler = parseFunctionSpec(function({{"code", {{"configMap", "c"}}}}));
  EXPECT_EQ(noHandler.status().message(), "spec.handler: Required value");
  auto badHandler =
      parseFunctionSpec(function({{"handler", "handle"}, {"code", {{"configMap", "c"}}}}));
  EXPECT_NE(badHandler.status().message().find("must be module.function"), std::string::npos);
  auto noCode = parseFunctionSpec(function({{"handler", "a.b"}}));
  EXPECT_EQ(noCode.status().message(), "spec.code.configMap: Required value");
  auto minOverMax = parseFunctionSpec(function({{"handler", "a.b"},
                                                {"code", {{"configMap", "c"}}},
                                                {"scale", {{"minScale", 4}, {"maxScale", 2}}}}));
  EXPECT_EQ(minOverMax.status().message(),
            "spec.scale.minScale: Invalid value: 4: must be less than or equal to maxScale (2)");
  auto idle = parseFunctionSpec(function({{"handler", "a.b"},
                                          {"code", {{"configMap", "c"}}},
                                          {"scale", {{"scaleToZeroAfter", "soon"}}}}));
  EXPECT_NE(idle.status().message().find("spec.scale.scaleToZeroAfter"), std::string::npos);
  auto runtime = parseFunctionSpec(
      function({{"runtime", "node"}, {"handler", "a.b"}, {"code", {{"configMap", "c"}}}}));
  EXPECT_NE(runtime.status().message().find("spec.runtime: Unsupported value"), std::string::npos);
}

TEST(FunctionSpec, HandlerNames) {
  EXPECT_TRUE(validateHandler("handler.handle").ok());
  EXPECT_TRUE(validateHandler("_a.b_2.c").ok());
  for (const char* bad : {"", "handle", ".x", "x.", "a..b", "1a.b", "a.b-c", "a.b c"}) {
    EXPECT_FALSE(validateHandler(bad).ok()) << bad;
  }
  EXPECT_NE(validateHandler("x", "--handler").message().find("--handler: Invalid value"),
            std::string::npos);
}

TEST(FunctionCrd, ServesTheKindWithColumnsDefaultsAndValidation) {
  const json crd = functionCrd();
  EXPECT_EQ(crd["metadata"]["name"], "functions.serverless.minik8s.io");
  EXPECT_EQ(crd["spec"]["names"]["shortNames"], json({"fn"}));
  const json& version = crd["spec"]["versions"][0];
  EXPECT_TRUE(version["subresources"].contains("status"));
  std::vector<std::string> columns;
  for (const auto& c : version["additionalPrinterColumns"]) {
    if (c.value("priority", 0) == 0) columns.push_back(c["name"]);
  }
  EXPECT_EQ(columns, (std::vector<std::string>{"URL", "Ready", "Age"}));
  const json& spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"];
  EXPECT_EQ(spec["properties"]["runtime"]["enum"], json({"python3"}));
  EXPECT_EQ(spec["properties"]["scale"]["properties"]["scaleToZeroAfter"]["default"], "30s");
  EXPECT_EQ(spec["properties"]["timeoutSeconds"]["default"], 30);
  // A structural schema the API server accepts; it defaults and validates as it says.
  const json& schema = version["schema"]["openAPIV3Schema"];
  EXPECT_TRUE(api::jsonschema::checkStructural(schema, "openAPIV3Schema").empty());
  json obj = minimal();
  api::jsonschema::applyDefaults(obj, schema);
  EXPECT_EQ(obj["spec"]["scale"]["scaleToZeroAfter"], "30s");
  EXPECT_EQ(obj["spec"]["scale"]["maxScale"], 10);
  EXPECT_TRUE(api::jsonschema::validate(obj, schema, "").empty());
  json bad = function({{"handler", "nodot"},
                       {"code", {{"configMap", "c"}}},
                       {"scale", {{"scaleToZeroAfter", "soon"}, {"minScale", -1}}}});
  auto causes = api::jsonschema::validate(bad, schema, "");
  ASSERT_EQ(causes.size(), 3u);
  EXPECT_EQ(causes[0].field, "spec.handler");
}

TEST(FunctionDeployment, RunsTheRuntimeWithTheCodeAndTheHandler) {
  auto spec = parseFunctionSpec(function({{"handler", "hello.handle"},
                                          {"code", {{"configMap", "hello-code"}}},
                                          {"env", {{{"name", "GREETING"}, {"value", "hi"}}}},
                                          {"timeoutSeconds", 10}}));
  ASSERT_TRUE(spec.ok());
  json d = functionDeployment(minimal(), *spec, kDefaultRuntimeImage, "42", 0);
  EXPECT_EQ(d["metadata"]["name"], "hello-fn");
  EXPECT_EQ(d["metadata"]["namespace"], "apps");
  EXPECT_EQ(d["metadata"]["labels"][kFunctionLabel], "hello");
  const json& owner = d["metadata"]["ownerReferences"][0];
  EXPECT_EQ(owner["kind"], "Function");
  EXPECT_EQ(owner["uid"], "u-1");
  EXPECT_EQ(owner["controller"], true);
  EXPECT_EQ(d["spec"]["replicas"], 0);
  EXPECT_EQ(d["spec"]["selector"]["matchLabels"][kFunctionLabel], "hello");
  const json& pod = d["spec"]["template"];
  EXPECT_EQ(pod["metadata"]["labels"][kFunctionLabel], "hello");
  EXPECT_EQ(pod["metadata"]["annotations"][kCodeRevisionAnnotation], "42");
  EXPECT_EQ(pod["spec"]["terminationGracePeriodSeconds"], 15);
  EXPECT_EQ(pod["spec"]["volumes"][0]["configMap"]["name"], "hello-code");
  const json& c = pod["spec"]["containers"][0];
  EXPECT_EQ(c["image"], "minik8s/python-function:latest");
  EXPECT_EQ(c["imagePullPolicy"], "IfNotPresent");
  EXPECT_EQ(c["env"][0], json({{"name", "HANDLER"}, {"value", "hello.handle"}}));
  EXPECT_EQ(c["env"].back(), json({{"name", "GREETING"}, {"value", "hi"}}));
  EXPECT_EQ(c["volumeMounts"][0]["mountPath"], "/code");
  EXPECT_EQ(c["readinessProbe"]["httpGet"]["path"], "/healthz");
  EXPECT_EQ(c["readinessProbe"]["httpGet"]["port"], 8080);
  EXPECT_EQ(c["readinessProbe"]["periodSeconds"], 1);
  EXPECT_FALSE(c.contains("resources"));
}

TEST(FunctionDeployment, TemplateHashFollowsCodeAndHandlerNotReplicas) {
  auto spec = parseFunctionSpec(minimal());
  ASSERT_TRUE(spec.ok());
  auto hash = [](const json& d) {
    return d["metadata"]["annotations"][kTemplateHashAnnotation].get<std::string>();
  };
  const json a = functionDeployment(minimal(), *spec, kDefaultRuntimeImage, "1", 0);
  EXPECT_EQ(hash(a), hash(functionDeployment(minimal(), *spec, kDefaultRuntimeImage, "1", 5)));
  EXPECT_NE(hash(a), hash(functionDeployment(minimal(), *spec, kDefaultRuntimeImage, "2", 0)));
  FunctionSpec other = *spec;
  other.handler = "hello.other";
  EXPECT_NE(hash(a), hash(functionDeployment(minimal(), other, kDefaultRuntimeImage, "1", 0)));
  EXPECT_EQ(stableHash("abc"), "e71fa2190541574b");  // FNV-1a 64, the same in every build
}

TEST(FunctionService, PortEightyToTheRuntime) {
  json s = functionService(minimal());
  EXPECT_EQ(s["metadata"]["name"], "hello");
  EXPECT_EQ(s["spec"]["type"], "ClusterIP");
  EXPECT_EQ(s["spec"]["selector"][kFunctionLabel], "hello");
  EXPECT_EQ(s["spec"]["ports"][0]["port"], 80);
  EXPECT_EQ(s["spec"]["ports"][0]["targetPort"], 8080);
  EXPECT_EQ(s["metadata"]["ownerReferences"][0]["name"], "hello");
}

TEST(FunctionStatus, ReasonsOfTheReadyCondition) {
  auto reason = [](const json& status) { return status["conditions"][0]["reason"]; };
  auto cond = [](const json& status) { return status["conditions"][0]["status"]; };
  FunctionObservation o;
  json s = functionStatus(minimal(), o, "2026-01-01T00:00:00Z");
  EXPECT_EQ(s["url"], "http://gateway.serverless.svc.cluster.local/function/apps/hello");
  EXPECT_EQ(s["observedGeneration"], 3);
  EXPECT_EQ(reason(s), "ScaledToZero");
  EXPECT_EQ(cond(s), "True");

  o.deployment =
      json{{"spec", {{"replicas", 2}}}, {"status", {{"replicas", 2}, {"readyReplicas", 0}}}};
  s = functionStatus(minimal(), o, "t");
  EXPECT_EQ(reason(s), "Starting");
  EXPECT_EQ(cond(s), "Unknown");
  o.deployment =
      json{{"spec", {{"replicas", 2}}}, {"status", {{"replicas", 2}, {"readyReplicas", 2}}}};
  s = functionStatus(minimal(), o, "t");
  EXPECT_EQ(reason(s), "Ready");
  EXPECT_EQ(s["readyReplicas"], 2);

  o.importError =
      "cannot import handler hello.handle: SyntaxError: invalid syntax (hello.py, line 2)";
  s = functionStatus(minimal(), o, "t");
  EXPECT_EQ(reason(s), "ImportFailed");
  EXPECT_EQ(cond(s), "False");
  EXPECT_EQ(s["conditions"][0]["message"], o.importError);

  FunctionObservation missing;
  missing.codeMissing = true;
  s = functionStatus(minimal(), missing, "t");
  EXPECT_EQ(reason(s), "CodeMissing");
  EXPECT_NE(s["conditions"][0]["message"].get<std::string>().find("ConfigMap hello-code"),
            std::string::npos);
}

TEST(FunctionStatus, KeepsTheTransitionTimeWhileTheStatusStays) {
  json fn = minimal();
  FunctionObservation o;
  fn["status"] = functionStatus(fn, o, "2026-01-01T00:00:00Z");
  o.deployment =
      json{{"spec", {{"replicas", 1}}}, {"status", {{"replicas", 1}, {"readyReplicas", 1}}}};
  json s = functionStatus(fn, o, "2026-01-01T00:05:00Z");  // ScaledToZero -> Ready: both True
  EXPECT_EQ(s["conditions"][0]["lastTransitionTime"], "2026-01-01T00:00:00Z");
  o.importError = "x";
  s = functionStatus(fn, o, "2026-01-01T00:06:00Z");
  EXPECT_EQ(s["conditions"][0]["lastTransitionTime"], "2026-01-01T00:06:00Z");
}

}  // namespace
}  // namespace minik8s::serverless
