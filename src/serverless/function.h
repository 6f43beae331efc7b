// Function (serverless.minik8s.io/v1): a user's Python handler, served over HTTP by instances
// that are ordinary pods of a Deployment, scaled by the gateway's autoscaler down to zero. This
// header holds what the controller, the gateway and the CLI share: the CustomResourceDefinition
// that serves the kind (schema with defaults, printer columns URL/READY/AGE, status subresource),
// the spec as read from an object, and the Deployment, Service and status built from a Function.
// Pure functions; thread-safe.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "client/rest_client.h"
#include "common/status.h"

namespace minik8s::serverless {

extern const client::Resource kFunctions;  // serverless.minik8s.io/v1 functions (namespaced)
inline constexpr const char* kGroup = "serverless.minik8s.io";
inline constexpr const char* kApiVersion = "serverless.minik8s.io/v1";
// On the Deployment, Service, pods and the code ConfigMap of one Function: its name.
inline constexpr const char* kFunctionLabel = "serverless.minik8s.io/function";
// On the Deployment: a hash of the pod template the controller wants (a changed Function or
// code rolls out a new template; the autoscaler's spec.replicas is left alone).
inline constexpr const char* kTemplateHashAnnotation = "serverless.minik8s.io/template-hash";
// On the pod template: the code ConfigMap's resourceVersion (new code = new revision).
inline constexpr const char* kCodeRevisionAnnotation = "serverless.minik8s.io/code-revision";
// The runtime's image (images/python-function) and where it finds the code.
inline constexpr const char* kDefaultRuntimeImage = "minik8s/python-function:latest";
inline constexpr const char* kCodeMountPath = "/code";
inline constexpr int kRuntimePort = 8080;
// Where the gateway runs (addons/serverless): namespace, Service, NodePort.
inline constexpr const char* kGatewayNamespace = "serverless";
inline constexpr const char* kGatewayService = "gateway";

// http://NODE-IP:NODEPORT of the gateway Service (a Ready node's InternalIP): how a client
// outside the pod network (the CLI, the controller manager on the host) reaches it.
Result<std::string> gatewayNodeUrl(client::RestClient& rest);
// http://CLUSTER-IP:PORT of the gateway Service: how a pod reaches it without cluster DNS.
Result<std::string> gatewayClusterUrl(client::RestClient& rest);
// The line the runtime logs when the handler cannot be imported; the controller reads it from
// the pod's log into the Function's Ready condition.
inline constexpr const char* kImportFailedMarker = "minik8s-function: cannot import handler";

// The apiextensions.k8s.io/v1 CustomResourceDefinition of the kind.
json functionCrd();
// Makes sure the CRD exists and matches functionCrd() (created or updated).
Status ensureFunctionCrd(client::RestClient& rest);

struct ScaleSettings {
  int minScale = 0;
  int maxScale = 10;
  int targetConcurrency = 10;  // in-flight requests per instance the autoscaler aims at
  std::chrono::milliseconds scaleToZeroAfter{30'000};
};

struct FunctionSpec {
  std::string runtime = "python3";
  std::string handler;           // "module.function" (module may be dotted: pkg.mod.fn)
  std::string codeConfigMap;     // one .py key, or bundle.zip
  json env = json::array();      // [{name, value}]
  json resources;                // a container's resources, null when unset
  int containerConcurrency = 0;  // 0 = unlimited
  ScaleSettings scale;
  int timeoutSeconds = 30;
};

// "module.function" with Python identifiers; BadRequest naming `field` otherwise.
Status validateHandler(const std::string& handler, const std::string& field = "spec.handler");

// Reads spec from a Function, with the CRD's defaults for absent fields. BadRequest naming the
// field for what the schema cannot say (minScale above maxScale) or a malformed value.
Result<FunctionSpec> parseFunctionSpec(const json& function);

// Names of what one Function owns.
std::string deploymentName(const std::string& function);  // NAME-fn
inline std::string serviceName(const std::string& function) { return function; }
// The URL a Function answers on in the cluster (through the gateway Service).
std::string functionUrl(const std::string& ns, const std::string& name);

// The Deployment of a Function: `replicas` instances (the controller passes minScale at create),
// the runtime image, HANDLER and the user's env, the code ConfigMap at /code, readiness on
// /healthz every second, a grace period that lets in-flight requests finish (timeout + 5 s), an
// owner reference to the Function, and kTemplateHashAnnotation over the pod template.
json functionDeployment(const json& function, const FunctionSpec& spec, const std::string& image,
                        const std::string& codeRevision, int replicas);
// The ClusterIP Service NAME: port 80 -> the runtime's 8080.
json functionService(const json& function);

// What the controller observed, turned into the Function's status.
struct FunctionObservation {
  std::optional<Status> specError;  // the spec could not be read
  bool codeMissing = false;         // the code ConfigMap does not exist
  bool foreignDeployment = false;   // NAME-fn exists and belongs to something else
  std::string importError;          // a pod's log says the handler cannot be imported
  std::optional<json> deployment;   // the Function's Deployment, when there is one
  std::string image;
  std::string codeRevision;
};
// status: url, replicas, readyReplicas, image, codeRevision, observedGeneration and the Ready
// condition (reason Ready, ScaledToZero, Starting, InvalidSpec, CodeMissing, ImportFailed,
// NameConflict); lastTransitionTime is kept from `function`'s status while Ready's status stays.
json functionStatus(const json& function, const FunctionObservation& observed,
                    const std::string& now);

// A stable 64-bit FNV-1a hash in hex (template hashes; same input, same hash in every build).
std::string stableHash(const std::string& text);

}  // namespace minik8s::serverless
