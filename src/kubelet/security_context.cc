#include "kubelet/security_context.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "api/object_meta.h"
#include "api/safe_sysctls.h"
#include "kubelet/pod_util.h"

namespace minik8s::kubelet {

namespace v1 = ::runtime::v1;

namespace {

// Kept in sync with Kubernetes' pkg/securitycontext (itself moby's defaults): what a container
// with the Default procMount gets masked and read-only under /proc and /sys.
constexpr const char* kDefaultMaskedPaths[] = {"/proc/asound",
                                               "/proc/acpi",
                                               "/proc/kcore",
                                               "/proc/keys",
                                               "/proc/latency_stats",
                                               "/proc/timer_list",
                                               "/proc/timer_stats",
                                               "/proc/sched_debug",
                                               "/proc/scsi",
                                               "/sys/firmware",
                                               "/sys/devices/virtual/powercap"};
constexpr const char* kDefaultReadonlyPaths[] = {"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
                                                 "/proc/sysrq-trigger"};

const json& podSecurityContext(const json& pod) {
  return api::member(api::member(pod, "spec"), "securityContext");
}

std::optional<int64_t> int64Member(const json& obj, const char* key) {
  const json& v = api::member(obj, key);
  if (v.is_number_integer()) return v.get<int64_t>();
  return std::nullopt;
}

std::optional<bool> boolMember(const json& obj, const char* key) {
  const json& v = api::member(obj, key);
  if (v.is_boolean()) return v.get<bool>();
  return std::nullopt;
}

// name_namespace(uid), as Kubernetes' format.Pod.
std::string formatPod(const json& pod) {
  return podName(pod) + "_" + podNamespace(pod) + "(" + podUid(pod) + ")";
}

void setSeLinux(const json& options, v1::SELinuxOption* out) {
  out->set_user(api::stringMember(options, "user"));
  out->set_role(api::stringMember(options, "role"));
  out->set_type(api::stringMember(options, "type"));
  out->set_level(api::stringMember(options, "level"));
}

// fsGroup first, then supplementalGroups, as the kubelet lists them.
template <typename Groups>
void addPodGroups(const json& podSc, Groups* groups) {
  if (auto fsGroup = int64Member(podSc, "fsGroup")) groups->Add(*fsGroup);
  for (const auto& g : api::member(podSc, "supplementalGroups"))
    if (g.is_number_integer()) groups->Add(g.get<int64_t>());
}

Result<v1::SecurityProfile> fieldSeccompProfile(const json& profile,
                                                const std::string& profileRoot) {
  v1::SecurityProfile out;
  const std::string type = api::stringMember(profile, "type");
  if (type == "RuntimeDefault") {
    out.set_profile_type(v1::SecurityProfile::RuntimeDefault);
  } else if (type == "Localhost") {
    const std::string file = api::stringMember(profile, "localhostProfile");
    if (file.empty())
      return Status::BadRequest(
          "localhostProfile must be set if seccompProfile type is Localhost.");
    out.set_profile_type(v1::SecurityProfile::Localhost);
    out.set_localhost_ref((std::filesystem::path(profileRoot) / file).string());
  } else {
    out.set_profile_type(v1::SecurityProfile::Unconfined);
  }
  return out;
}

// The namespace a sysctl belongs to, as the kubelet names it: "ipc", "net" or "".
std::string sysctlNamespace(const std::string& name) {
  auto starts = [&](const char* prefix) { return name.rfind(prefix, 0) == 0; };
  if (starts("kernel.shm") || starts("kernel.msg") || name == "kernel.sem" || starts("fs.mqueue."))
    return "ipc";
  if (starts("net.")) return "net";
  return "";
}

}  // namespace

ImageUser imageUserOf(const v1::ImageStatusResponse& status) {
  ImageUser user;
  if (status.image().has_uid()) {
    user.uid = status.image().uid().value();
  } else if (!status.image().username().empty()) {
    user.username = status.image().username();
  } else {
    user.uid = 0;  // no user in the image config (or no image): root
  }
  return user;
}

json effectiveSecurityContext(const json& pod, const json& container) {
  json effective = json::object();
  const json& podSc = podSecurityContext(pod);
  if (podSc.is_object()) {
    for (const char* key : {"seLinuxOptions", "windowsOptions", "runAsUser", "runAsGroup",
                            "runAsNonRoot", "appArmorProfile"})
      if (podSc.contains(key) && !podSc[key].is_null()) effective[key] = podSc[key];
  }
  const json& own = api::member(container, "securityContext");
  if (own.is_object())
    for (const auto& [key, value] : own.items())
      if (!value.is_null()) effective[key] = value;
  return effective;
}

v1::NamespaceOption namespacesForPod(const json& pod) {
  const json& spec = api::member(pod, "spec");
  v1::NamespaceOption ns;
  ns.set_network(hostNetwork(pod) ? v1::NODE : v1::POD);
  ns.set_pid(boolMember(spec, "hostPID").value_or(false)                 ? v1::NODE
             : boolMember(spec, "shareProcessNamespace").value_or(false) ? v1::POD
                                                                         : v1::CONTAINER);
  ns.set_ipc(boolMember(spec, "hostIPC").value_or(false) ? v1::NODE : v1::POD);
  return ns;
}

Result<v1::SecurityProfile> seccompProfileFor(const json& pod, const json& container,
                                              const std::string& profileRoot) {
  const json& own = api::member(api::member(container, "securityContext"), "seccompProfile");
  if (own.is_object()) return fieldSeccompProfile(own, profileRoot);
  const json& podLevel = api::member(podSecurityContext(pod), "seccompProfile");
  if (podLevel.is_object()) return fieldSeccompProfile(podLevel, profileRoot);
  v1::SecurityProfile unconfined;
  unconfined.set_profile_type(v1::SecurityProfile::Unconfined);
  return unconfined;
}

Status verifyRunAsNonRoot(const json& pod, const json& container, const ImageUser& user) {
  const json sc = effectiveSecurityContext(pod, container);
  if (!boolMember(sc, "runAsNonRoot").value_or(false)) return Status::Ok();
  const std::string where = fmt::format("(pod: \"{}\", container: {})", formatPod(pod),
                                        api::stringMember(container, "name"));
  if (auto runAsUser = int64Member(sc, "runAsUser")) {
    if (*runAsUser == 0)
      return Status::BadRequest("container's runAsUser breaks non-root policy " + where);
    return Status::Ok();
  }
  if (user.uid && *user.uid == 0)
    return Status::BadRequest("container has runAsNonRoot and image will run as root " + where);
  if (!user.uid && !user.username.empty())
    return Status::BadRequest("container has runAsNonRoot and image has non-numeric user (" +
                              user.username + "), cannot verify user is non-root " + where);
  return Status::Ok();
}

Result<v1::LinuxContainerSecurityContext> containerSecurityContext(
    const json& pod, const json& container, const ImageUser& user,
    const std::string& seccompProfileRoot) {
  const json sc = effectiveSecurityContext(pod, container);
  v1::LinuxContainerSecurityContext out;
  const json& caps = api::member(sc, "capabilities");
  for (const auto& c : api::member(caps, "add"))
    if (c.is_string()) out.mutable_capabilities()->add_add_capabilities(c.get<std::string>());
  for (const auto& c : api::member(caps, "drop"))
    if (c.is_string()) out.mutable_capabilities()->add_drop_capabilities(c.get<std::string>());
  if (sc.contains("seLinuxOptions") && sc["seLinuxOptions"].is_object())
    setSeLinux(sc["seLinuxOptions"], out.mutable_selinux_options());
  out.set_privileged(boolMember(sc, "privileged").value_or(false));
  out.set_readonly_rootfs(boolMember(sc, "readOnlyRootFilesystem").value_or(false));
  if (auto uid = int64Member(sc, "runAsUser")) {
    out.mutable_run_as_user()->set_value(*uid);
  } else if (user.uid) {
    out.mutable_run_as_user()->set_value(*user.uid);
  } else {
    out.set_run_as_username(user.username);
  }
  if (auto gid = int64Member(sc, "runAsGroup")) out.mutable_run_as_group()->set_value(*gid);

  auto seccomp = seccompProfileFor(pod, container, seccompProfileRoot);
  if (!seccomp.ok()) return seccomp.status();
  *out.mutable_seccomp() = *seccomp;

  *out.mutable_namespace_options() = namespacesForPod(pod);
  addPodGroups(podSecurityContext(pod), out.mutable_supplemental_groups());
  // no_new_privs only when allowPrivilegeEscalation is explicitly false.
  out.set_no_new_privs(!boolMember(sc, "allowPrivilegeEscalation").value_or(true));
  // Unmasked: no paths (with containerd an empty list means its own defaults).
  if (api::stringMember(sc, "procMount") != "Unmasked") {
    for (const char* p : kDefaultMaskedPaths) out.add_masked_paths(p);
    for (const char* p : kDefaultReadonlyPaths) out.add_readonly_paths(p);
  }
  return out;
}

void applySandboxSecurityContext(const json& pod, v1::LinuxPodSandboxConfig& linux) {
  auto* sc = linux.mutable_security_context();
  // containerd runs a privileged container only in a privileged sandbox.
  for (const json* list : {&initContainers(pod), &containers(pod)})
    for (const auto& c : *list)
      if (boolMember(api::member(c, "securityContext"), "privileged").value_or(false))
        sc->set_privileged(true);
  // The pause process always gets the runtime's default profile (kubernetes#84623).
  sc->mutable_seccomp()->set_profile_type(v1::SecurityProfile::RuntimeDefault);
  *sc->mutable_namespace_options() = namespacesForPod(pod);
  const json& podSc = podSecurityContext(pod);
  if (!podSc.is_object()) return;
  if (auto uid = int64Member(podSc, "runAsUser")) sc->mutable_run_as_user()->set_value(*uid);
  if (auto gid = int64Member(podSc, "runAsGroup")) sc->mutable_run_as_group()->set_value(*gid);
  addPodGroups(podSc, sc->mutable_supplemental_groups());
  if (podSc.contains("seLinuxOptions") && podSc["seLinuxOptions"].is_object())
    setSeLinux(podSc["seLinuxOptions"], sc->mutable_selinux_options());
  for (const auto& s : api::member(podSc, "sysctls")) {
    const std::string name = api::stringMember(s, "name");
    if (!name.empty()) (*linux.mutable_sysctls())[name] = api::stringMember(s, "value");
  }
}

Status admitSysctls(const json& pod, const std::vector<std::string>& allowedUnsafe) {
  const json& spec = api::member(pod, "spec");
  const bool hostNet = hostNetwork(pod), hostIpc = boolMember(spec, "hostIPC").value_or(false);
  auto allowed = [&](const std::string& name) {
    for (const auto& safe : api::kSafeSysctls)  // the kubelet's list: all of them
      if (name == safe.name) return true;
    for (const auto& pattern : allowedUnsafe) {
      if (!pattern.empty() && pattern.back() == '*') {
        if (name.rfind(pattern.substr(0, pattern.size() - 1), 0) == 0) return true;
      } else if (name == pattern) {
        return true;
      }
    }
    return false;
  };
  for (const auto& s : api::member(podSecurityContext(pod), "sysctls")) {
    // Names may use / as the separator (net/ipv4/tcp_syncookies).
    std::string name = api::stringMember(s, "name");
    std::replace(name.begin(), name.end(), '/', '.');
    if (!allowed(name))
      return Status::Forbidden("forbidden sysctl: \"" + name + "\" not allowlisted");
    const std::string ns = sysctlNamespace(name);
    if ((ns == "net" && hostNet) || (ns == "ipc" && hostIpc))
      return Status::Forbidden("forbidden sysctl: \"" + name + "\" not allowed with host " + ns +
                               " enabled");
  }
  return Status::Ok();
}

Status validateAllowedUnsafeSysctls(const std::vector<std::string>& allowedUnsafe) {
  for (const auto& pattern : allowedUnsafe) {
    std::string name = pattern;
    if (!name.empty() && name.back() == '*') name.pop_back();
    // A pattern is namespaced when what it names is: "net.*", "kernel.shm*", "fs.mqueue.*".
    const bool namespaced = !sysctlNamespace(name).empty();
    if (!namespaced)
      return Status::BadRequest("the sysctls \"" + pattern + "\" are not known to be namespaced");
  }
  return Status::Ok();
}

}  // namespace minik8s::kubelet
