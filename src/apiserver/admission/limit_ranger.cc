#include "apiserver/admission/limit_ranger.h"

#include <algorithm>

#include "api/object_meta.h"
#include "api/quantity.h"
#include "api/resource_quota.h"
#include "common/random.h"

namespace minik8s::apiserver::admission {

namespace {

constexpr char kLimitRangerAnnotation[] = "kubernetes.io/limit-ranger";

using api::member;

const json& items(const json& obj, const char* key) {
  static const json kEmpty = json::array();
  const json& v = member(obj, key);
  return v.is_array() ? v : kEmpty;
}

std::string joined(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

// Go's %f: six decimals.
std::string goFloat(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%f", v);
  return buf;
}

// mergeContainerResources: what the container lacks of the defaults.
void mergeContainer(json& container, const json& limits, const json& requests,
                    const std::string& prefix, std::vector<std::string>& notes) {
  if (!container.is_object()) return;
  json& res = container["resources"];
  if (!res.is_object()) res = json::object();
  for (const char* k : {"limits", "requests"}) {
    if (!res.contains(k) || !res[k].is_object()) res[k] = json::object();
  }
  // The API's defaulting, which kube-apiserver runs before admission: a limit without a request
  // is also the request.
  for (const auto& [k, v] : res["limits"].items()) {
    if (!res["requests"].contains(k)) res["requests"][k] = v;
  }
  std::vector<std::string> setLimits, setRequests;
  for (const auto& [k, v] : limits.items()) {
    if (!res["limits"].contains(k)) {
      res["limits"][k] = v;
      setLimits.push_back(k);
    }
  }
  for (const auto& [k, v] : requests.items()) {
    if (!res["requests"].contains(k)) {
      res["requests"][k] = v;
      setRequests.push_back(k);
    }
  }
  for (const char* k : {"limits", "requests"}) {
    if (res[k].empty()) res.erase(k);
  }
  const json& n = member(container, "name");
  const std::string name = n.is_string() ? n.get<std::string>() : "";
  if (!setRequests.empty()) {
    notes.push_back(joined(setRequests, ", ") + " request for " + prefix + " " + name);
  }
  if (!setLimits.empty()) {
    notes.push_back(joined(setLimits, ", ") + " limit for " + prefix + " " + name);
  }
}

// minConstraint, maxConstraint and limitRequestRatioConstraint of the LimitRanger.
void checkMin(const std::string& type, const std::string& name, const api::Quantity& enforced,
              const api::ResourceList& requests, const api::ResourceList& limits,
              std::vector<std::string>& errs) {
  auto req = requests.find(name);
  auto lim = limits.find(name);
  const std::string head = "minimum " + name + " usage per " + type + " is " + enforced.toString();
  if (req == requests.end()) {
    errs.push_back(head + ".  No request is specified");
  } else if (req->second.compare(enforced) < 0) {
    errs.push_back(head + ", but request is " + req->second.toString());
  } else if (lim != limits.end() && lim->second.compare(enforced) < 0) {
    errs.push_back(head + ", but limit is " + lim->second.toString());
  }
}

void checkMax(const std::string& type, const std::string& name, const api::Quantity& enforced,
              const api::ResourceList& requests, const api::ResourceList& limits,
              std::vector<std::string>& errs) {
  auto req = requests.find(name);
  auto lim = limits.find(name);
  const std::string head = "maximum " + name + " usage per " + type + " is " + enforced.toString();
  if (lim == limits.end()) {
    errs.push_back(head + ".  No limit is specified");
  } else if (lim->second.compare(enforced) > 0) {
    errs.push_back(head + ", but limit is " + lim->second.toString());
  } else if (req != requests.end() && req->second.compare(enforced) > 0) {
    errs.push_back(head + ", but request is " + req->second.toString());
  }
}

void checkRatio(const std::string& type, const std::string& name, const api::Quantity& enforced,
                const api::ResourceList& requests, const api::ResourceList& limits,
                std::vector<std::string>& errs) {
  auto req = requests.find(name);
  auto lim = limits.find(name);
  const std::string head =
      name + " max limit to request ratio per " + type + " is " + enforced.toString();
  if (req == requests.end() || req->second.isZero()) {
    errs.push_back(head + ", but no request is specified or request is 0");
    return;
  }
  if (lim == limits.end() || lim->second.isZero()) {
    errs.push_back(head + ", but no limit is specified or limit is 0");
    return;
  }
  const double ratio =
      static_cast<double>(lim->second.milliValue()) / static_cast<double>(req->second.milliValue());
  if (ratio * 1000 > static_cast<double>(enforced.milliValue())) {
    errs.push_back(head + ", but provided ratio is " + goFloat(ratio));
  }
}

void checkAll(const json& item, const std::string& type, const api::ResourceList& requests,
              const api::ResourceList& limits, std::vector<std::string>& errs) {
  for (const auto& [k, v] : api::parseResourceList(member(item, "min")))
    checkMin(type, k, v, requests, limits, errs);
  for (const auto& [k, v] : api::parseResourceList(member(item, "max")))
    checkMax(type, k, v, requests, limits, errs);
  for (const auto& [k, v] : api::parseResourceList(member(item, "maxLimitRequestRatio")))
    checkRatio(type, k, v, requests, limits, errs);
}

}  // namespace

std::vector<std::string> applyLimitRangeDefaults(const json& limitRange, json& pod) {
  json limits = json::object(), requests = json::object();
  for (const auto& item : items(member(limitRange, "spec"), "limits")) {
    if (member(item, "type") != json("Container")) continue;
    if (member(item, "default").is_object()) limits.update(member(item, "default"));
    if (member(item, "defaultRequest").is_object()) requests.update(member(item, "defaultRequest"));
  }
  std::vector<std::string> notes;
  if (limits.empty() && requests.empty()) return notes;
  if (!pod.contains("spec") || !pod["spec"].is_object()) return notes;
  json& spec = pod["spec"];
  for (const auto& [list, prefix] :
       {std::pair{"containers", "container"}, std::pair{"initContainers", "init container"}}) {
    if (!spec.contains(list) || !spec[list].is_array()) continue;
    for (auto& c : spec[list]) mergeContainer(c, limits, requests, prefix, notes);
  }
  return notes;
}

std::vector<std::string> podLimitRangeViolations(const json& limitRange, const json& pod) {
  std::vector<std::string> errs;
  const json& spec = member(pod, "spec");
  for (const auto& item : items(member(limitRange, "spec"), "limits")) {
    const json& type = member(item, "type");
    if (type == json("Container")) {
      for (const char* list : {"containers", "initContainers"}) {
        for (const auto& c : items(spec, list)) {
          // Requests as stored: a limit alone is also the request.
          checkAll(item, "Container", api::containerRequests(c), api::containerLimits(c), errs);
        }
      }
    } else if (type == json("Pod")) {
      checkAll(item, "Pod", api::podRequests(pod), api::podLimits(pod), errs);
    }
  }
  return errs;
}

std::vector<std::string> claimLimitRangeViolations(const json& limitRange, const json& claim) {
  std::vector<std::string> errs;
  const api::ResourceList requests =
      api::parseResourceList(member(member(member(claim, "spec"), "resources"), "requests"));
  for (const auto& item : items(member(limitRange, "spec"), "limits")) {
    if (member(item, "type") != json("PersistentVolumeClaim")) continue;
    for (const auto& [k, v] : api::parseResourceList(member(item, "min")))
      checkMin("PersistentVolumeClaim", k, v, requests, {}, errs);
    // The claim's request is held against max as if it were a limit.
    for (const auto& [k, v] : api::parseResourceList(member(item, "max")))
      checkMax("PersistentVolumeClaim", k, v, {}, requests, errs);
  }
  return errs;
}

Status admissionForbidden(const auth::AdmissionRequest& request, const std::string& message) {
  const json& meta = request.newObject ? member(*request.newObject, "metadata") : json();
  std::string name =
      member(meta, "name").is_string() ? member(meta, "name").get<std::string>() : "";
  if (name.empty() && member(meta, "generateName").is_string()) {
    name = member(meta, "generateName").get<std::string>() + randomSuffix();
  }
  if (name.empty()) name = request.request.name.empty() ? "Unknown" : request.request.name;
  const std::string& group = request.request.group;
  const std::string resource =
      group.empty() ? request.request.resource : request.request.resource + "." + group;
  Status s = Status::Forbidden(resource + " \"" + name + "\" is forbidden: " + message);
  s.withDetails(name, group, request.request.resource);
  return s;
}

Status LimitRanger::admit(auth::AdmissionRequest& request) {
  const RequestInfo& ri = request.request;
  if (!request.newObject || !ri.group.empty() || !ri.subresource.empty()) return Status::Ok();
  const bool pod = ri.resource == "pods" && request.operation == "CREATE";
  const bool claim = ri.resource == "persistentvolumeclaims" &&
                     (request.operation == "CREATE" || request.operation == "UPDATE");
  if (!pod && !claim) return Status::Ok();
  if (request.oldObject &&
      member(member(*request.oldObject, "metadata"), "deletionTimestamp").is_string()) {
    return Status::Ok();
  }
  const auto* info = registry_.scheme().byResource("", "v1", "limitranges");
  if (!info) return Status::Ok();
  auto limitRanges = lister_->list(*info, ri.namespaceName);
  if (!limitRanges.ok()) {
    return Status::Forbidden("error looking up LimitRanges of namespace " + ri.namespaceName +
                             ": " + limitRanges.status().message());
  }
  if (limitRanges->empty()) return Status::Ok();
  json& obj = *request.newObject;
  std::vector<std::string> errs;
  if (pod) {
    std::vector<std::string> notes;
    for (const auto& lr : *limitRanges) {
      auto set = applyLimitRangeDefaults(*lr, obj);
      notes.insert(notes.end(), set.begin(), set.end());
    }
    if (!notes.empty()) {
      if (!obj.contains("metadata") || !obj["metadata"].is_object())
        obj["metadata"] = json::object();
      json& ann = obj["metadata"]["annotations"];
      if (!ann.is_object()) ann = json::object();
      ann[kLimitRangerAnnotation] = "LimitRanger plugin set: " + joined(notes, "; ");
    }
    for (const auto& lr : *limitRanges) {
      errs = podLimitRangeViolations(*lr, obj);
      if (!errs.empty()) break;
    }
  } else {
    for (const auto& lr : *limitRanges) {
      errs = claimLimitRangeViolations(*lr, obj);
      if (!errs.empty()) break;
    }
  }
  if (errs.empty()) return Status::Ok();
  // utilerrors.NewAggregate: one error as itself, several as [a, b].
  const std::string message = errs.size() == 1 ? errs[0] : "[" + joined(errs, ", ") + "]";
  return admissionForbidden(request, message);
}

}  // namespace minik8s::apiserver::admission
