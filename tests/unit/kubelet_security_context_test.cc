// The CRI security contexts the kubelet derives from a pod (kubelet/security_context.h), as
// Kubernetes' kubelet sends them: the pod/container merge, capabilities, no_new_privs, seccomp,
// supplemental groups, procMount, the sandbox's context and sysctls, and the runAsNonRoot check
// with the kubelet's messages. The sync-level behaviour (CreateContainerConfigError, Events)
// is in kubelet_pod_sync_test.cc.
#include <gtest/gtest.h>

#include <vector>

#include "kubelet/security_context.h"

namespace minik8s::kubelet {
namespace {

namespace v1 = ::runtime::v1;

json restrictedPod() {
  return json::parse(R"J({
    "metadata": {"name": "web", "namespace": "team", "uid": "uid-1"},
    "spec": {
      "securityContext": {"runAsNonRoot": true, "runAsUser": 2000, "runAsGroup": 3000,
                          "fsGroup": 4000, "supplementalGroups": [5000, 5001],
                          "seccompProfile": {"type": "RuntimeDefault"},
                          "sysctls": [{"name": "net.ipv4.ip_local_port_range",
                                       "value": "1024 65000"}]},
      "containers": [{"name": "app", "image": "busybox:1.36",
                      "securityContext": {"runAsUser": 1000, "allowPrivilegeEscalation": false,
                                          "readOnlyRootFilesystem": true,
                                          "capabilities": {"drop": ["ALL"],
                                                           "add": ["NET_BIND_SERVICE"]}}}]}})J");
}

const json& firstContainer(const json& pod) { return pod["spec"]["containers"][0]; }

// A repeated proto field as a vector, for EXPECT_EQ.
template <typename List>
auto asVector(const List& l) {
  return std::vector<typename List::value_type>(l.begin(), l.end());
}

TEST(SecurityContextTest, ContainerFieldsWinOverThePods) {
  json pod = restrictedPod();
  json sc = effectiveSecurityContext(pod, firstContainer(pod));
  EXPECT_EQ(sc["runAsUser"], 1000);     // the container's
  EXPECT_EQ(sc["runAsGroup"], 3000);    // the pod's
  EXPECT_EQ(sc["runAsNonRoot"], true);  // the pod's
  EXPECT_FALSE(sc.contains("fsGroup"));
  EXPECT_FALSE(sc.contains("seccompProfile"));  // seccomp is resolved on its own
  EXPECT_EQ(effectiveSecurityContext(json::object(), json::object()), json::object());
}

TEST(SecurityContextTest, RestrictedContainerAsTheKubeletSendsIt) {
  json pod = restrictedPod();
  auto sc = containerSecurityContext(pod, firstContainer(pod), ImageUser{0, ""}, "/data/seccomp");
  ASSERT_TRUE(sc.ok()) << sc.status().toString();
  ASSERT_TRUE(sc->has_run_as_user());
  EXPECT_EQ(sc->run_as_user().value(), 1000);
  EXPECT_EQ(sc->run_as_group().value(), 3000);
  EXPECT_TRUE(sc->run_as_username().empty());
  EXPECT_TRUE(sc->no_new_privs());
  EXPECT_TRUE(sc->readonly_rootfs());
  EXPECT_FALSE(sc->privileged());
  EXPECT_EQ(asVector(sc->capabilities().drop_capabilities()), std::vector<std::string>{"ALL"});
  EXPECT_EQ(asVector(sc->capabilities().add_capabilities()),
            std::vector<std::string>{"NET_BIND_SERVICE"});
  EXPECT_EQ(sc->seccomp().profile_type(), v1::SecurityProfile::RuntimeDefault);
  EXPECT_EQ(asVector(sc->supplemental_groups()), (std::vector<int64_t>{4000, 5000, 5001}));
  EXPECT_EQ(sc->masked_paths_size(), 11);
  EXPECT_EQ(sc->masked_paths(0), "/proc/asound");
  EXPECT_EQ(asVector(sc->readonly_paths()),
            (std::vector<std::string>{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
                                      "/proc/sysrq-trigger"}));
  EXPECT_EQ(sc->namespace_options().network(), v1::POD);
  EXPECT_EQ(sc->namespace_options().pid(), v1::CONTAINER);
}

TEST(SecurityContextTest, PlainContainerRunsAsTheImageUserUnconfined) {
  json pod = {{"metadata", {{"name", "p"}}},
              {"spec", {{"shareProcessNamespace", true}, {"containers", {{{"name", "c"}}}}}}};
  auto sc = containerSecurityContext(pod, firstContainer(pod), ImageUser{0, ""}, "/s");
  ASSERT_TRUE(sc.ok());
  EXPECT_EQ(sc->run_as_user().value(), 0);  // no User in the image: root, said explicitly
  EXPECT_FALSE(sc->has_run_as_group());
  EXPECT_FALSE(sc->no_new_privs());  // allowPrivilegeEscalation unset
  EXPECT_FALSE(sc->has_capabilities());
  EXPECT_EQ(sc->seccomp().profile_type(), v1::SecurityProfile::Unconfined);
  EXPECT_EQ(sc->supplemental_groups_size(), 0);
  EXPECT_EQ(sc->namespace_options().pid(), v1::POD);

  sc = containerSecurityContext(pod, firstContainer(pod), ImageUser{1000, ""}, "/s");
  EXPECT_EQ(sc->run_as_user().value(), 1000);
  sc = containerSecurityContext(pod, firstContainer(pod), ImageUser{std::nullopt, "nginx"}, "/s");
  EXPECT_FALSE(sc->has_run_as_user());
  EXPECT_EQ(sc->run_as_username(), "nginx");
}

TEST(SecurityContextTest, SeccompProfileContainerThenPodThenUnconfined) {
  json pod = restrictedPod();
  json& c = pod["spec"]["containers"][0];
  c["securityContext"]["seccompProfile"] = {{"type", "Localhost"},
                                            {"localhostProfile", "profiles/audit.json"}};
  auto p = seccompProfileFor(pod, c, "/data/seccomp");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->profile_type(), v1::SecurityProfile::Localhost);
  EXPECT_EQ(p->localhost_ref(), "/data/seccomp/profiles/audit.json");
  c["securityContext"]["seccompProfile"] = {{"type", "Unconfined"}};
  EXPECT_EQ(seccompProfileFor(pod, c, "/s")->profile_type(), v1::SecurityProfile::Unconfined);
  c["securityContext"].erase("seccompProfile");
  EXPECT_EQ(seccompProfileFor(pod, c, "/s")->profile_type(), v1::SecurityProfile::RuntimeDefault);
  pod["spec"]["securityContext"].erase("seccompProfile");
  EXPECT_EQ(seccompProfileFor(pod, c, "/s")->profile_type(), v1::SecurityProfile::Unconfined);

