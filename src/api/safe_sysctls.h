// Kubernetes' safe sysctls: namespaced kernel parameters a pod may set without the node allowing
// them (the kubelet's SafeSysctlAllowlist), each with the Kubernetes minor version that made it
// safe (Pod Security's baseline profile allows only those of the policy version it enforces; the
// kubelet, at the latest version, allows all of them; the kernel conditions hold on Linux 6.x).
// Shared by the kubelet (security contexts) and the PodSecurity admission plugin.
#pragma once

#include <string_view>

namespace minik8s::api {

struct SafeSysctl {
  std::string_view name;
  int sinceMinor;  // 1.<sinceMinor>
};

inline constexpr SafeSysctl kSafeSysctls[] = {
    {"kernel.shm_rmid_forced", 0},
    {"net.ipv4.ip_local_port_range", 0},
    {"net.ipv4.tcp_syncookies", 0},
    {"net.ipv4.ping_group_range", 0},
    {"net.ipv4.ip_unprivileged_port_start", 0},
    {"net.ipv4.ip_local_reserved_ports", 27},
    {"net.ipv4.tcp_keepalive_time", 29},
    {"net.ipv4.tcp_fin_timeout", 29},
    {"net.ipv4.tcp_keepalive_intvl", 29},
    {"net.ipv4.tcp_keepalive_probes", 29},
    {"net.ipv4.tcp_rmem", 32},
    {"net.ipv4.tcp_wmem", 32},
};

}  // namespace minik8s::api
