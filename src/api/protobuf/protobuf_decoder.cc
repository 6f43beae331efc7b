#include "api/protobuf/protobuf_decoder.h"

#include <memory>

#include "api/protobuf/proto_json.h"
#include "k8s/apps_v1.pb.h"
#include "k8s/authentication_v1.pb.h"
#include "k8s/authorization_v1.pb.h"
#include "k8s/autoscaling_v1.pb.h"
#include "k8s/autoscaling_v2.pb.h"
#include "k8s/batch_v1.pb.h"
#include "k8s/certificates_v1.pb.h"
#include "k8s/core_v1.pb.h"
#include "k8s/networking_v1.pb.h"
#include "k8s/policy_v1.pb.h"
#include "k8s/rbac_v1.pb.h"
#include "k8s/runtime.pb.h"
#include "k8s/scheduling_v1.pb.h"

namespace minik8s::api {
namespace {

constexpr std::string_view kMagic{"k8s\0", 4};

struct DecodableKind {
  std::string_view apiVersion;
  std::string_view kind;
  const google::protobuf::Message* prototype;
};

// Naming each default instance also makes the linker keep the generated code.
const std::vector<DecodableKind>& decodableKinds() {
  namespace core = k8s::io::api::core::v1;
  static const std::vector<DecodableKind> kinds = {
      {"v1", "Namespace", &core::Namespace::default_instance()},
      {"v1", "ConfigMap", &core::ConfigMap::default_instance()},
      {"v1", "Secret", &core::Secret::default_instance()},
      {"v1", "ServiceAccount", &core::ServiceAccount::default_instance()},
      {"v1", "Service", &core::Service::default_instance()},
      {"v1", "ResourceQuota", &core::ResourceQuota::default_instance()},
      {"v1", "Pod", &core::Pod::default_instance()},
      {"apps/v1", "Deployment", &k8s::io::api::apps::v1::Deployment::default_instance()},
      {"batch/v1", "Job", &k8s::io::api::batch::v1::Job::default_instance()},
      {"batch/v1", "CronJob", &k8s::io::api::batch::v1::CronJob::default_instance()},
      {"autoscaling/v1", "HorizontalPodAutoscaler",
       &k8s::io::api::autoscaling::v1::HorizontalPodAutoscaler::default_instance()},
      {"autoscaling/v2", "HorizontalPodAutoscaler",
       &k8s::io::api::autoscaling::v2::HorizontalPodAutoscaler::default_instance()},
      {"authentication.k8s.io/v1", "TokenRequest",
       &k8s::io::api::authentication::v1::TokenRequest::default_instance()},
      {"authentication.k8s.io/v1", "SelfSubjectReview",
       &k8s::io::api::authentication::v1::SelfSubjectReview::default_instance()},
      {"authentication.k8s.io/v1", "TokenReview",
       &k8s::io::api::authentication::v1::TokenReview::default_instance()},
      {"authorization.k8s.io/v1", "SelfSubjectAccessReview",
       &k8s::io::api::authorization::v1::SelfSubjectAccessReview::default_instance()},
      {"authorization.k8s.io/v1", "SelfSubjectRulesReview",
       &k8s::io::api::authorization::v1::SelfSubjectRulesReview::default_instance()},
      {"authorization.k8s.io/v1", "SubjectAccessReview",
       &k8s::io::api::authorization::v1::SubjectAccessReview::default_instance()},
      {"authorization.k8s.io/v1", "LocalSubjectAccessReview",
       &k8s::io::api::authorization::v1::LocalSubjectAccessReview::default_instance()},
      {"certificates.k8s.io/v1", "CertificateSigningRequest",
       &k8s::io::api::certificates::v1::CertificateSigningRequest::default_instance()},
      {"rbac.authorization.k8s.io/v1", "Role", &k8s::io::api::rbac::v1::Role::default_instance()},
      {"rbac.authorization.k8s.io/v1", "ClusterRole",
       &k8s::io::api::rbac::v1::ClusterRole::default_instance()},
      {"rbac.authorization.k8s.io/v1", "RoleBinding",
       &k8s::io::api::rbac::v1::RoleBinding::default_instance()},
      {"rbac.authorization.k8s.io/v1", "ClusterRoleBinding",
       &k8s::io::api::rbac::v1::ClusterRoleBinding::default_instance()},
      {"networking.k8s.io/v1", "Ingress",
       &k8s::io::api::networking::v1::Ingress::default_instance()},
      {"policy/v1", "PodDisruptionBudget",
       &k8s::io::api::policy::v1::PodDisruptionBudget::default_instance()},
      {"scheduling.k8s.io/v1", "PriorityClass",
       &k8s::io::api::scheduling::v1::PriorityClass::default_instance()},
  };
  return kinds;
}

Status unsupportedKind(const std::string& apiVersion, const std::string& kind) {
  return Status::UnsupportedMediaType(
      "this server cannot decode protobuf bodies of kind " + kind + " (" + apiVersion +
      "); send it as JSON instead, e.g. `kubectl create ... --dry-run=client -o yaml | kubectl "
      "apply -f -`");
}

}  // namespace

Result<json> decodeProtobufObject(std::string_view body) {
  if (!body.starts_with(kMagic)) {
    return Status::BadRequest("protobuf body does not start with the \"k8s\\0\" magic prefix");
  }
  body.remove_prefix(kMagic.size());
  k8s::io::apimachinery::pkg::runtime::Unknown envelope;
  if (!envelope.ParseFromArray(body.data(), static_cast<int>(body.size()))) {
    return Status::BadRequest("protobuf body: malformed runtime.Unknown envelope");
  }
  const std::string& apiVersion = envelope.typemeta().apiversion();
  const std::string& kind = envelope.typemeta().kind();
  if (apiVersion.empty() || kind.empty()) {
    return Status::BadRequest("protobuf body: envelope has no apiVersion/kind");
  }
  if (!envelope.contentencoding().empty()) {
    return Status::UnsupportedMediaType("protobuf body: content encoding \"" +
                                        envelope.contentencoding() + "\" is not supported");
  }
  const DecodableKind* match = nullptr;
  for (const auto& k : decodableKinds()) {
    if (k.apiVersion == apiVersion && k.kind == kind) match = &k;
  }
  if (match == nullptr) return unsupportedKind(apiVersion, kind);

  std::unique_ptr<google::protobuf::Message> object(match->prototype->New());
  const std::string& raw = envelope.raw();
  if (!object->ParseFromArray(raw.data(), static_cast<int>(raw.size()))) {
    return Status::BadRequest("protobuf body: malformed " + kind + " object");
  }
  auto result = protobuf::messageToJson(*object);
  if (!result.ok()) return result.status();
  json out = std::move(*result);
  out["apiVersion"] = apiVersion;
  out["kind"] = kind;
  return out;
}

std::vector<std::string> protobufDecodableKinds() {
  std::vector<std::string> out;
  for (const auto& k : decodableKinds()) {
    out.push_back(std::string(k.apiVersion) + " " + std::string(k.kind));
  }
  return out;
}

}  // namespace minik8s::api
