// Schemas of the security groups: rbac.authorization.k8s.io, authorization.k8s.io (access
// reviews), authentication.k8s.io (token and self reviews) and certificates.k8s.io.
#include "api/schema/schema_texts.h"

namespace minik8s::api::schema {

std::string_view securityGroupsSchemaText() {
  return R"schema(
package io.k8s.api.rbac.v1
Role @rbac.authorization.k8s.io/v1 +list: A Role is a namespaced set of PolicyRules, granted through a RoleBinding.
  rules []PolicyRule: The rules of the role.
ClusterRole @rbac.authorization.k8s.io/v1 +list: A ClusterRole is a cluster-wide set of PolicyRules, granted through a RoleBinding (in one namespace) or a ClusterRoleBinding.
  rules []PolicyRule: The rules of the role.
  aggregationRule AggregationRule: When set, the rules are the union of the ClusterRoles it selects (maintained by the server).
AggregationRule: How a ClusterRole gathers the rules of others.
  clusterRoleSelectors []LabelSelector: ClusterRoles matching any selector are aggregated.
PolicyRule: Actions allowed on resources or non-resource URLs.
  verbs! []string: Verbs allowed ("*" = all).
  apiGroups []string: API groups of the resources ("" = core, "*" = all).
  resources []string: Resources ("*" = all; "pods/log" names a subresource).
  resourceNames []string: Names the rule is limited to; empty = all.
  nonResourceURLs []string: Non-resource paths ("/healthz", "/api/*"); only in ClusterRoles.
RoleBinding @rbac.authorization.k8s.io/v1 +list: A RoleBinding grants the rules of a Role or ClusterRole to subjects within its namespace.
  subjects []Subject: Who the role is granted to.
  roleRef! RoleRef: The role granted; immutable.
ClusterRoleBinding @rbac.authorization.k8s.io/v1 +list: A ClusterRoleBinding grants the rules of a ClusterRole to subjects across the cluster.
  subjects []Subject: Who the role is granted to.
  roleRef! RoleRef: The ClusterRole granted; immutable.
Subject: A user, group or service account.
  kind! string: User, Group or ServiceAccount.
  apiGroup string: rbac.authorization.k8s.io for User and Group, "" for ServiceAccount.
  name! string: Name of the subject.
  namespace string: Namespace of a ServiceAccount.
RoleRef: The role a binding grants.
  apiGroup! string: rbac.authorization.k8s.io.
  kind! string: Role or ClusterRole.
  name! string: Name of the role.

package io.k8s.api.authorization.v1
SubjectAccessReview @authorization.k8s.io/v1: A SubjectAccessReview asks whether a user or group may perform an action. Not stored.
  spec! SubjectAccessReviewSpec: The user and the action.
  status SubjectAccessReviewStatus: The answer, filled by the server.
LocalSubjectAccessReview @authorization.k8s.io/v1: A SubjectAccessReview limited to one namespace. Not stored.
  spec! SubjectAccessReviewSpec: The user and the action.
  status SubjectAccessReviewStatus: The answer, filled by the server.
SelfSubjectAccessReview @authorization.k8s.io/v1: A SelfSubjectAccessReview asks whether the caller may perform an action (kubectl auth can-i). Not stored.
  spec! SelfSubjectAccessReviewSpec: The action.
  status SubjectAccessReviewStatus: The answer, filled by the server.
SelfSubjectRulesReview @authorization.k8s.io/v1: A SelfSubjectRulesReview lists what the caller may do in a namespace (kubectl auth can-i --list). Not stored.
  spec! SelfSubjectRulesReviewSpec: The namespace.
  status SubjectRulesReviewStatus: The rules, filled by the server.
SubjectAccessReviewSpec: A user (or group) and an action; exactly one of resourceAttributes and nonResourceAttributes.
  resourceAttributes ResourceAttributes: A request on a resource.
  nonResourceAttributes NonResourceAttributes: A request on a non-resource path.
  user string: The user.
  groups []string: The user's groups.
  extra object: The user's extra attributes.
  uid string: The user's uid.
SelfSubjectAccessReviewSpec: An action of the caller; exactly one of the two.
  resourceAttributes ResourceAttributes: A request on a resource.
  nonResourceAttributes NonResourceAttributes: A request on a non-resource path.
ResourceAttributes: A request on a resource.
  namespace string: Namespace ("" = all namespaces, or a cluster-scoped resource).
  verb string: get, list, watch, create, update, patch, delete, deletecollection or "*".
  group string: API group ("*" = all).
  version string: API version.
  resource string: Resource ("*" = all).
  subresource string: Subresource.
  name string: Name of the object ("" = all).
  fieldSelector object: Field selector of a list or watch.
  labelSelector object: Label selector of a list or watch.
NonResourceAttributes: A request on a non-resource path.
  path string: The URL path.
  verb string: The HTTP verb in lower case.
SubjectAccessReviewStatus: The answer of an access review.
  allowed! boolean: Whether the action is allowed.
  denied boolean: Whether the action is explicitly denied.
  reason string: Why.
  evaluationError string: An error met while evaluating.
SelfSubjectRulesReviewSpec: The namespace of a rules review.
  namespace string: The namespace.
SubjectRulesReviewStatus: The rules a user has in a namespace.
  resourceRules! []ResourceRule: Rules on resources.
  nonResourceRules! []NonResourceRule: Rules on non-resource paths.
  incomplete! boolean: Whether the list may be incomplete (some authorizer cannot list rules).
  evaluationError string: An error met while evaluating.
ResourceRule: Verbs allowed on resources.
  verbs! []string: Verbs.
  apiGroups []string: API groups.
  resources []string: Resources.
  resourceNames []string: Names.
NonResourceRule: Verbs allowed on non-resource paths.
  verbs! []string: Verbs.
  nonResourceURLs []string: Paths.

package io.k8s.api.authentication.v1
TokenReview @authentication.k8s.io/v1: A TokenReview asks the server who a bearer token belongs to. Not stored.
  spec! TokenReviewSpec: The token.
  status TokenReviewStatus: The answer, filled by the server.
TokenReviewSpec: A token to review.
  token string: The bearer token.
  audiences []string: Audiences the token must be valid for.
TokenReviewStatus: The result of a token review.
  authenticated boolean: Whether the token is valid.
  user UserInfo: Who the token belongs to.
  audiences []string: Audiences the token is valid for.
  error string: Why the token is not valid.
SelfSubjectReview @authentication.k8s.io/v1: A SelfSubjectReview returns who the caller is (kubectl auth whoami). Not stored.
  status SelfSubjectReviewStatus: The caller, filled by the server.
SelfSubjectReviewStatus: The caller of a SelfSubjectReview.
  userInfo UserInfo: The caller's identity.
UserInfo: An authenticated identity.
  username string: The user name.
  uid string: A unique id of the user.
  groups []string: The user's groups.
  extra object: Extra attributes.

package io.k8s.api.certificates.v1
CertificateSigningRequest @certificates.k8s.io/v1 +list: A CertificateSigningRequest asks a signer for a certificate; it is approved or denied, then the signer issues the certificate into its status.
  spec! CertificateSigningRequestSpec: The request; immutable.
  status CertificateSigningRequestStatus: Approval conditions and the issued certificate.
CertificateSigningRequestSpec: A certificate request.
  request! byte: PEM-encoded PKCS#10 CERTIFICATE REQUEST (base64 in JSON).
  signerName! string: The signer, e.g. kubernetes.io/kube-apiserver-client-kubelet.
  expirationSeconds int32: Requested lifetime of the certificate.
  usages []string: Key usages requested, e.g. digital signature, client auth.
  username string: Who created the request (set by the server).
  uid string: Uid of the creator (set by the server).
  groups []string: Groups of the creator (set by the server).
  extra object: Extra attributes of the creator (set by the server).
CertificateSigningRequestStatus: Approval and the issued certificate.
  conditions []CertificateSigningRequestCondition: Approved, Denied or Failed.
  certificate byte: The issued PEM certificate chain (base64 in JSON).
CertificateSigningRequestCondition: A condition of a request.
  type! string: Approved, Denied or Failed.
  status! string: True, False or Unknown.
  reason string: Machine-readable reason.
  message string: Human-readable details.
  lastUpdateTime date-time: Last update of the condition.
  lastTransitionTime date-time: Last status change.
)schema";
}

}  // namespace minik8s::api::schema
