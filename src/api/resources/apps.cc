// apps/v1: Deployments, ReplicaSets, DaemonSets, StatefulSets and ControllerRevisions.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "api/defaulting.h"
#include "api/resources/builders.h"
#include "api/validation/kinds.h"
#include "common/strings.h"

namespace minik8s::api::resources {
namespace {

json deploymentCells(const json& obj, const json& meta, TimePoint now) {
  const json& spec = object(obj, "spec");
  const json& status = object(obj, "status");
  const json& podSpec = object(object(spec, "template"), "spec");
  return json::array({str(meta, "name"),
                      std::to_string(integer(status, "readyReplicas")) + "/" +
                          std::to_string(integer(spec, "replicas", 1)),
                      integer(status, "updatedReplicas"), integer(status, "availableReplicas"),
                      age(meta, now), containerNames(podSpec), containerImages(podSpec),
                      labelSelectorString(object(spec, "selector"))});
}

json daemonSetCells(const json& obj, const json& meta, TimePoint now) {
  const json& spec = object(obj, "spec");
  const json& status = object(obj, "status");
  const json& podSpec = object(object(spec, "template"), "spec");
  std::string nodeSelector;
  for (const auto& [k, v] : object(podSpec, "nodeSelector").items()) {
    if (!nodeSelector.empty()) nodeSelector += ",";
    nodeSelector += k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  }
  return json::array({str(meta, "name"), integer(status, "desiredNumberScheduled"),
                      integer(status, "currentNumberScheduled"), integer(status, "numberReady"),
                      integer(status, "updatedNumberScheduled"), integer(status, "numberAvailable"),
                      orNone(nodeSelector), age(meta, now), containerNames(podSpec),
                      containerImages(podSpec),
                      orNone(labelSelectorString(object(spec, "selector")))});
}

json statefulSetCells(const json& obj, const json& meta, TimePoint now) {
  const json& spec = object(obj, "spec");
  const json& status = object(obj, "status");
  const json& podSpec = object(object(spec, "template"), "spec");
  return json::array({str(meta, "name"),
                      std::to_string(integer(status, "readyReplicas")) + "/" +
                          std::to_string(integer(spec, "replicas", 1)),
                      age(meta, now), containerNames(podSpec), containerImages(podSpec)});
}

json controllerRevisionCells(const json& obj, const json& meta, TimePoint now) {
  std::string controller = "<none>";
  for (const auto& ref : array(meta, "ownerReferences")) {
    if (ref.value("controller", false)) {
      std::string group = str(ref, "apiVersion");
      group = group.find('/') == std::string::npos ? "" : "." + group.substr(0, group.find('/'));
      const std::string kind = asciiLower(str(ref, "kind"));
      controller = kind + group + "/" + str(ref, "name");
    }
  }
  return json::array({str(meta, "name"), controller, integer(obj, "revision"), age(meta, now)});
}

json replicaSetCells(const json& obj, const json& meta, TimePoint now) {
  const json& spec = object(obj, "spec");
  const json& status = object(obj, "status");
  const json& podSpec = object(object(spec, "template"), "spec");
  return json::array({str(meta, "name"), integer(spec, "replicas", 1), integer(status, "replicas"),
                      integer(status, "readyReplicas"), age(meta, now), containerNames(podSpec),
                      containerImages(podSpec),
                      orNone(labelSelectorString(object(spec, "selector")))});
}

ResourceType deployment() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("apps", "v1", "Deployment", "deployments", "deployment");
  r.shortNames = {"deploy"};
  r.categories = {"all"};
  r.subresources = {scaleSubresource(), statusOf(r)};
  t.defaults = defaulting::deployment;
  t.validate = validation::validateDeployment;
  t.columns = {nameColumn(),
               col("Ready", "Number of the pod with ready state"),
               col("Up-to-date",
                   "Total number of non-terminated pods targeted by this "
                   "deployment that have the desired template spec."),
               col("Available",
                   "Total number of available pods targeted by this "
                   "deployment."),
               ageColumn(),
               containersColumn(),
               imagesColumn(),
               wide("Selector", "Label selector for pods.")};
  t.cells = deploymentCells;
  return t;
}

ResourceType replicaSet() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("apps", "v1", "ReplicaSet", "replicasets", "replicaset");
  r.shortNames = {"rs"};
  r.categories = {"all"};
  r.subresources = {scaleSubresource(), statusOf(r)};
  t.defaults = defaulting::replicaSet;
  t.validate = validation::validateReplicaSet;
  t.columns = {nameColumn(),
               col("Desired", "Number of desired pods.", "integer"),
               col("Current", "Most recently observed number of replicas.", "integer"),
               col("Ready", "Number of pods with a Ready condition.", "integer"),
               ageColumn(),
               containersColumn(),
               imagesColumn(),
               wide("Selector", "Label selector for pods.")};
  t.cells = replicaSetCells;
  return t;
}

ResourceType daemonSet() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("apps", "v1", "DaemonSet", "daemonsets", "daemonset");
  r.shortNames = {"ds"};
  r.categories = {"all"};
  r.subresources = {statusOf(r)};
  t.defaults = defaulting::daemonSet;
  t.validate = validation::validateDaemonSet;
  t.columns = {
      nameColumn(),
      col("Desired", "The number of nodes that should be running the daemon pod.", "integer"),
      col("Current", "The number of nodes running at least one daemon pod.", "integer"),
      col("Ready", "The number of nodes with a ready daemon pod.", "integer"),
      col("Up-to-date", "The number of nodes running the updated daemon pod.", "integer"),
      col("Available", "The number of nodes with an available daemon pod.", "integer"),
      col("Node Selector", "The node selector of the daemon pods."),
      ageColumn(),
      containersColumn(),
      imagesColumn(),
      wide("Selector", "Label selector for pods.")};
  t.cells = daemonSetCells;
  return t;
}

ResourceType statefulSet() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("apps", "v1", "StatefulSet", "statefulsets", "statefulset");
  r.shortNames = {"sts"};
  r.categories = {"all"};
  r.subresources = {scaleSubresource(), statusOf(r)};
  t.defaults = defaulting::statefulSet;
  t.validate = validation::validateStatefulSet;
  t.columns = {nameColumn(), col("Ready", "Number of the pod with ready state"), ageColumn(),
               containersColumn(), imagesColumn()};
  t.cells = statefulSetCells;
  return t;
}

ResourceType controllerRevision() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("apps", "v1", "ControllerRevision", "controllerrevisions", "controllerrevision");
  t.validate = validation::validateControllerRevision;
  t.columns = {nameColumn(), col("Controller", "The owner of this ControllerRevision."),
               col("Revision", "The revision number.", "integer"), ageColumn()};
  t.cells = controllerRevisionCells;
  return t;
}

}  // namespace

void addAppsResources(std::vector<ResourceType>& out) {
  out.push_back(deployment());
  out.push_back(replicaSet());
  out.push_back(daemonSet());
  out.push_back(statefulSet());
  out.push_back(controllerRevision());
}

}  // namespace minik8s::api::resources
