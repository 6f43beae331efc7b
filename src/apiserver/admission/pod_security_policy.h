// Pod Security Standards: the privileged, baseline and restricted levels of Kubernetes'
// PodSecurity admission (k8s.io/pod-security-admission/policy), as pure functions over a pod's
// metadata and spec in JSON.
//
// A namespace chooses a level and a version per mode with its labels
// (pod-security.kubernetes.io/enforce, -version, audit, warn); policyFromLabels() reads them the
// way Kubernetes does (an unset mode is privileged:latest; a bad value is an error on the label,
// enforce then falls back to restricted:latest and audit/warn to privileged; warn follows an
// explicit stricter enforce level). evaluatePod() runs the checks of a level at a version and
// returns the reasons and details in Kubernetes' order and words, which the admission plugin
// (pod_security_admission.h) puts into its refusals and warnings:
//
//   allowPrivilegeEscalation != false (container "c" must set
//   securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (...)
//
// The checks are those of Kubernetes v1.32, the version this API server reports: a version label
// newer than v1.32, and "latest", evaluate as v1.32; older versions get the checks as they were
// then (runAsUser from v1.23, capabilities_restricted from v1.22, the safe sysctls growing in
// v1.27, v1.29 and v1.32, ...). Stateless and thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace minik8s::apiserver::admission::podsecurity {

inline constexpr const char* kEnforceLevelLabel = "pod-security.kubernetes.io/enforce";
inline constexpr const char* kEnforceVersionLabel = "pod-security.kubernetes.io/enforce-version";
inline constexpr const char* kAuditLevelLabel = "pod-security.kubernetes.io/audit";
inline constexpr const char* kAuditVersionLabel = "pod-security.kubernetes.io/audit-version";
inline constexpr const char* kWarnLevelLabel = "pod-security.kubernetes.io/warn";
inline constexpr const char* kWarnVersionLabel = "pod-security.kubernetes.io/warn-version";

// The newest policy version with checks of its own (the server's minor version).
inline constexpr int kMaxPolicyMinor = 32;

enum class Level { kPrivileged, kBaseline, kRestricted };

const char* levelName(Level level);
// -1, 0, 1: a is less strict than, as strict as, stricter than b.
int compareLevels(Level a, Level b);

// "latest" or v1.<minor>.
struct Version {
  bool latest = true;
  int minor = 0;

  static Version v1(int minor) { return {false, minor}; }
  std::string toString() const;
  bool operator==(const Version&) const = default;
};

struct LevelVersion {
  Level level = Level::kPrivileged;
  Version version;

  std::string toString() const;  // "restricted:latest", "baseline:v1.30"
  bool operator==(const LevelVersion&) const = default;
};

struct Policy {
  LevelVersion enforce, audit, warn;

  bool fullyPrivileged() const;
  // Every mode privileged in both, or at the same level and version.
  bool equivalent(const Policy& other) const;
};

// A namespace's policy from its labels (a JSON object, or null for none); modes without labels
// keep `defaults` (privileged:latest unless the plugin is configured otherwise). Bad values are
// reported as FieldValueInvalid causes on metadata.labels[<label>] with Kubernetes' messages
// ("Invalid value: \"bogus\": must be one of privileged, baseline, restricted"); the policy is
// still usable (see the header comment).
struct PolicyFromLabels {
  Policy policy;
  std::vector<Cause> errors;
};
PolicyFromLabels policyFromLabels(const json& labels, const Policy& defaults = {});

// "privileged", "baseline", "restricted"; "latest", "v1.<minor>" (nullopt otherwise).
std::optional<Level> parseLevel(const std::string& s);
std::optional<Version> parseVersion(const std::string& s);

// The outcome of the checks of one level: the reasons and their details, in check order.
struct Evaluation {
  std::vector<std::string> reasons;
  std::vector<std::string> details;  // "" where a reason has none

  bool allowed() const { return reasons.empty(); }
  // "host namespaces, privileged" (what namespace label changes report per pod).
  std::string forbiddenReason() const;
  // "host namespaces (hostNetwork=true), privileged (container \"c\" must not set ...)".
  std::string forbiddenDetail() const;
};

// Runs the checks of `lv` on a pod (or a workload's pod template): `podMetadata` is its
// metadata (annotations are read), `podSpec` its spec. Privileged allows everything.
Evaluation evaluatePod(const LevelVersion& lv, const json& podMetadata, const json& podSpec);

// The check IDs evaluated for `lv`, in order (Kubernetes' IDs: "hostNamespaces",
// "capabilities_restricted", ...); empty for privileged.
std::vector<std::string> checkIds(const LevelVersion& lv);

}  // namespace minik8s::apiserver::admission::podsecurity