  c["securityContext"]["seccompProfile"] = {{"type", "Localhost"}};
  auto bad = containerSecurityContext(pod, c, ImageUser{0, ""}, "/s");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "localhostProfile must be set if seccompProfile type is Localhost.");
}

TEST(SecurityContextTest, UnmaskedProcMountHasNoMaskedPaths) {
  json pod = restrictedPod();
  pod["spec"]["containers"][0]["securityContext"]["procMount"] = "Unmasked";
  auto sc = containerSecurityContext(pod, firstContainer(pod), ImageUser{0, ""}, "/s");
  EXPECT_EQ(sc->masked_paths_size(), 0);
  EXPECT_EQ(sc->readonly_paths_size(), 0);
}

TEST(SecurityContextTest, RunAsNonRootIsVerifiedAgainstTheImageUser) {
  json pod = restrictedPod();
  json c = firstContainer(pod);
  EXPECT_TRUE(verifyRunAsNonRoot(pod, c, ImageUser{0, ""}).ok());  // runAsUser 1000 decides
  c["securityContext"]["runAsUser"] = 0;
  EXPECT_EQ(verifyRunAsNonRoot(pod, c, ImageUser{1000, ""}).message(),
            "container's runAsUser breaks non-root policy (pod: \"web_team(uid-1)\", container: "
            "app)");
  c["securityContext"].erase("runAsUser");
  pod["spec"]["securityContext"].erase("runAsUser");
  EXPECT_EQ(verifyRunAsNonRoot(pod, c, ImageUser{0, ""}).message(),
            "container has runAsNonRoot and image will run as root (pod: \"web_team(uid-1)\", "
            "container: app)");
  EXPECT_EQ(verifyRunAsNonRoot(pod, c, ImageUser{std::nullopt, "nginx"}).message(),
            "container has runAsNonRoot and image has non-numeric user (nginx), cannot verify "
            "user is non-root (pod: \"web_team(uid-1)\", container: app)");
  EXPECT_TRUE(verifyRunAsNonRoot(pod, c, ImageUser{65534, ""}).ok());
  // The container may turn the pod's requirement off.
  c["securityContext"]["runAsNonRoot"] = false;
  EXPECT_TRUE(verifyRunAsNonRoot(pod, c, ImageUser{0, ""}).ok());
}

