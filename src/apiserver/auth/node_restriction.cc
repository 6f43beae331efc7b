#include "apiserver/auth/node_restriction.h"

#include <algorithm>
#include <set>

#include "api/persistent_volumes.h"
#include "apiserver/auth/node_authorizer.h"
#include "apiserver/registry.h"
#include "common/json_pointer.h"

namespace minik8s::apiserver::auth {

namespace {

// Labels kubelets set on their own node (kubelet's --node-labels and well-known topology).
const std::set<std::string> kKubeletLabels = {
    "kubernetes.io/hostname",
    "kubernetes.io/arch",
    "kubernetes.io/os",
    "beta.kubernetes.io/arch",
    "beta.kubernetes.io/os",
    "beta.kubernetes.io/instance-type",
    "node.kubernetes.io/instance-type",
    "failure-domain.beta.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "topology.kubernetes.io/zone",
};

std::string quote(const std::string& s) { return "\"" + s + "\""; }

// `<resource> "<name>" is forbidden: <why>`, as admission errors read in Kubernetes.
Status refuse(const AdmissionRequest& r, const std::string& why) {
  const RequestInfo& ri = r.request;
  std::string resource = ri.group.empty() ? ri.resource : ri.resource + "." + ri.group;
  std::string name = ri.name;
  if (name.empty() && r.newObject) {
    name = valueAt(*r.newObject, "/metadata/name", std::string());
  }
  Status s = Status::Forbidden(resource + (name.empty() ? "" : " " + quote(name)) +
                               " is forbidden: " + why);
  s.withDetails(name, ri.group, ri.resource);
  return s;
}

std::string objectName(const json* obj) {
  return obj ? valueAt(*obj, "/metadata/name", std::string()) : std::string();
}

std::string podNode(const json* pod) {
  return pod ? valueAt(*pod, "/spec/nodeName", std::string()) : std::string();
}

json labelsOf(const json* obj) {
  json labels = obj ? valueAt(*obj, "/metadata/labels", json::object()) : json();
  return labels.is_object() ? labels : json::object();
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

}  // namespace

bool kubeletMaySetLabel(const std::string& key) {
  const size_t slash = key.find('/');
  if (slash == std::string::npos) return true;  // no prefix: the user's own label
  const std::string prefix = key.substr(0, slash);
  if (prefix == "node-restriction.kubernetes.io" ||
      prefix.ends_with(".node-restriction.kubernetes.io")) {
    return false;
  }
  if (kKubeletLabels.count(key)) return true;
  if (prefix == "kubelet.kubernetes.io" || prefix.ends_with(".kubelet.kubernetes.io") ||
      prefix == "node.kubernetes.io" || prefix.ends_with(".node.kubernetes.io")) {
    return true;
  }
  const bool reserved = prefix == "kubernetes.io" || prefix.ends_with(".kubernetes.io") ||
                        prefix == "k8s.io" || prefix.ends_with(".k8s.io");
  return !reserved;
}

Status NodeRestriction::admit(AdmissionRequest& request) {
  const std::string node = nodeNameOf(request.user);
  if (node.empty()) return Status::Ok();
  const RequestInfo& ri = request.request;
  if (ri.group.empty() && ri.resource == "nodes") return admitNode(node, request);
  if (ri.group.empty() && ri.resource == "pods") return admitPod(node, request);
  if (ri.group == "coordination.k8s.io" && ri.resource == "leases") {
    return admitLease(node, request);
  }
  if (ri.group.empty() && ri.resource == "serviceaccounts" && ri.subresource == "token") {
    return admitToken(node, request);
  }
  if (ri.group.empty() && ri.resource == "persistentvolumes") return admitVolume(node, request);
  if (ri.group == "storage.k8s.io" && ri.resource == "csinodes") {
    const std::string target =
        request.operation == "CREATE" ? objectName(request.newObject) : ri.name;
    if (target != node) {
      return refuse(request,
                    "node " + quote(node) + " is not allowed to modify csinode " + quote(target));
    }
  }
  return Status::Ok();
}

Status NodeRestriction::admitNode(const std::string& node, const AdmissionRequest& r) {
  const std::string target = r.operation == "CREATE" ? objectName(r.newObject) : r.request.name;
  if (target != node) {
    return refuse(r, "node " + quote(node) + " is not allowed to modify node " + quote(target));
  }
  if (r.operation == "CREATE") {
    std::vector<std::string> bad;
    const json labels = labelsOf(r.newObject);
    for (auto it = labels.begin(); it != labels.end(); ++it) {
      if (!kubeletMaySetLabel(it.key())) bad.push_back(it.key());
    }
    if (!bad.empty()) {
      return refuse(
          r, "node " + quote(node) + " is not allowed to set the following labels: " + join(bad));
    }
    return Status::Ok();
  }
  if (r.operation == "UPDATE" && r.oldObject && r.newObject) {
    std::vector<std::string> bad;
    const json before = labelsOf(r.oldObject);
    const json after = labelsOf(r.newObject);
    std::set<std::string> keys;
    for (auto it = before.begin(); it != before.end(); ++it) keys.insert(it.key());
    for (auto it = after.begin(); it != after.end(); ++it) keys.insert(it.key());
    for (const auto& k : keys) {
      if (kubeletMaySetLabel(k)) continue;
      if (before.value(k, json()) != after.value(k, json())) bad.push_back(k);
    }
    if (!bad.empty()) {
      return refuse(r, "node " + quote(node) + " is not allowed to modify labels: " + join(bad));
    }
    const json taintsBefore = valueAt(*r.oldObject, "/spec/taints", json::array());
    const json taintsAfter = valueAt(*r.newObject, "/spec/taints", json::array());
    if (taintsBefore != taintsAfter) {
      return refuse(r, "node " + quote(node) + " is not allowed to modify taints");
    }
  }
  return Status::Ok();
}

Status NodeRestriction::admitPod(const std::string& node, const AdmissionRequest& r) {
  const std::string& sub = r.request.subresource;
  if (r.operation == "CREATE" && sub.empty()) {
    const json annotations = r.newObject
                                 ? valueAt(*r.newObject, "/metadata/annotations", json::object())
                                 : json::object();
    if (!annotations.is_object() || !annotations.contains("kubernetes.io/config.mirror")) {
      return refuse(r, "pod does not have \"kubernetes.io/config.mirror\" annotation, node " +
                           quote(node) + " can only create mirror pods");
    }
    if (podNode(r.newObject) != node) {
      return refuse(
          r, "node " + quote(node) + " can only create pods with spec.nodeName set to itself");
    }
    return Status::Ok();
  }
  if (r.operation == "CREATE" && sub == "eviction") {
    if (storedPodNode(r.request.namespaceName, r.request.name) != node) {
      return refuse(
          r, "node " + quote(node) + " can only evict pods with spec.nodeName set to itself");
    }
    return Status::Ok();
  }
  if (r.operation == "UPDATE") {
    if (sub != "status") return refuse(r, "node " + quote(node) + " can only update pod status");
    if (podNode(r.oldObject) != node) {
      return refuse(r, "node " + quote(node) +
                           " can only update pod status for pods with spec.nodeName set to "
                           "itself");
    }
    return Status::Ok();
  }
  if (r.operation == "DELETE") {
    if (podNode(r.oldObject) != node) {
      return refuse(
          r, "node " + quote(node) + " can only delete pods with spec.nodeName set to itself");
    }
    return Status::Ok();
  }
  return refuse(r, "node " + quote(node) + " is not allowed to " + r.request.verb + " pods/" + sub);
}

Status NodeRestriction::admitLease(const std::string& node, const AdmissionRequest& r) {
  const std::string name = r.operation == "CREATE" ? objectName(r.newObject) : r.request.name;
  if (r.request.namespaceName != "kube-node-lease" || name != node) {
    return refuse(r, "node " + quote(node) +
                         " can only access node lease with the same name as the requesting "
                         "node");
  }
  return Status::Ok();
}

Status NodeRestriction::admitToken(const std::string& node, const AdmissionRequest& r) {
  const json ref = r.newObject ? valueAt(*r.newObject, "/spec/boundObjectRef", json()) : json();
  if (!ref.is_object() || ref.value("kind", "") != "Pod") return Status::Ok();
  const std::string pod = ref.value("name", "");
  if (storedPodNode(r.request.namespaceName, pod) != node) {
    return refuse(r, "node " + quote(node) + " can only request tokens for pods bound to it");
  }
  return Status::Ok();
}

Status NodeRestriction::admitVolume(const std::string& node, const AdmissionRequest& r) {
  if (r.operation == "CREATE") {
    if (!r.newObject || !r.newObject->contains("/spec/csi"_json_pointer) ||
        !api::volumePinnedToNode(*r.newObject, node)) {
      return refuse(r, "node " + quote(node) +
                           " can only create CSI persistent volumes whose nodeAffinity requires "
                           "kubernetes.io/hostname in [" +
                           node + "]");
    }
    return Status::Ok();
  }
  if (r.operation == "DELETE") {
    if (!r.oldObject || !api::volumePinnedToNode(*r.oldObject, node)) {
      return refuse(r, "node " + quote(node) +
                           " can only delete persistent volumes pinned to itself by nodeAffinity");
    }
    return Status::Ok();
  }
  return refuse(
      r, "node " + quote(node) + " is not allowed to " + r.request.verb + " persistentvolumes");
}

std::string NodeRestriction::storedPodNode(const std::string& ns, const std::string& name) const {
  if (!registry_) return "";
  const auto* pods = registry_->scheme().byResource("", "v1", "pods");
  if (!pods) return "";
  auto pod = registry_->get(*pods, ns, name);
  return pod.ok() ? podNode(&*pod) : std::string();
}

}  // namespace minik8s::apiserver::auth
