// admissionregistration.k8s.io/v1 webhook configurations, apiextensions.k8s.io/v1
// CustomResourceDefinitions and minik8s.io/v1 Dns.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "api/custom_resource.h"
#include "api/defaulting.h"
#include "api/resources/builders.h"
#include "api/validation/kinds.h"

namespace minik8s::api::resources {
namespace {

std::vector<TableColumn> webhookColumns() {
  return {nameColumn(), col("Webhooks", "The number of webhooks.", "integer"), ageColumn()};
}

json webhookCells(const json& obj, const json& meta, TimePoint now) {
  const json webhooks = obj.value("webhooks", json::array());
  return json::array(
      {str(meta, "name"), webhooks.is_array() ? webhooks.size() : 0, age(meta, now)});
}

// A CustomResourceDefinition gets the cleanup finalizer: deleting it deletes its objects first.
void prepareCrdForCreate(json& obj) {
  obj["status"] = json::object();
  json& finalizers = obj["metadata"]["finalizers"];
  if (!finalizers.is_array()) finalizers = json::array();
  if (std::find(finalizers.begin(), finalizers.end(), json(kCrdCleanupFinalizer)) ==
      finalizers.end()) {
    finalizers.push_back(kCrdCleanupFinalizer);
  }
}

json dnsCells(const json& obj, const json& meta, TimePoint now) {
  const json& spec = object(obj, "spec");
  std::string paths;
  for (const auto& p : array(spec, "paths")) {
    paths += (paths.empty() ? "" : ",") + str(p, "path") + "->" + str(p, "serviceName") + ":" +
             std::to_string(integer(p, "servicePort"));
  }
  return json::array({str(meta, "name"), str(spec, "host"), orNone(paths), age(meta, now)});
}

ResourceType mutatingWebhookConfiguration() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration",
               "mutatingwebhookconfigurations", "mutatingwebhookconfiguration");
  r.namespaced = false;
  r.categories = {"api-extensions"};
  t.defaults = defaulting::mutatingWebhookConfiguration;
  t.validate = validation::validateMutatingWebhookConfiguration;
  t.columns = webhookColumns();
  t.cells = webhookCells;
  return t;
}

ResourceType validatingWebhookConfiguration() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration",
               "validatingwebhookconfigurations", "validatingwebhookconfiguration");
  r.namespaced = false;
  r.categories = {"api-extensions"};
  t.defaults = defaulting::validatingWebhookConfiguration;
  t.validate = validation::validateValidatingWebhookConfiguration;
  t.columns = webhookColumns();
  t.cells = webhookCells;
  return t;
}

ResourceType customResourceDefinition() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("apiextensions.k8s.io", "v1", "CustomResourceDefinition",
               "customresourcedefinitions", "customresourcedefinition");
  r.namespaced = false;
  r.shortNames = {"crd", "crds"};
  r.categories = {"api-extensions"};
  r.subresources = {statusOf(r)};
  t.defaults = defaulting::customResourceDefinition;
  t.validate = validation::validateCustomResourceDefinition;
  t.columns = {nameColumn(), col("Created At", "The time the definition was created.", "date")};
  t.cells = [](const json&, const json& meta, TimePoint) {
    return json::array({str(meta, "name"), str(meta, "creationTimestamp")});
  };
  t.prepareForCreate = prepareCrdForCreate;
  return t;
}

ResourceType dns() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("minik8s.io", "v1", "Dns", "dnses", "dns");
  r.subresources = {statusOf(r)};
  t.validate = validation::validateDns;
  t.columns = {nameColumn(), col("Host", "Host name served."),
               col("Paths", "Paths of the host and the service port each forwards to."),
               ageColumn()};
  t.cells = dnsCells;
  return t;
}

}  // namespace

void addExtensionResources(std::vector<ResourceType>& out) {
  out.push_back(mutatingWebhookConfiguration());
  out.push_back(validatingWebhookConfiguration());
  out.push_back(customResourceDefinition());
  out.push_back(dns());
}

}  // namespace minik8s::api::resources
