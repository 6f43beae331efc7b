#include "apiserver/auth/node_authorizer.h"

#include <algorithm>
#include <initializer_list>

#include "apiserver/registry.h"

namespace minik8s::apiserver::auth {

namespace {

bool oneOf(const std::string& v, std::initializer_list<const char*> list) {
  return std::any_of(list.begin(), list.end(), [&](const char* x) { return v == x; });
}

bool isRead(const std::string& verb) { return oneOf(verb, {"get", "list", "watch"}); }

}  // namespace

std::string nodeNameOf(const UserInfo& user) {
  const std::string prefix = kNodeUserPrefix;
  if (!user.inGroup(kNodesGroup) || !user.name.starts_with(prefix)) return "";
  return user.name.substr(prefix.size());
}

Decision NodeAuthorizer::authorize(const Attributes& a) const {
  const std::string node = nodeNameOf(a.user);
  if (node.empty()) return Decision::noOpinion();
  if (!a.resourceRequest) return Decision::noOpinion();
  const std::string& verb = a.verb;
  const std::string& res = a.resource;
  const std::string& sub = a.subresource;
  if (a.apiGroup.empty()) {
    if (res == "pods") {
      if (sub.empty() && (isRead(verb) || verb == "create" || verb == "delete")) {
        return Decision::allow("node: pods");  // create/delete: mirror pods (admission checks)
      }
      if (sub == "status" && oneOf(verb, {"get", "update", "patch"})) {
        return Decision::allow("node: pod status");
      }
      if (sub == "eviction" && verb == "create") return Decision::allow("node: eviction");
      return Decision::noOpinion();
    }
    if (res == "nodes") {
      if (sub.empty() && (isRead(verb) || verb == "create")) return Decision::allow("node: nodes");
      if ((sub.empty() || sub == "status") && oneOf(verb, {"update", "patch"})) {
        if (a.name == node) return Decision::allow("node: its own node");
        return Decision::noOpinion("node '" + node + "' cannot modify node '" + a.name + "'");
      }
      return Decision::noOpinion();
    }
    if (sub.empty() && isRead(verb) &&
        oneOf(res, {"services", "endpoints", "persistentvolumeclaims", "persistentvolumes",
                    "namespaces"})) {
      return Decision::allow("node: " + res);
    }
    // Secrets and ConfigMaps: one by name, referenced by a pod bound to the node.
    if (sub.empty() && (res == "secrets" || res == "configmaps")) {
      if (verb != "get" || a.name.empty()) {
        return Decision::noOpinion("node '" + node + "' may only get individual " + res);
      }
      return authorizeReference(
          node, res == "secrets" ? NodeGraph::Kind::kSecret : NodeGraph::Kind::kConfigMap, a,
          res == "secrets" ? "secret" : "configmap");
    }
    // The node-deployment provisioner of the agent's node-local CSI driver (local.csi.minik8s.io)
    // creates and deletes the volumes of its node; NodeRestriction admits only volumes pinned
    // to the requesting node.
    if (res == "persistentvolumes" && sub.empty() && oneOf(verb, {"create", "delete"})) {
      return Decision::allow("node: node-local persistent volumes");
    }
    if (res == "events" && oneOf(verb, {"create", "update", "patch"})) {
      return Decision::allow("node: events");
    }
    // minik8s agents run the cluster DNS on every node: each keeps the kube-dns Service and
    // its own endpoints in kube-system (dns/dns_endpoint.h).
    if (res == "services" && sub.empty() && a.namespaceName == "kube-system" &&
        oneOf(verb, {"create", "update", "patch"})) {
      return Decision::allow("node: the cluster DNS service");
    }
    if (res == "serviceaccounts" && sub == "token" && verb == "create") {
      return authorizeReference(node, NodeGraph::Kind::kServiceAccount, a, "serviceaccount");
    }
    return Decision::noOpinion();
  }
  if (a.apiGroup == "coordination.k8s.io" && res == "leases") {
    if (a.namespaceName != "kube-node-lease") return Decision::noOpinion();
    if (verb == "create") return Decision::allow("node: lease");
    if (oneOf(verb, {"get", "update", "patch", "delete"})) {
      if (a.name == node) return Decision::allow("node: its own lease");
      return Decision::noOpinion("node '" + node + "' cannot access lease '" + a.name + "'");
    }
    return Decision::noOpinion();
  }
  // ... and reads the classes of the claims it provisions.
  if (a.apiGroup == "storage.k8s.io" && res == "storageclasses" && sub.empty() && isRead(verb)) {
    return Decision::allow("node: storage classes");
  }
  // The CSI drivers of a node (the kubelet writes its own CSINode).
  if (a.apiGroup == "storage.k8s.io" && res == "csinodes" && sub.empty()) {
    if (isRead(verb) || verb == "create") return Decision::allow("node: csinodes");
    if (oneOf(verb, {"update", "patch", "delete"})) {
      if (a.name == node) return Decision::allow("node: its own csinode");
      return Decision::noOpinion("node '" + node + "' cannot modify csinode '" + a.name + "'");
    }
    return Decision::noOpinion();
  }
  if (a.apiGroup == "certificates.k8s.io" && res == "certificatesigningrequests" && sub.empty() &&
      (isRead(verb) || verb == "create")) {
    return Decision::allow("node: certificate signing requests");
  }
  if (a.apiGroup == "discovery.k8s.io" && res == "endpointslices") {
    if (isRead(verb)) return Decision::allow("node: endpoint slices");
    if (a.namespaceName == "kube-system" && oneOf(verb, {"create", "update", "patch"}))
      return Decision::allow("node: the cluster DNS endpoints");
    return Decision::noOpinion();
  }
  // Every agent enforces the NetworkPolicies of its pods, whose peers may be any pod.
  if (a.apiGroup == "networking.k8s.io" && res == "networkpolicies" && sub.empty() &&
      isRead(verb)) {
    return Decision::allow("node: network policies");
  }
  // Every agent's Dns gateway renders all Dns objects and reports on them.
  if (a.apiGroup == "minik8s.io" && res == "dnses") {
    if (sub.empty() && isRead(verb)) return Decision::allow("node: dns objects");
    if (sub == "status" && oneOf(verb, {"update", "patch"}))
      return Decision::allow("node: dns status");
    return Decision::noOpinion();
  }
  if ((a.apiGroup == "authentication.k8s.io" && res == "tokenreviews") ||
      (a.apiGroup == "authorization.k8s.io" && res == "subjectaccessreviews")) {
    if (verb == "create") return Decision::allow("node: delegated authentication");
  }
  return Decision::noOpinion();
}

UserRules NodeAuthorizer::rulesFor(const UserInfo& user, const std::string&) const {
  return UserRules{{}, !nodeNameOf(user).empty()};
}

Decision NodeAuthorizer::authorizeReference(const std::string& node, NodeGraph::Kind kind,
                                            const Attributes& a, const std::string& what) const {
  if (!registry_) return Decision::allow("node: " + what + " (no registry to check against)");
  if (graph_ && graph_->references(node, kind, a.namespaceName, a.name)) {
    return Decision::allow("node: " + what + " referenced by a pod bound to it");
  }
  // Not (yet) in the graph: a pod bound a moment ago may not have reached it.
  auto found = NodeGraph::referencesInRegistry(*registry_, node, kind, a.namespaceName, a.name);
  if (!found.ok()) return Decision::noOpinion("node authorizer: " + found.status().message());
  if (*found) return Decision::allow("node: " + what + " referenced by a pod bound to it");
  return Decision::noOpinion("no relationship found between node '" + node + "' and this object");
}

}  // namespace minik8s::apiserver::auth
