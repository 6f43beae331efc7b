#include "mesh/rollout_resource.h"

#include <fmt/core.h>

#include "client/custom_resource_definitions.h"
#include "common/time_util.h"
#include "common/yaml_json.h"

namespace minik8s::mesh {

const client::Resource kMeshRollouts{"mesh.minik8s.io", "v1", "meshrollouts", true};

namespace {

constexpr const char* kMeshRolloutCrdYaml = R"(
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: meshrollouts.mesh.minik8s.io
  labels: {app.kubernetes.io/managed-by: minik8s}
spec:
  group: mesh.minik8s.io
  scope: Namespaced
  names:
    plural: meshrollouts
    singular: meshrollout
    kind: MeshRollout
    listKind: MeshRolloutList
    shortNames: [mro]
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Service, type: string, jsonPath: .spec.service}
    - {name: Phase, type: string, jsonPath: .status.phase}
    - {name: Weight, type: integer, jsonPath: .status.weight}
    - {name: Stage, type: string, jsonPath: .status.stage, priority: 1}
    - {name: Reason, type: string, jsonPath: .status.reason, priority: 1}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        description: A progressive rollout of a meshed service to a new image (weights moved step by step, rolled back on errors).
        required: [spec]
        properties:
          spec:
            type: object
            required: [service, image]
            properties:
              service: {type: string, minLength: 1, maxLength: 63, description: The Service whose Deployment is rolled out}
              image: {type: string, minLength: 1, description: The new version's image}
              version: {type: string, maxLength: 63, pattern: '^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$', description: 'The new version''s `version` label (default: the image''s tag)'}
              container: {type: string, description: 'The container to update (default: the first)'}
              stepPercent: {type: integer, minimum: 1, maximum: 100, default: 20, description: Percent of the traffic moved per step}
              interval: {type: string, pattern: '^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$', default: 10s, description: How long each step is watched (a duration such as 10s or 1m)}
              maxErrorRate: {type: number, minimum: 0, maximum: 1, exclusiveMaximum: true, default: 0.05, description: Roll back when the new version's 5xx answers over its requests in a step pass this fraction}
              minRequests: {type: integer, minimum: 1, default: 10, description: Requests a step needs before it may be judged early}
          status:
            type: object
            x-kubernetes-preserve-unknown-fields: true
)";

Status invalid(const std::string& field, const std::string& value, const std::string& why) {
  return Status::BadRequest(field + ": Invalid value: \"" + value + "\": " + why);
}

}  // namespace

json meshRolloutCrd() {
  static const json crd = [] {
    auto parsed = parseYaml(kMeshRolloutCrdYaml);
    return parsed.ok() ? *parsed : json::object();
  }();
  return crd;
}

Status ensureMeshRolloutCrd(client::RestClient& rest) {
  return client::ensureCustomResourceDefinition(rest, meshRolloutCrd());
}

Result<MeshRolloutSpec> parseMeshRolloutSpec(const json& obj) {
  const json spec = obj.value("spec", json::object());
  if (!spec.is_object()) return Status::BadRequest("spec: Invalid value: must be an object");
  MeshRolloutSpec out;
  auto text = [&](const char* key) {
    return spec.contains(key) && spec[key].is_string() ? spec[key].get<std::string>() : "";
  };
  out.service = text("service");
  out.image = text("image");
  out.version = text("version");
  out.container = text("container");
  if (out.service.empty()) return Status::BadRequest("spec.service: Required value");
  if (out.image.empty()) return Status::BadRequest("spec.image: Required value");
  if (spec.contains("stepPercent")) {
    if (!spec["stepPercent"].is_number_integer()) {
      return invalid("spec.stepPercent", spec["stepPercent"].dump(), "must be an integer");
    }
    out.options.stepPercent = spec["stepPercent"].get<int>();
  }
  const std::string interval = spec.contains("interval") ? text("interval") : "10s";
  auto d = parseGoDuration(interval);
  if (!d || d->count() <= 0) {
    return invalid("spec.interval", interval, "want a duration such as 10s, 1m or 500ms");
  }
  out.options.interval = *d;
  out.options.checkEvery = std::min(out.options.interval, std::chrono::milliseconds(1000));
  if (spec.contains("maxErrorRate")) {
    if (!spec["maxErrorRate"].is_number()) {
      return invalid("spec.maxErrorRate", spec["maxErrorRate"].dump(), "must be a number");
    }
    out.options.maxErrorRate = spec["maxErrorRate"].get<double>();
  }
  if (spec.contains("minRequests")) {
    if (!spec["minRequests"].is_number_integer()) {
      return invalid("spec.minRequests", spec["minRequests"].dump(), "must be an integer");
    }
    out.options.minRequests = spec["minRequests"].get<int64_t>();
  }
  if (Status s = validateRolloutOptions(out.options); !s.ok()) {
    // The flags' words, with the spec's field names.
    std::string m = s.message();
    for (auto [flag, field] :
         {std::pair{"--step", "spec.stepPercent"}, std::pair{"--interval", "spec.interval"},
          std::pair{"--max-error-rate", "spec.maxErrorRate"},
          std::pair{"--min-requests", "spec.minRequests"}}) {
      if (m.rfind(flag, 0) == 0) m = field + m.substr(std::string(flag).size());
    }
    return Status::BadRequest(m);
  }
  return out;
}

json meshRolloutObject(const std::string& ns, const std::string& name, const MeshRolloutSpec& spec,
                       const std::string& interval) {
  json s = {{"service", spec.service},
            {"image", spec.image},
            {"stepPercent", spec.options.stepPercent},
            {"interval", interval},
            {"maxErrorRate", spec.options.maxErrorRate},
            {"minRequests", spec.options.minRequests}};
  if (!spec.version.empty()) s["version"] = spec.version;
  if (!spec.container.empty()) s["container"] = spec.container;
  return {{"apiVersion", "mesh.minik8s.io/v1"},
          {"kind", "MeshRollout"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec", s}};
}

}  // namespace minik8s::mesh
