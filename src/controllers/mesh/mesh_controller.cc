#include "controllers/mesh/mesh_controller.h"

#include "api/object_meta.h"
#include "common/logging.h"

namespace minik8s::controllers {

namespace {

const client::Resource kClusterRoleBindings{"rbac.authorization.k8s.io", "v1",
                                            "clusterrolebindings", false};
constexpr char kRole[] = "minik8s:mesh-proxy";

std::string bindingName(const std::string& ns) { return std::string(kRole) + ":" + ns; }

}  // namespace

json meshProxyBinding(const std::string& ns) {
  return {{"apiVersion", "rbac.authorization.k8s.io/v1"},
          {"kind", "ClusterRoleBinding"},
          {"metadata",
           {{"name", bindingName(ns)}, {"labels", {{"app.kubernetes.io/managed-by", "minik8s"}}}}},
          {"roleRef",
           {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", kRole}}},
          {"subjects",
           {{{"kind", "Group"},
             {"apiGroup", "rbac.authorization.k8s.io"},
             {"name", "system:serviceaccounts:" + ns}}}}};
}

bool namespaceIsMeshed(const json& ns, bool allNamespaces) {
  const std::string label = api::labelValue(ns, "istio-injection");
  if (label == "enabled") return true;
  const std::string name = api::nameOf(ns);
  return allNamespaces && label != "disabled" && name != "kube-system" && name != "kube-public" &&
         name != "kube-node-lease";
}

MeshController::MeshController(client::RestClient& rest, client::Informer& namespaces,
                               const client::Clock& clock, bool allNamespaces)
    : rest_(rest),
      namespaces_(namespaces),
      queue_(clock),
      workers_(
          queue_, [this](const std::string& k) { return sync(k); }, "mesh"),
      allNamespaces_(allNamespaces) {
  auto enqueue = [this](const json& ns) { queue_.add(api::nameOf(ns)); };
  namespaces_.addHandlers(
      {enqueue, [enqueue](const json&, const json& ns) { enqueue(ns); }, enqueue});
}

MeshController::~MeshController() { stop(); }
void MeshController::start() { workers_.start(1); }
void MeshController::stop() { workers_.stop(); }

Status MeshController::sync(const std::string& name) {
  auto ns = namespaces_.get(name);
  const bool meshed = ns && !isTerminating(*ns) && namespaceIsMeshed(*ns, allNamespaces_);
  if (meshed) {
    auto r = rest_.create(kClusterRoleBindings, "", meshProxyBinding(name));
    if (r.ok()) LOG_INFO("mesh: namespace {} is meshed: its sidecars may read the registry", name);
    return r.ok() || r.status().code() == 409 ? Status() : r.status();
  }
  auto r = rest_.remove(kClusterRoleBindings, "", bindingName(name));
  return r.ok() || r.status().code() == 404 ? Status() : r.status();
}

}  // namespace minik8s::controllers
