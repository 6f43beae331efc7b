#include "apiserver/admission/pod_security_policy.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include "api/object_meta.h"
#include "api/safe_sysctls.h"

namespace minik8s::apiserver::admission::podsecurity {
namespace {

using api::member;
using api::stringMember;

// ---- small helpers over the pod's JSON -------------------------------------------------------

bool isTrue(const json& v) { return v.is_boolean() && v.get<bool>(); }
bool isFalse(const json& v) { return v.is_boolean() && !v.get<bool>(); }

// Init containers, containers, then ephemeral containers, as Kubernetes visits them.
void visitContainers(const json& spec, const std::function<void(const json&)>& visit) {
  for (const char* list : {"initContainers", "containers", "ephemeralContainers"}) {
    const json& items = member(spec, list);
    if (!items.is_array()) continue;
    for (const auto& c : items) {
      if (c.is_object()) visit(c);
    }
  }
}

std::string containerName(const json& c) { return stringMember(c, "name"); }
const json& securityContext(const json& c) { return member(c, "securityContext"); }
bool isWindowsPod(const json& spec) {
  return stringMember(member(spec, "os"), "name") == "windows";
}

std::string joinQuote(const std::vector<std::string>& items) {
  if (items.empty()) return "";
  std::string out = "\"";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += "\", \"";
    out += items[i];
  }
  return out + "\"";
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

std::string pluralize(const char* singular, const char* plural, size_t count) {
  return count == 1 ? singular : plural;
}

std::vector<std::string> sorted(const std::set<std::string>& s) { return {s.begin(), s.end()}; }

// Go's %q for the annotation values Kubernetes quotes.
std::string goQuote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

// `containers "a", "b"` (what the setters lists name).
std::string containersPhrase(const std::vector<std::string>& names) {
  return pluralize("container", "containers", names.size()) + " " + joinQuote(names);
}

struct CheckResult {
  bool allowed = true;
  std::string reason, detail;
};
const CheckResult kAllowed{};
CheckResult forbidden(std::string reason, std::string detail) {
  return {false, std::move(reason), std::move(detail)};
}

using CheckFn = std::function<CheckResult(const json& meta, const json& spec)>;

// ---- baseline ------------------------------------------------------------------------------

CheckResult appArmorProfile(const json& meta, const json& spec) {
  auto allowedType = [](const json& profile) {
    const std::string t = stringMember(profile, "type");
    return t == "RuntimeDefault" || t == "Localhost";
  };
  std::vector<std::string> badSetters;
  std::set<std::string> badValues;
  const json& podProfile = member(member(spec, "securityContext"), "appArmorProfile");
  if (podProfile.is_object() && !allowedType(podProfile)) {
    badSetters.push_back("pod");
    badValues.insert(stringMember(podProfile, "type"));
  }
  std::vector<std::string> badContainers;
  visitContainers(spec, [&](const json& c) {
    const json& profile = member(securityContext(c), "appArmorProfile");
    if (profile.is_object() && !allowedType(profile)) {
      badContainers.push_back(containerName(c));
      badValues.insert(stringMember(profile, "type"));
    }
  });
  if (!badContainers.empty()) badSetters.push_back(containersPhrase(badContainers));
  std::vector<std::string> forbiddenAnnotations;
  const std::string prefix = "container.apparmor.security.beta.kubernetes.io/";
  const json& annotations = member(meta, "annotations");
  if (annotations.is_object()) {
    for (const auto& [key, value] : annotations.items()) {
      if (key.rfind(prefix, 0) != 0 || !value.is_string()) continue;
      const std::string v = value.get<std::string>();
      if (v.empty() || v == "runtime/default" || v.rfind("localhost/", 0) == 0) continue;
      forbiddenAnnotations.push_back(key + "=" + goQuote(v));
    }
  }
  std::vector<std::string> badValueList = sorted(badValues);
  if (!forbiddenAnnotations.empty()) {
    std::sort(forbiddenAnnotations.begin(), forbiddenAnnotations.end());
    badValueList.insert(badValueList.end(), forbiddenAnnotations.begin(),
                        forbiddenAnnotations.end());
    badSetters.push_back(pluralize("annotation", "annotations", forbiddenAnnotations.size()));
  }
  if (badSetters.empty()) return kAllowed;
  return forbidden(
      pluralize("forbidden AppArmor profile", "forbidden AppArmor profiles", badValueList.size()),
      join(badSetters, " and ") + " must not set AppArmor profile type to " +
          joinQuote(badValueList));
}

CheckResult capabilitiesBaseline(const json&, const json& spec) {
  static const std::set<std::string> kAllowedCaps = {
      "AUDIT_WRITE",      "CHOWN",   "DAC_OVERRIDE", "FOWNER",  "FSETID", "KILL",      "MKNOD",
      "NET_BIND_SERVICE", "SETFCAP", "SETGID",       "SETPCAP", "SETUID", "SYS_CHROOT"};
  std::vector<std::string> badContainers;
  std::set<std::string> nonDefault;
  visitContainers(spec, [&](const json& c) {
    const json& add = member(member(securityContext(c), "capabilities"), "add");
    if (!add.is_array()) return;
    bool valid = true;
    for (const auto& cap : add) {
      const std::string name = cap.is_string() ? cap.get<std::string>() : "";
      if (!kAllowedCaps.count(name)) {
        valid = false;
        nonDefault.insert(name);
      }
    }
    if (!valid) badContainers.push_back(containerName(c));
  });
  if (badContainers.empty()) return kAllowed;
  return forbidden("non-default capabilities",
                   containersPhrase(badContainers) + " must not include " +
                       joinQuote(sorted(nonDefault)) + " in securityContext.capabilities.add");
}

CheckResult hostNamespaces(const json&, const json& spec) {
  std::vector<std::string> used;
  if (isTrue(member(spec, "hostNetwork"))) used.push_back("hostNetwork=true");
  if (isTrue(member(spec, "hostPID"))) used.push_back("hostPID=true");
  if (isTrue(member(spec, "hostIPC"))) used.push_back("hostIPC=true");
  if (used.empty()) return kAllowed;
  return forbidden("host namespaces", join(used, ", "));
}

CheckResult hostPathVolumes(const json&, const json& spec) {
  std::vector<std::string> names;
  const json& volumes = member(spec, "volumes");
  if (volumes.is_array()) {
    for (const auto& v : volumes) {
      const json& hostPath = member(v, "hostPath");
      if (!hostPath.is_null()) names.push_back(stringMember(v, "name"));
    }
  }
  if (names.empty()) return kAllowed;
  return forbidden("hostPath volumes",
                   pluralize("volume", "volumes", names.size()) + " " + joinQuote(names));
}

CheckResult hostPorts(const json&, const json& spec) {
  std::vector<std::string> badContainers;
  std::set<std::string> ports;  // sorted as strings, as Kubernetes lists them
  visitContainers(spec, [&](const json& c) {
    const json& list = member(c, "ports");
    if (!list.is_array()) return;
    bool valid = true;
    for (const auto& p : list) {
      const json& hostPort = member(p, "hostPort");
      if (hostPort.is_number_integer() && hostPort.get<int64_t>() != 0) {
        valid = false;
        ports.insert(std::to_string(hostPort.get<int64_t>()));
      }
    }
    if (!valid) badContainers.push_back(containerName(c));
  });
  if (badContainers.empty()) return kAllowed;
  return forbidden("hostPort", containersPhrase(badContainers) + " " +
                                   pluralize("uses", "use", badContainers.size()) + " " +
                                   pluralize("hostPort", "hostPorts", ports.size()) + " " +
                                   join(sorted(ports), ", "));
}

CheckResult privileged(const json&, const json& spec) {
  std::vector<std::string> badContainers;
  visitContainers(spec, [&](const json& c) {
    if (isTrue(member(securityContext(c), "privileged"))) badContainers.push_back(containerName(c));
  });
  if (badContainers.empty()) return kAllowed;
  return forbidden("privileged", containersPhrase(badContainers) +
                                     " must not set securityContext.privileged=true");
}

CheckResult procMount(const json&, const json& spec) {
  std::vector<std::string> badContainers;
  std::set<std::string> types;
  visitContainers(spec, [&](const json& c) {
    const json& type = member(securityContext(c), "procMount");
    if (!type.is_string() || type.get<std::string>() == "Default") return;
    badContainers.push_back(containerName(c));
    types.insert(type.get<std::string>());
  });
  if (badContainers.empty()) return kAllowed;
  return forbidden("procMount", containersPhrase(badContainers) +
                                    " must not set securityContext.procMount to " +
                                    joinQuote(sorted(types)));
}

CheckResult seLinuxOptions(const json& spec, const std::set<std::string>& allowedTypes) {
  std::vector<std::string> badSetters;
  std::set<std::string> badTypes;
  bool setUser = false, setRole = false;
  auto valid = [&](const json& opts) {
    bool ok = true;
    const std::string type = stringMember(opts, "type");
    if (!allowedTypes.count(type)) {
      ok = false;
      badTypes.insert(type);
    }
    if (!stringMember(opts, "user").empty()) ok = false, setUser = true;
    if (!stringMember(opts, "role").empty()) ok = false, setRole = true;
    return ok;
  };
  const json& podOpts = member(member(spec, "securityContext"), "seLinuxOptions");
  if (podOpts.is_object() && !valid(podOpts)) badSetters.push_back("pod");
  std::vector<std::string> badContainers;
  visitContainers(spec, [&](const json& c) {
    const json& opts = member(securityContext(c), "seLinuxOptions");
    if (opts.is_object() && !valid(opts)) badContainers.push_back(containerName(c));
  });
  if (!badContainers.empty()) badSetters.push_back(containersPhrase(badContainers));
  if (badSetters.empty()) return kAllowed;
  std::vector<std::string> badData;
  if (!badTypes.empty()) {
    badData.push_back(pluralize("type", "types", badTypes.size()) + " " +
                      joinQuote(sorted(badTypes)));
  }
  if (setUser) badData.push_back("user may not be set");
  if (setRole) badData.push_back("role may not be set");
  return forbidden("seLinuxOptions",
                   join(badSetters, " and ") +
                       " set forbidden securityContext.seLinuxOptions: " + join(badData, "; "));
}

CheckResult seLinuxOptions1_0(const json&, const json& spec) {
  return seLinuxOptions(spec, {"", "container_t", "container_init_t", "container_kvm_t"});
}
CheckResult seLinuxOptions1_31(const json&, const json& spec) {
  return seLinuxOptions(
      spec, {"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"});
}

bool validSeccompType(const json& profile) {
  const std::string t = stringMember(profile, "type");
  return t == "Localhost" || t == "RuntimeDefault";
}

// Before v1.19 seccomp was chosen by annotations.
CheckResult seccompProfileBaseline1_0(const json& meta, const json& spec) {
  const json& annotations = member(meta, "annotations");
  auto validValue = [](const std::string& v) {
    return v == "runtime/default" || v == "docker/default" || v.rfind("localhost/", 0) == 0;
  };
  std::set<std::string> bad;
  auto look = [&](const std::string& key) {
    const json& v = member(annotations, key.c_str());
    if (v.is_string() && !validValue(v.get<std::string>())) {
      bad.insert(key + "=" + goQuote(v.get<std::string>()));
    }
  };
  look("seccomp.security.alpha.kubernetes.io/pod");
  visitContainers(spec, [&](const json& c) {
    look("container.seccomp.security.alpha.kubernetes.io/" + containerName(c));
  });
  if (bad.empty()) return kAllowed;
  return forbidden("seccompProfile", "forbidden " +
                                         pluralize("annotation", "annotations", bad.size()) + " " +
                                         join(sorted(bad), ", "));
}

CheckResult seccompProfileBaseline1_19(const json&, const json& spec) {
  std::vector<std::string> badSetters;
  std::set<std::string> badValues;
  const json& podProfile = member(member(spec, "securityContext"), "seccompProfile");
  if (podProfile.is_object() && !validSeccompType(podProfile)) {
    badSetters.push_back("pod");
    badValues.insert(stringMember(podProfile, "type"));
  }
  std::vector<std::string> badContainers;
  visitContainers(spec, [&](const json& c) {
    const json& profile = member(securityContext(c), "seccompProfile");
    if (profile.is_object() && !validSeccompType(profile)) {
      badContainers.push_back(containerName(c));
      badValues.insert(stringMember(profile, "type"));
    }
  });
  if (!badContainers.empty()) badSetters.push_back(containersPhrase(badContainers));
  if (badSetters.empty()) return kAllowed;
  return forbidden("seccompProfile", join(badSetters, " and ") +
                                         " must not set securityContext.seccompProfile.type to " +
                                         joinQuote(sorted(badValues)));
}

CheckResult sysctls(const json& spec, const std::set<std::string>& allowed) {
  std::vector<std::string> bad;
  const json& list = member(member(spec, "securityContext"), "sysctls");
  if (list.is_array()) {
    for (const auto& s : list) {
      const std::string name = stringMember(s, "name");
      if (!allowed.count(name)) bad.push_back(name);
    }
  }
  if (bad.empty()) return kAllowed;
  return forbidden("forbidden sysctls", join(bad, ", "));
}

std::set<std::string> safeSysctls(int minor) {
  std::set<std::string> s;
  for (const auto& safe : api::kSafeSysctls) {
    if (minor >= safe.sinceMinor) s.insert(std::string(safe.name));
  }
  return s;
}

CheckFn sysctlsAt(int minor) {
  return [allowed = safeSysctls(minor)](const json&, const json& spec) {
    return sysctls(spec, allowed);
  };
}

CheckResult windowsHostProcess(const json&, const json& spec) {
  auto hostProcess = [](const json& sc) {
    return isTrue(member(member(sc, "windowsOptions"), "hostProcess"));
  };
  std::vector<std::string> badContainers;
  visitContainers(spec, [&](const json& c) {
    if (hostProcess(securityContext(c))) badContainers.push_back(containerName(c));
  });
  std::vector<std::string> setters;
  if (hostProcess(member(spec, "securityContext"))) setters.push_back("pod");
  if (!badContainers.empty()) setters.push_back(containersPhrase(badContainers));
  if (setters.empty()) return kAllowed;
  return forbidden(
      "hostProcess",
      join(setters, " and ") + " must not set securityContext.windowsOptions.hostProcess=true");
}

// ---- restricted ----------------------------------------------------------------------------

CheckResult allowPrivilegeEscalation1_8(const json&, const json& spec) {
  std::vector<std::string> badContainers;
  visitContainers(spec, [&](const json& c) {
    if (!isFalse(member(securityContext(c), "allowPrivilegeEscalation"))) {
      badContainers.push_back(containerName(c));
    }
  });
  if (badContainers.empty()) return kAllowed;
  return forbidden(
      "allowPrivilegeEscalation != false",
      containersPhrase(badContainers) + " must set securityContext.allowPrivilegeEscalation=false");
}

CheckResult capabilitiesRestricted1_22(const json&, const json& spec) {
  std::vector<std::string> missingDropAll, addingForbidden;
  std::set<std::string> forbiddenCaps;
  visitContainers(spec, [&](const json& c) {
    const json& caps = member(securityContext(c), "capabilities");
    if (!caps.is_object()) {
      missingDropAll.push_back(containerName(c));
      return;
    }
    const json& drop = member(caps, "drop");
    const bool droppedAll =
        drop.is_array() && std::find(drop.begin(), drop.end(), json("ALL")) != drop.end();
    if (!droppedAll) missingDropAll.push_back(containerName(c));
    const json& add = member(caps, "add");
    bool addedForbidden = false;
    if (add.is_array()) {
      for (const auto& cap : add) {
        const std::string name = cap.is_string() ? cap.get<std::string>() : "";
        if (name != "NET_BIND_SERVICE") {
          addedForbidden = true;
          forbiddenCaps.insert(name);
        }
      }
    }
    if (addedForbidden) addingForbidden.push_back(containerName(c));
  });
  std::vector<std::string> details;
  if (!missingDropAll.empty()) {
    details.push_back(containersPhrase(missingDropAll) +
                      " must set securityContext.capabilities.drop=[\"ALL\"]");
  }
  if (!addingForbidden.empty()) {
    details.push_back(containersPhrase(addingForbidden) + " must not include " +
                      joinQuote(sorted(forbiddenCaps)) + " in securityContext.capabilities.add");
  }
  if (details.empty()) return kAllowed;
  return forbidden("unrestricted capabilities", join(details, "; "));
}

CheckResult restrictedVolumes(const json&, const json& spec) {
  static const std::vector<std::string> kAllowedSources = {
      "configMap", "csi",   "downwardAPI",           "emptyDir",
      "ephemeral", "image", "persistentVolumeClaim", "projected",
      "secret"};
  // The restricted sources, in the order Kubernetes names a volume's type.
  static const std::vector<std::string> kRestrictedSources = {"hostPath",
                                                              "gcePersistentDisk",
                                                              "awsElasticBlockStore",
                                                              "gitRepo",
                                                              "nfs",
                                                              "iscsi",
                                                              "glusterfs",
                                                              "rbd",
                                                              "flexVolume",
                                                              "cinder",
                                                              "cephfs",
                                                              "flocker",
                                                              "fc",
                                                              "azureFile",
                                                              "vsphereVolume",
                                                              "quobyte",
                                                              "azureDisk",
                                                              "photonPersistentDisk",
                                                              "portworxVolume",
                                                              "scaleIO",
                                                              "storageos"};
  auto has = [](const json& v, const std::string& key) {
    auto it = v.find(key);
    return it != v.end() && !it->is_null();
  };
  std::vector<std::string> badVolumes;
  std::set<std::string> badTypes;
  const json& volumes = member(spec, "volumes");
  if (volumes.is_array()) {
    for (const auto& v : volumes) {
      if (!v.is_object()) continue;
      if (std::any_of(kAllowedSources.begin(), kAllowedSources.end(),
                      [&](const std::string& k) { return has(v, k); })) {
        continue;
      }
      badVolumes.push_back(stringMember(v, "name"));
      auto type = std::find_if(kRestrictedSources.begin(), kRestrictedSources.end(),
                               [&](const std::string& k) { return has(v, k); });
      badTypes.insert(type == kRestrictedSources.end() ? "unknown" : *type);
    }
  }
  if (badVolumes.empty()) return kAllowed;
  return forbidden(
      "restricted volume types",
      pluralize("volume", "volumes", badVolumes.size()) + " " + joinQuote(badVolumes) + " " +
          pluralize("uses", "use", badVolumes.size()) + " " +
          pluralize("restricted volume type", "restricted volume types", badTypes.size()) + " " +
          joinQuote(sorted(badTypes)));
}

CheckResult runAsNonRoot(const json&, const json& spec) {
  std::vector<std::string> badSetters;
  bool podRunAsNonRoot = false;
  const json& podValue = member(member(spec, "securityContext"), "runAsNonRoot");
  if (isFalse(podValue)) badSetters.push_back("pod");
  if (isTrue(podValue)) podRunAsNonRoot = true;
  std::vector<std::string> explicitlyBad, implicitlyBad;
  visitContainers(spec, [&](const json& c) {
    const json& v = member(securityContext(c), "runAsNonRoot");
    if (v.is_boolean()) {
      if (!v.get<bool>()) explicitlyBad.push_back(containerName(c));
    } else if (!podRunAsNonRoot) {
      implicitlyBad.push_back(containerName(c));
    }
  });
  if (!explicitlyBad.empty()) badSetters.push_back(containersPhrase(explicitlyBad));
  if (!badSetters.empty()) {
    return forbidden(
        "runAsNonRoot != true",
        join(badSetters, " and ") + " must not set securityContext.runAsNonRoot=false");
  }
  if (!implicitlyBad.empty()) {
    return forbidden("runAsNonRoot != true", "pod or " + containersPhrase(implicitlyBad) +
                                                 " must set securityContext.runAsNonRoot=true");
  }
  return kAllowed;
}

CheckResult runAsUser(const json&, const json& spec) {
  auto isRoot = [](const json& sc) {
    const json& v = member(sc, "runAsUser");
    return v.is_number_integer() && v.get<int64_t>() == 0;
  };
  std::vector<std::string> badSetters;
  if (isRoot(member(spec, "securityContext"))) badSetters.push_back("pod");
  std::vector<std::string> badContainers;
  visitContainers(spec, [&](const json& c) {
    if (isRoot(securityContext(c))) badContainers.push_back(containerName(c));
  });
  if (!badContainers.empty()) badSetters.push_back(containersPhrase(badContainers));
  if (badSetters.empty()) return kAllowed;
  return forbidden("runAsUser=0", join(badSetters, " and ") + " must not set runAsUser=0");
}

CheckResult seccompProfileRestricted1_19(const json&, const json& spec) {
  std::vector<std::string> badSetters;
  std::set<std::string> badValues;
  bool podSet = false;
  const json& podProfile = member(member(spec, "securityContext"), "seccompProfile");
  if (podProfile.is_object()) {
    if (!validSeccompType(podProfile)) {
      badSetters.push_back("pod");
      badValues.insert(stringMember(podProfile, "type"));
    } else {
      podSet = true;
    }
  }
  std::vector<std::string> explicitlyBad, implicitlyBad;
  visitContainers(spec, [&](const json& c) {
    const json& profile = member(securityContext(c), "seccompProfile");
    if (profile.is_object()) {
      if (!validSeccompType(profile)) {
        explicitlyBad.push_back(containerName(c));
        badValues.insert(stringMember(profile, "type"));
      }
    } else if (!podSet) {
      implicitlyBad.push_back(containerName(c));
    }
  });
  if (!explicitlyBad.empty()) badSetters.push_back(containersPhrase(explicitlyBad));
  if (!badSetters.empty()) {
    return forbidden("seccompProfile", join(badSetters, " and ") +
                                           " must not set securityContext.seccompProfile.type to " +
                                           joinQuote(sorted(badValues)));
  }
  if (!implicitlyBad.empty()) {
    return forbidden("seccompProfile",
                     "pod or " + containersPhrase(implicitlyBad) +
                         " must set securityContext.seccompProfile.type to \"RuntimeDefault\" or "
                         "\"Localhost\"");
  }
  return kAllowed;
}

// From v1.25 a pod that says it runs on Windows (spec.os.name) skips the Linux-only checks.
CheckFn exemptWindows(CheckFn check) {
  return [check = std::move(check)](const json& meta, const json& spec) {
    return isWindowsPod(spec) ? kAllowed : check(meta, spec);
  };
}

// ---- the registry of checks ----------------------------------------------------------------

struct VersionedCheck {
  int minMinor;
  CheckFn check;
  std::vector<std::string> overrides;  // baseline check IDs this restricted check replaces
};

struct Check {
  std::string id;
  Level level;
  std::vector<VersionedCheck> versions;  // by increasing minMinor
};

// Kubernetes v1.32's checks. Listed in the order they run: baseline IDs sorted, then restricted
// IDs sorted (Kubernetes sorts the IDs byte-wise so messages come out the same every time).
const std::vector<Check>& allChecks() {
  static const std::vector<Check> kChecks = {
      {"appArmorProfile", Level::kBaseline, {{0, appArmorProfile, {}}}},
      {"capabilities_baseline", Level::kBaseline, {{0, capabilitiesBaseline, {}}}},
      {"hostNamespaces", Level::kBaseline, {{0, hostNamespaces, {}}}},
      {"hostPathVolumes", Level::kBaseline, {{0, hostPathVolumes, {}}}},
      {"hostPorts", Level::kBaseline, {{0, hostPorts, {}}}},
      {"privileged", Level::kBaseline, {{0, privileged, {}}}},
      {"procMount", Level::kBaseline, {{0, procMount, {}}}},
      {"seLinuxOptions",
       Level::kBaseline,
       {{0, seLinuxOptions1_0, {}}, {31, seLinuxOptions1_31, {}}}},
      {"seccompProfile_baseline",
       Level::kBaseline,
       {{0, seccompProfileBaseline1_0, {}}, {19, seccompProfileBaseline1_19, {}}}},
      {"sysctls",
       Level::kBaseline,
       {{0, sysctlsAt(0), {}},
        {27, sysctlsAt(27), {}},
        {29, sysctlsAt(29), {}},
        {32, sysctlsAt(32), {}}}},
      {"windowsHostProcess", Level::kBaseline, {{0, windowsHostProcess, {}}}},
      {"allowPrivilegeEscalation",
       Level::kRestricted,
       {{8, allowPrivilegeEscalation1_8, {}},
        {25, exemptWindows(allowPrivilegeEscalation1_8), {}}}},
      {"capabilities_restricted",
       Level::kRestricted,
       {{22, capabilitiesRestricted1_22, {"capabilities_baseline"}},
        {25, exemptWindows(capabilitiesRestricted1_22), {"capabilities_baseline"}}}},
      {"restrictedVolumes", Level::kRestricted, {{0, restrictedVolumes, {"hostPathVolumes"}}}},
      {"runAsNonRoot", Level::kRestricted, {{0, runAsNonRoot, {}}}},
      {"runAsUser", Level::kRestricted, {{23, runAsUser, {}}}},
      {"seccompProfile_restricted",
       Level::kRestricted,
       {{19, seccompProfileRestricted1_19, {"seccompProfile_baseline"}},
        {25, exemptWindows(seccompProfileRestricted1_19), {"seccompProfile_baseline"}}}},
  };
  return kChecks;
}

// The version of `check` in force at `minor`, or null before its first version.
const VersionedCheck* versionAt(const Check& check, int minor) {
  const VersionedCheck* found = nullptr;
  for (const auto& v : check.versions) {
    if (v.minMinor <= minor) found = &v;
  }
  return found;
}

struct ActiveCheck {
  const Check* check;
  const VersionedCheck* version;
};

std::vector<ActiveCheck> activeChecks(const LevelVersion& lv) {
  if (lv.level == Level::kPrivileged) return {};
  const int minor =
      lv.version.latest ? kMaxPolicyMinor : std::min(lv.version.minor, kMaxPolicyMinor);
  std::set<std::string> overridden;
  if (lv.level == Level::kRestricted) {
    for (const auto& c : allChecks()) {
      if (c.level != Level::kRestricted) continue;
      if (const auto* v = versionAt(c, minor))
        overridden.insert(v->overrides.begin(), v->overrides.end());
    }
  }
  std::vector<ActiveCheck> out;
  for (const auto& c : allChecks()) {
    if (c.level == Level::kRestricted && lv.level != Level::kRestricted) continue;
    if (overridden.count(c.id)) continue;
    if (const auto* v = versionAt(c, minor)) out.push_back({&c, v});
  }
  return out;
}

Cause labelError(const std::string& label, const std::string& value, const std::string& why) {
  return {"FieldValueInvalid", "metadata.labels[" + label + "]",
          "Invalid value: " + goQuote(value) + ": " + why};
}

}  // namespace

const char* levelName(Level level) {
  switch (level) {
    case Level::kPrivileged:
      return "privileged";
    case Level::kBaseline:
      return "baseline";
    case Level::kRestricted:
      return "restricted";
  }
  return "";
}

int compareLevels(Level a, Level b) {
  const int x = static_cast<int>(a), y = static_cast<int>(b);
  return x < y ? -1 : (x > y ? 1 : 0);
}

std::optional<Level> parseLevel(const std::string& s) {
  if (s == "privileged") return Level::kPrivileged;
  if (s == "baseline") return Level::kBaseline;
  if (s == "restricted") return Level::kRestricted;
  return std::nullopt;
}

std::optional<Version> parseVersion(const std::string& s) {
  if (s == "latest") return Version{};
  static const std::regex kV1(R"(^v1\.([0-9]|[1-9][0-9]*)$)");
  std::smatch m;
  if (!std::regex_match(s, m, kV1) || m[1].length() > 9) return std::nullopt;
  return Version::v1(std::stoi(m[1].str()));
}

std::string Version::toString() const { return latest ? "latest" : "v1." + std::to_string(minor); }

std::string LevelVersion::toString() const {
  return std::string(levelName(level)) + ":" + version.toString();
}

bool Policy::fullyPrivileged() const {
  return enforce.level == Level::kPrivileged && audit.level == Level::kPrivileged &&
         warn.level == Level::kPrivileged;
}

bool Policy::equivalent(const Policy& other) const {
  auto same = [](const LevelVersion& a, const LevelVersion& b) {
    return (a.level == Level::kPrivileged && b.level == Level::kPrivileged) || a == b;
  };
  return same(enforce, other.enforce) && same(audit, other.audit) && same(warn, other.warn);
}

PolicyFromLabels policyFromLabels(const json& labels, const Policy& defaults) {
  PolicyFromLabels out{defaults, {}};
  if (!labels.is_object()) return out;
  auto label = [&](const char* key) -> std::optional<std::string> {
    auto it = labels.find(key);
    if (it == labels.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
  };
  const std::string kLevels = "must be one of privileged, baseline, restricted";
  const std::string kVersions = "must be \"latest\" or \"v1.x\"";
  // A bad level: enforce fails closed (restricted), audit and warn fail open (privileged). A bad
  // version is latest.
  auto readMode = [&](LevelVersion& mode, const char* levelKey, const char* versionKey,
                      Level onError) {
    bool hasLevel = false;
    if (auto v = label(levelKey)) {
      if (auto level = parseLevel(*v)) {
        mode.level = *level;
        hasLevel = true;
      } else {
        mode.level = onError;
        out.errors.push_back(labelError(levelKey, *v, kLevels));
      }
    }
    if (auto v = label(versionKey)) {
      if (auto version = parseVersion(*v)) {
        mode.version = *version;
      } else {
        mode.version = Version{};
        out.errors.push_back(labelError(versionKey, *v, kVersions));
      }
    }
    return hasLevel;
  };
  Policy& p = out.policy;
  const bool hasEnforceLevel =
      readMode(p.enforce, kEnforceLevelLabel, kEnforceVersionLabel, Level::kRestricted);
  readMode(p.audit, kAuditLevelLabel, kAuditVersionLabel, Level::kPrivileged);
  const bool hasWarnLevel = label(kWarnLevelLabel).has_value();
  const bool hasWarnVersion = label(kWarnVersionLabel).has_value();
  readMode(p.warn, kWarnLevelLabel, kWarnVersionLabel, Level::kPrivileged);
  // Warn follows an explicitly stricter enforce level, so users see what would be refused.
  if (!hasWarnLevel && hasEnforceLevel && compareLevels(p.enforce.level, p.warn.level) > 0) {
    p.warn.level = p.enforce.level;
    if (!hasWarnVersion) p.warn.version = p.enforce.version;
  }
  return out;
}

std::string Evaluation::forbiddenReason() const { return join(reasons, ", "); }

std::string Evaluation::forbiddenDetail() const {
  std::string out;
  for (size_t i = 0; i < reasons.size(); ++i) {
    if (i) out += ", ";
    out += reasons[i];
    if (!details[i].empty()) out += " (" + details[i] + ")";
  }
  return out;
}

Evaluation evaluatePod(const LevelVersion& lv, const json& podMetadata, const json& podSpec) {
  Evaluation out;
  for (const auto& active : activeChecks(lv)) {
    CheckResult r = active.version->check(podMetadata, podSpec);
    if (r.allowed) continue;
    out.reasons.push_back(r.reason.empty() ? "unknown forbidden reason" : r.reason);
    out.details.push_back(r.detail);
  }
  return out;
}

std::vector<std::string> checkIds(const LevelVersion& lv) {
  std::vector<std::string> out;
  for (const auto& active : activeChecks(lv)) out.push_back(active.check->id);
  return out;
}

}  // namespace minik8s::apiserver::admission::podsecurity
