#include <gtest/gtest.h>

#include <functional>

#include "api/openapi.h"
#include "api/schema/definitions.h"

namespace minik8s::api {
namespace {

const Scheme& scheme() { return Scheme::builtin(); }

json doc(const std::string& path) {
  auto d = openapiV3Document(scheme(), path);
  EXPECT_TRUE(d.ok()) << path << ": " << d.status().toString();
  return d.ok() ? *d : json::object();
}

bool hasQueryParam(const json& op, const std::string& name) {
  for (const auto& p : op["parameters"]) {
    if (p["name"] == name && p["in"] == "query") return true;
  }
  return false;
}

TEST(OpenApiTest, IndexListsEveryGroupVersionWithStableHash) {
  json index = openapiV3Index(scheme());
  std::vector<std::string> keys;
  for (const auto& [k, v] : index["paths"].items()) keys.push_back(k);
  EXPECT_EQ(keys,
            (std::vector<std::string>{
                "api/v1", "apis/admissionregistration.k8s.io/v1", "apis/apiextensions.k8s.io/v1",
                "apis/apps/v1", "apis/authentication.k8s.io/v1", "apis/authorization.k8s.io/v1",
                "apis/autoscaling/v1", "apis/autoscaling/v2", "apis/batch/v1",
                "apis/certificates.k8s.io/v1", "apis/coordination.k8s.io/v1",
                "apis/discovery.k8s.io/v1", "apis/minik8s.io/v1", "apis/networking.k8s.io/v1",
                "apis/rbac.authorization.k8s.io/v1", "apis/storage.k8s.io/v1"}));
  std::string url = index["paths"]["apis/apps/v1"]["serverRelativeURL"];
  EXPECT_EQ(url, "/openapi/v3/apis/apps/v1?hash=" + openapiDocumentHash(doc("apis/apps/v1")));
  EXPECT_EQ(url.size(), std::string("/openapi/v3/apis/apps/v1?hash=").size() + 128);
  EXPECT_EQ(openapiV3Index(scheme()), index);  // same content, same hash
  EXPECT_NE(index["paths"]["api/v1"]["serverRelativeURL"],
            index["paths"]["apis/batch/v1"]["serverRelativeURL"]);
}

TEST(OpenApiTest, UnknownDocumentIsNotFound) {
  auto d = openapiV3Document(scheme(), "apis/policy/v1");
  EXPECT_EQ(d.status().code(), 404);
  EXPECT_EQ(openapiV3Document(scheme(), "apis/nope/v1").status().reason(), "NotFound");
  EXPECT_TRUE(openapiV3Document(scheme(), "/apis/apps/v1?hash=ABC").ok());
}

TEST(OpenApiTest, AppsPatchCarriesGvkAndFieldValidationButNoBody) {
  json d = doc("apis/apps/v1");
  EXPECT_EQ(d["openapi"], "3.0.0");
  const json& item = d["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"];
  ASSERT_TRUE(item.contains("patch"));
  const json& patch = item["patch"];
  EXPECT_EQ(patch["x-kubernetes-group-version-kind"],
            json({{"group", "apps"}, {"version", "v1"}, {"kind", "Deployment"}}));
  EXPECT_TRUE(hasQueryParam(patch, "fieldValidation"));
  EXPECT_TRUE(hasQueryParam(patch, "dryRun"));
  EXPECT_TRUE(hasQueryParam(patch, "fieldManager"));
  EXPECT_FALSE(patch.contains("requestBody"));
  for (const char* verb : {"get", "put", "delete"}) EXPECT_TRUE(item.contains(verb)) << verb;

  const json& coll = d["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments"];
  EXPECT_TRUE(coll.contains("get"));
  EXPECT_TRUE(coll.contains("post"));
  EXPECT_TRUE(coll.contains("delete"));
  EXPECT_EQ(coll["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/io.k8s.api.apps.v1.Deployment");
  EXPECT_TRUE(d["paths"].contains("/apis/apps/v1/deployments"));

  const json& scale = d["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"];
  EXPECT_EQ(scale["patch"]["x-kubernetes-group-version-kind"]["kind"], "Scale");
  EXPECT_TRUE(
      d["paths"].contains("/apis/apps/v1/namespaces/{namespace}/replicasets/{name}/status"));
}

TEST(OpenApiTest, EveryResourceHasPatchAndSchemaWithGvk) {
  for (const auto& r : scheme().resources()) {
    std::string gv = r.group.empty() ? "api/" + r.version : "apis/" + r.group + "/" + r.version;
    json d = doc(gv);
    const json& schemas = d["components"]["schemas"];
    std::string def = definitionName(r);
    ASSERT_TRUE(schemas.contains(def)) << def;
    bool gvkFound = false;
    for (const auto& g : schemas[def]["x-kubernetes-group-version-kind"]) {
      gvkFound |= g == json({{"group", r.group}, {"version", r.version}, {"kind", r.kind}});
    }
    EXPECT_TRUE(gvkFound) << def;
    if (r.verbs.size() == 1) continue;  // bindings: create only
    std::string item =
        "/" + gv + (r.namespaced ? "/namespaces/{namespace}/" : "/") + r.plural + "/{name}";
    ASSERT_TRUE(d["paths"].contains(item)) << item;
    EXPECT_EQ(d["paths"][item]["patch"]["x-kubernetes-group-version-kind"]["kind"], r.kind);
    EXPECT_TRUE(hasQueryParam(d["paths"][item]["patch"], "fieldValidation")) << item;
  }
}

TEST(OpenApiTest, ClusterScopedPathsHaveNoNamespace) {
  json d = doc("api/v1");
  EXPECT_TRUE(d["paths"].contains("/api/v1/nodes/{name}"));
  EXPECT_TRUE(d["paths"].contains("/api/v1/nodes/{name}/status"));
  EXPECT_FALSE(d["paths"].contains("/api/v1/namespaces/{namespace}/nodes/{name}"));
  EXPECT_TRUE(d["paths"].contains("/api/v1/namespaces/{namespace}/pods/{name}/eviction"));
  EXPECT_TRUE(d["paths"].contains("/api/v1/namespaces/{namespace}/pods/{name}/binding"));
  EXPECT_FALSE(d["paths"].contains("/api/v1/namespaces/{namespace}/pods/{name}/log"));
  EXPECT_TRUE(d["paths"].contains("/api/v1/namespaces/{namespace}/bindings"));
  EXPECT_TRUE(d["components"]["schemas"].contains("io.k8s.api.policy.v1.Eviction"));
}

// Every $ref of a document points into its own components, so kubectl explain can follow it.
TEST(OpenApiTest, ComponentsAreClosedUnderRefs) {
  const json index = openapiV3Index(scheme());  // not a temporary: the loop outlives the statement
  for (const auto& [path, entry] : index["paths"].items()) {
    json d = doc(path);
    const json& schemas = d["components"]["schemas"];
    size_t refs = 0;
    std::function<void(const json&)> walk = [&](const json& n) {
      if (n.is_object()) {
        if (n.contains("$ref")) {
          ++refs;
          std::string r = n["$ref"];
          ASSERT_EQ(r.rfind("#/components/schemas/", 0), 0u) << r;
          EXPECT_TRUE(schemas.contains(r.substr(21))) << path << " lacks " << r;
        }
        for (const auto& [k, v] : n.items()) walk(v);
      } else if (n.is_array()) {
        for (const auto& v : n) walk(v);
      }
    };
    walk(d);
    EXPECT_GT(refs, 0u);
  }
}

// kubectl parses every operation into kube-openapi structs; one schema that is not an object
// (a bare string once slipped in) makes it drop the document and fall back to /openapi/v2.
TEST(OpenApiTest, EveryBodySchemaIsAReferenceObject) {
  const json index = openapiV3Index(scheme());
  for (const auto& [gv, entry] : index["paths"].items()) {
    json d = doc(gv);
    size_t bodies = 0;
    for (const auto& [path, item] : d["paths"].items()) {
      for (const auto& [method, op] : item.items()) {
        if (method == "parameters") continue;
        if (op.contains("requestBody")) {
          ++bodies;
          const json& schema = op["requestBody"]["content"]["application/json"]["schema"];
          ASSERT_TRUE(schema.is_object()) << path << " " << method;
          EXPECT_TRUE(schema["$ref"].is_string()) << path << " " << method;
        }
        for (const auto& [code, response] : op["responses"].items()) {
          if (!response.contains("content")) continue;
          EXPECT_TRUE(response["content"]["application/json"]["schema"].is_object()) << path;
        }
      }
    }
    EXPECT_GT(bodies, 0u) << gv;
  }
  json core = doc("api/v1");
  EXPECT_EQ(core["paths"]["/api/v1/namespaces/{namespace}/pods/{name}/binding"]["post"]
                ["requestBody"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/io.k8s.api.core.v1.Binding");
}

TEST(OpenApiTest, PodSchemaIsRichEnoughForExplain) {
  json d = doc("api/v1");
  const json& schemas = d["components"]["schemas"];
  const json& pod = schemas["io.k8s.api.core.v1.Pod"];
  EXPECT_FALSE(pod["description"].get<std::string>().empty());
  EXPECT_EQ(pod["properties"]["spec"]["allOf"][0]["$ref"],
            "#/components/schemas/io.k8s.api.core.v1.PodSpec");
  const json& spec = schemas["io.k8s.api.core.v1.PodSpec"];
  EXPECT_EQ(spec["properties"]["containers"]["type"], "array");
  EXPECT_EQ(spec["properties"]["containers"]["items"]["$ref"],
            "#/components/schemas/io.k8s.api.core.v1.Container");
  EXPECT_EQ(spec["required"], json::array({"containers"}));
  const json& c = schemas["io.k8s.api.core.v1.Container"]["properties"];
  for (const char* f : {"name", "image", "command", "args", "env", "envFrom", "ports", "resources",
                        "volumeMounts", "livenessProbe", "readinessProbe", "startupProbe",
                        "lifecycle", "securityContext", "imagePullPolicy", "workingDir"}) {
    EXPECT_TRUE(c.contains(f)) << f;
    EXPECT_TRUE(c[f].contains("description")) << f;
  }
  const json& meta = schemas["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]["properties"];
  EXPECT_EQ(meta["labels"]["additionalProperties"]["type"], "string");
  EXPECT_EQ(meta["creationTimestamp"]["format"], "date-time");
  EXPECT_EQ(schemas["io.k8s.api.core.v1.ContainerPort"]["properties"]["containerPort"]["format"],
            "int32");
  const json& port = schemas["io.k8s.api.core.v1.HTTPGetAction"]["properties"]["port"];
  EXPECT_EQ(port["x-kubernetes-int-or-string"], true);
  // A $ref to a oneOf definition: kubectl explain prints <IntOrString>, <map[string]Quantity>.
  EXPECT_EQ(port["allOf"][0]["$ref"],
            "#/components/schemas/io.k8s.apimachinery.pkg.util.intstr.IntOrString");
  EXPECT_EQ(schemas["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["oneOf"].size(), 2u);
  EXPECT_FALSE(schemas["io.k8s.apimachinery.pkg.api.resource.Quantity"].contains("type"));
  EXPECT_EQ(schemas["io.k8s.api.core.v1.ResourceRequirements"]["properties"]["limits"]
                   ["additionalProperties"]["$ref"],
            "#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity");
  EXPECT_TRUE(schemas.contains("io.k8s.api.core.v1.PodList"));
  const json& volume = schemas["io.k8s.api.core.v1.Volume"]["properties"];
  for (const char* f : {"emptyDir", "hostPath", "configMap", "secret", "persistentVolumeClaim",
                        "projected", "downwardAPI"}) {
    EXPECT_TRUE(volume.contains(f)) << f;
  }
}

TEST(OpenApiTest, HpaDocumentsDifferPerVersion) {
  json v2 = doc("apis/autoscaling/v2");
  json v1 = doc("apis/autoscaling/v1");
  EXPECT_TRUE(
      v2["components"]["schemas"].contains("io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler"));
  EXPECT_FALSE(
      v2["components"]["schemas"].contains("io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler"));
  EXPECT_TRUE(v1["components"]["schemas"]["io.k8s.api.autoscaling.v1.HorizontalPodAutoscalerSpec"]
                ["properties"]
                    .contains("targetCPUUtilizationPercentage"));
  EXPECT_TRUE(v1["paths"].contains(
      "/apis/autoscaling/v1/namespaces/{namespace}/horizontalpodautoscalers/{name}"));
}

}  // namespace
}  // namespace minik8s::api
