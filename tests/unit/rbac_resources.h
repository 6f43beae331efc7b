// The RBAC resources, for tests that create roles and bindings through a RestClient.
#pragma once

#include "client/rest_client.h"

namespace minik8s::testing {

inline const client::Resource kRoles{"rbac.authorization.k8s.io", "v1", "roles", true};
inline const client::Resource kRoleBindings{"rbac.authorization.k8s.io", "v1", "rolebindings",
                                            true};
inline const client::Resource kClusterRoles{"rbac.authorization.k8s.io", "v1", "clusterroles",
                                            false};
inline const client::Resource kClusterRoleBindings{"rbac.authorization.k8s.io", "v1",
                                                   "clusterrolebindings", false};

}  // namespace minik8s::testing
