// The user and group names Kubernetes gives special meaning to. Both the API server's
// authentication and authorization (apiserver/auth) and the rules other rooms apply to them
// (api/csr_rules.h: which node certificates are approved) read them from here.
#pragma once

namespace minik8s::api {

inline constexpr const char* kSystemMasters = "system:masters";
inline constexpr const char* kAuthenticated = "system:authenticated";
inline constexpr const char* kUnauthenticated = "system:unauthenticated";
inline constexpr const char* kAnonymousUser = "system:anonymous";
inline constexpr const char* kNodesGroup = "system:nodes";
inline constexpr const char* kNodeUserPrefix = "system:node:";
inline constexpr const char* kBootstrappersGroup = "system:bootstrappers";
inline constexpr const char* kServiceAccountUserPrefix = "system:serviceaccount:";
inline constexpr const char* kServiceAccountsGroup = "system:serviceaccounts";

}  // namespace minik8s::api
