// The default RBAC policy of a cluster, as kube-apiserver bootstraps it: ClusterRoles
// cluster-admin, admin, edit, view, system:basic-user, system:discovery,
// system:public-info-viewer, system:node-bootstrapper, system:kube-scheduler,
// system:kube-controller-manager, system:node, and the ClusterRoleBindings that grant them to
// system:masters, system:authenticated (and system:unauthenticated for public info),
// system:bootstrappers and the scheduler and controller-manager users. Every object carries the
// annotation rbac.authorization.kubernetes.io/autoupdate: "true" and the label
// kubernetes.io/bootstrapping: rbac-defaults. Pure functions plus one idempotent writer.
#pragma once

#include <vector>

#include "common/status.h"

namespace minik8s::apiserver {
class Registry;
}

namespace minik8s::apiserver::auth {

std::vector<json> bootstrapClusterRoles();
std::vector<json> bootstrapClusterRoleBindings();

// Creates the missing objects of the policy; objects annotated autoupdate "true" whose rules,
// aggregation rule, roleRef or subjects differ from the defaults are put back. Objects an admin
// annotated autoupdate "false" are left alone. Call at server start, after ApiServer::start().
Status ensureBootstrapPolicy(Registry& registry);

}  // namespace minik8s::apiserver::auth