TEST(SecurityContextTest, ImageUserFromImageStatus) {
  v1::ImageStatusResponse st;
  EXPECT_EQ(imageUserOf(st).uid, 0);  // no image: root
  st.mutable_image()->set_username("nginx");
  EXPECT_FALSE(imageUserOf(st).uid.has_value());
  EXPECT_EQ(imageUserOf(st).username, "nginx");
  st.mutable_image()->mutable_uid()->set_value(1000);
  EXPECT_EQ(imageUserOf(st).uid, 1000);
}

TEST(SecurityContextTest, SandboxGetsThePodLevelContextAndSysctls) {
  json pod = restrictedPod();
  v1::LinuxPodSandboxConfig lx;
  applySandboxSecurityContext(pod, lx);
  const auto& sc = lx.security_context();
  EXPECT_EQ(sc.run_as_user().value(), 2000);
  EXPECT_EQ(sc.run_as_group().value(), 3000);
  EXPECT_EQ(asVector(sc.supplemental_groups()), (std::vector<int64_t>{4000, 5000, 5001}));
  EXPECT_EQ(sc.seccomp().profile_type(), v1::SecurityProfile::RuntimeDefault);
  EXPECT_TRUE(sc.has_seccomp());
  EXPECT_FALSE(sc.privileged());
  EXPECT_EQ(lx.sysctls().at("net.ipv4.ip_local_port_range"), "1024 65000");

  // A privileged init container makes the sandbox privileged; no pod context, no user.
  json plain = {
      {"spec",
       {{"hostNetwork", true},
        {"initContainers", {{{"name", "i"}, {"securityContext", {{"privileged", true}}}}}},
        {"containers", {{{"name", "c"}}}}}}};
  v1::LinuxPodSandboxConfig lx2;
  applySandboxSecurityContext(plain, lx2);
  EXPECT_TRUE(lx2.security_context().privileged());
  EXPECT_FALSE(lx2.security_context().has_run_as_user());
  EXPECT_EQ(lx2.security_context().namespace_options().network(), v1::NODE);
  EXPECT_TRUE(lx2.sysctls().empty());
}

TEST(SecurityContextTest, SysctlAdmissionAsTheKubelets) {
  json pod = {{"spec",
               {{"securityContext",
                 {{"sysctls",
                   {{{"name", "net.ipv4.tcp_syncookies"}, {"value", "1"}},
                    {{"name", "kernel/shm_rmid_forced"}, {"value", "1"}}}}}}}}};
  EXPECT_TRUE(admitSysctls(pod, {}).ok());
  pod["spec"]["securityContext"]["sysctls"].push_back({{"name", "kernel.msgmax"}, {"value", "1"}});
  EXPECT_EQ(admitSysctls(pod, {}).message(), "forbidden sysctl: \"kernel.msgmax\" not allowlisted");
  EXPECT_TRUE(admitSysctls(pod, {"kernel.msgmax"}).ok());
  EXPECT_TRUE(admitSysctls(pod, {"kernel.msg*"}).ok());
  EXPECT_FALSE(admitSysctls(pod, {"kernel.shm*"}).ok());
  pod["spec"]["hostNetwork"] = true;
  EXPECT_EQ(admitSysctls(pod, {"kernel.msg*"}).message(),
            "forbidden sysctl: \"net.ipv4.tcp_syncookies\" not allowed with host net enabled");
  pod["spec"].erase("hostNetwork");
  pod["spec"]["hostIPC"] = true;
  EXPECT_EQ(admitSysctls(pod, {"kernel.msg*"}).message(),
            "forbidden sysctl: \"kernel.shm_rmid_forced\" not allowed with host ipc enabled");
  EXPECT_TRUE(admitSysctls(json::object(), {}).ok());

  EXPECT_TRUE(
      validateAllowedUnsafeSysctls({"kernel.msg*", "net.core.somaxconn", "fs.mqueue.*"}).ok());
  EXPECT_EQ(validateAllowedUnsafeSysctls({"net.*", "vm.swappiness"}).message(),
            "the sysctls \"vm.swappiness\" are not known to be namespaced");
}

}  // namespace
}  // namespace minik8s::kubelet
