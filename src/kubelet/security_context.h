// Pod and container securityContext as Kubernetes' kubelet applies them (pkg/securitycontext and
// pkg/kubelet/kuberuntime/security_context*.go, kuberuntime_sandbox.go): the container's
// effective securityContext (the pod's runAsUser, runAsGroup, runAsNonRoot and seLinuxOptions
// under the container's own), its CRI LinuxContainerSecurityContext (capabilities, no_new_privs,
// seccomp, supplemental groups with fsGroup, masked/readonly /proc paths), the sandbox's
// LinuxSandboxSecurityContext and sysctls, and the runAsNonRoot check against the image's user.
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "cri/runtime_service.h"

namespace minik8s::kubelet {

// The user an image runs as, as CRI ImageStatus reports the image config's User: a numeric uid
// or a name. Neither (or no image) reads as uid 0, as the kubelet's getImageUser does.
struct ImageUser {
  std::optional<int64_t> uid;  // unset: `username` names the user
  std::string username;
};
ImageUser imageUserOf(const ::runtime::v1::ImageStatusResponse& status);

// The container's securityContext with the pod-level fields it does not set itself
// (Kubernetes' DetermineEffectiveSecurityContext); an empty object when neither has one.
json effectiveSecurityContext(const json& pod, const json& container);

// The CRI NamespaceOption of the pod's sandbox and containers (Kubernetes' NamespacesForPod):
// hostNetwork/hostPID/hostIPC give NODE; shareProcessNamespace a POD-wide pid namespace.
::runtime::v1::NamespaceOption namespacesForPod(const json& pod);

// The seccomp profile: the container's seccompProfile, else the pod's, else Unconfined (the
// kubelet's default without --seccomp-default). Localhost profiles are files under
// `profileRoot` (<data dir>/seccomp, as /var/lib/kubelet/seccomp); a Localhost profile without
// localhostProfile is an error.
Result<::runtime::v1::SecurityProfile> seccompProfileFor(const json& pod, const json& container,
                                                         const std::string& profileRoot);

// Kubernetes' verifyRunAsNonRoot: with runAsNonRoot true, runAsUser 0 or (without runAsUser) an
// image user that is root or a name is refused with the kubelet's message.
Status verifyRunAsNonRoot(const json& pod, const json& container, const ImageUser& user);

// The container's CRI security context (Kubernetes' determineEffectiveSecurityContext):
// privileged, runAsUser (else the image's uid or user name), runAsGroup, readOnlyRootFilesystem,
// capabilities add/drop (passed as written: the runtime expands "ALL"), allowPrivilegeEscalation
// false as no_new_privs, fsGroup and supplementalGroups, seccomp, procMount as masked and
// readonly paths, seLinuxOptions, namespace options.
Result<::runtime::v1::LinuxContainerSecurityContext> containerSecurityContext(
    const json& pod, const json& container, const ImageUser& user,
    const std::string& seccompProfileRoot);

// The sandbox's security context and sysctls (Kubernetes' generatePodSandboxLinuxConfig):
// privileged when any container is, seccomp RuntimeDefault for the pause process, the pod's
// runAsUser/runAsGroup, fsGroup and supplementalGroups, seLinuxOptions, namespace options, and
// spec.securityContext.sysctls.
void applySandboxSecurityContext(const json& pod, ::runtime::v1::LinuxPodSandboxConfig& linux);

// The kubelet's sysctl admission (pkg/kubelet/sysctl): a pod may set the safe sysctls and those
// `allowedUnsafe` names ("name", or "prefix*" as --allowed-unsafe-sysctls takes them), but no
// net.* one with hostNetwork and no IPC one (kernel.shm*, kernel.msg*, kernel.sem, fs.mqueue.*)
// with hostIPC. The refusal carries the kubelet's message: `forbidden sysctl: "kernel.msgmax"
// not allowlisted`, `forbidden sysctl: "net.ipv4.tcp_syncookies" not allowed with host net
// enabled`.
Status admitSysctls(const json& pod, const std::vector<std::string>& allowedUnsafe);
// The kubelet's check of --allowed-unsafe-sysctls at start: only namespaced sysctls (IPC or
// net) may be allowed: `the sysctls "vm.swappiness" are not known to be namespaced`.
Status validateAllowedUnsafeSysctls(const std::vector<std::string>& allowedUnsafe);

}  // namespace minik8s::kubelet
