// Pod Security Standards (apiserver/admission/pod_security_policy.h): every check of the baseline
// and restricted levels with Kubernetes' reasons and details, the order they come in, the
// versions they apply from, and how namespace labels become a policy.
#include <gtest/gtest.h>

#include "apiserver/admission/pod_security_policy.h"

namespace minik8s::apiserver::admission::podsecurity {
namespace {

const LevelVersion kBaseline{Level::kBaseline, Version{}};
const LevelVersion kRestricted{Level::kRestricted, Version{}};

// A container that passes every restricted check.
json goodContainer(const std::string& name) {
  return {{"name", name},
          {"image", "busybox"},
          {"securityContext",
           {{"allowPrivilegeEscalation", false},
            {"runAsNonRoot", true},
            {"capabilities", {{"drop", {"ALL"}}}},
            {"seccompProfile", {{"type", "RuntimeDefault"}}}}}};
}

json goodSpec() { return {{"containers", {goodContainer("c")}}}; }

// The forbidden detail of `spec` (and `meta`) at `lv`; "" when allowed.
std::string detail(const LevelVersion& lv, const json& spec, const json& meta = json::object()) {
  return evaluatePod(lv, meta, spec).forbiddenDetail();
}

TEST(PodSecurityPolicyTest, PrivilegedAllowsEverything) {
  json spec = {{"hostNetwork", true},
               {"containers", {{{"name", "c"}, {"securityContext", {{"privileged", true}}}}}}};
  EXPECT_TRUE(evaluatePod({Level::kPrivileged, Version{}}, json::object(), spec).allowed());
  EXPECT_TRUE(checkIds({Level::kPrivileged, Version{}}).empty());
}

TEST(PodSecurityPolicyTest, ACompliantPodPassesRestricted) {
  EXPECT_TRUE(evaluatePod(kRestricted, json::object(), goodSpec()).allowed());
  // Pod-level runAsNonRoot and seccompProfile cover the containers.
  json spec = {
      {"securityContext", {{"runAsNonRoot", true}, {"seccompProfile", {{"type", "Localhost"}}}}},
      {"containers",
       {{{"name", "c"},
         {"securityContext",
          {{"allowPrivilegeEscalation", false},
           {"capabilities", {{"drop", {"ALL"}}, {"add", {"NET_BIND_SERVICE"}}}}}}}}}};
  EXPECT_EQ(detail(kRestricted, spec), "");
}

TEST(PodSecurityPolicyTest, ADefaultPodViolatesRestrictedAsKubernetesSays) {
  json spec = {{"containers", {{{"name", "nginx"}, {"image", "nginx"}}}}};
  EXPECT_TRUE(evaluatePod(kBaseline, json::object(), spec).allowed());
  auto result = evaluatePod(kRestricted, json::object(), spec);
  EXPECT_EQ(result.forbiddenReason(),
            "allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, "
            "seccompProfile");
  EXPECT_EQ(result.forbiddenDetail(),
            "allowPrivilegeEscalation != false (container \"nginx\" must set "
            "securityContext.allowPrivilegeEscalation=false), unrestricted capabilities "
            "(container \"nginx\" must set securityContext.capabilities.drop=[\"ALL\"]), "
            "runAsNonRoot != true (pod or container \"nginx\" must set "
            "securityContext.runAsNonRoot=true), seccompProfile (pod or container \"nginx\" must "
            "set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")");
}

TEST(PodSecurityPolicyTest, ContainersOfEveryKindArePluralizedInVisitOrder) {
  json spec = {{"initContainers", {{{"name", "init"}}}},
               {"containers", {{{"name", "web"}}, {{"name", "log"}}}},
               {"ephemeralContainers", {{{"name", "debug"}}}}};
  auto result = evaluatePod(kRestricted, json::object(), spec);
  ASSERT_FALSE(result.allowed());
  EXPECT_EQ(result.details[0],
            "containers \"init\", \"web\", \"log\", \"debug\" must set "
            "securityContext.allowPrivilegeEscalation=false");
}

TEST(PodSecurityPolicyTest, HostNamespaces) {
  json spec = {
      {"hostIPC", true}, {"hostNetwork", true}, {"hostPID", true}, {"containers", json::array()}};
  EXPECT_EQ(detail(kBaseline, spec),
            "host namespaces (hostNetwork=true, hostPID=true, hostIPC=true)");
  EXPECT_EQ(detail(kBaseline, {{"hostPID", false}}), "");
}

TEST(PodSecurityPolicyTest, Privileged) {
  json spec = {{"containers",
                {{{"name", "a"}, {"securityContext", {{"privileged", true}}}},
                 {{"name", "b"}, {"securityContext", {{"privileged", false}}}}}}};
  EXPECT_EQ(detail(kBaseline, spec),
            "privileged (container \"a\" must not set securityContext.privileged=true)");
}

TEST(PodSecurityPolicyTest, BaselineCapabilities) {
  json spec = {
      {"containers",
       {{{"name", "a"},
         {"securityContext", {{"capabilities", {{"add", {"SYS_ADMIN", "CHOWN", "NET_RAW"}}}}}}},
        {{"name", "b"}, {"securityContext", {{"capabilities", {{"add", {"KILL"}}}}}}}}}};
  EXPECT_EQ(detail(kBaseline, spec),
            "non-default capabilities (container \"a\" must not include \"NET_RAW\", "
            "\"SYS_ADMIN\" in securityContext.capabilities.add)");
}

TEST(PodSecurityPolicyTest, HostPathVolumesAndHostPorts) {
  json spec = {{"volumes",
                {{{"name", "root"}, {"hostPath", {{"path", "/"}}}},
                 {{"name", "data"}, {"emptyDir", json::object()}},
                 {{"name", "sys"}, {"hostPath", {{"path", "/sys"}}}}}},
               {"containers",
                {{{"name", "web"},
                  {"ports",
                   {{{"containerPort", 80}, {"hostPort", 8080}},
                    {{"containerPort", 443}, {"hostPort", 10443}}}}},
                 {{"name", "ok"}, {"ports", {{{"containerPort", 80}, {"hostPort", 0}}}}}}}};
  EXPECT_EQ(detail(kBaseline, spec),
            "hostPath volumes (volumes \"root\", \"sys\"), hostPort (container \"web\" uses "
            "hostPorts 10443, 8080)");
}

TEST(PodSecurityPolicyTest, AppArmor) {
  json meta = {{"annotations",
                {{"container.apparmor.security.beta.kubernetes.io/c", "unconfined"},
                 {"container.apparmor.security.beta.kubernetes.io/d", "localhost/mine"}}}};
  json spec = {{"securityContext", {{"appArmorProfile", {{"type", "Unconfined"}}}}},
               {"containers", {{{"name", "c"}}}}};
  EXPECT_EQ(detail(kBaseline, spec, meta),
            "forbidden AppArmor profiles (pod and annotation must not set AppArmor profile type "
            "to \"Unconfined\", \"container.apparmor.security.beta.kubernetes.io/c="
            "\"unconfined\"\")");
  json fine = {{"containers",
                {{{"name", "c"},
                  {"securityContext", {{"appArmorProfile", {{"type", "RuntimeDefault"}}}}}}}}};
  EXPECT_EQ(detail(kBaseline, fine), "");
}

TEST(PodSecurityPolicyTest, SELinux) {
  json spec = {
      {"securityContext", {{"seLinuxOptions", {{"type", "spc_t"}}}}},
      {"containers",
       {{{"name", "c"},
         {"securityContext", {{"seLinuxOptions", {{"user", "root"}, {"role", "sysadm_r"}}}}}},
        {{"name", "ok"},
         {"securityContext", {{"seLinuxOptions", {{"type", "container_t"}, {"level", "s0"}}}}}}}}};
  EXPECT_EQ(detail(kBaseline, spec),
            "seLinuxOptions (pod and container \"c\" set forbidden "
            "securityContext.seLinuxOptions: type \"spc_t\"; user may not be set; role may not be "
            "set)");
  // container_engine_t is allowed from v1.31.
  json engine = {{"securityContext", {{"seLinuxOptions", {{"type", "container_engine_t"}}}}}};
  EXPECT_EQ(detail(kBaseline, engine), "");
  EXPECT_EQ(detail({Level::kBaseline, Version::v1(30)}, engine),
            "seLinuxOptions (pod set forbidden securityContext.seLinuxOptions: type "
            "\"container_engine_t\")");
}

TEST(PodSecurityPolicyTest, ProcMount) {
  json spec = {{"containers",
                {{{"name", "c"}, {"securityContext", {{"procMount", "Unmasked"}}}},
                 {{"name", "d"}, {"securityContext", {{"procMount", "Default"}}}}}}};
  EXPECT_EQ(detail(kBaseline, spec),
            "procMount (container \"c\" must not set securityContext.procMount to \"Unmasked\")");
}

TEST(PodSecurityPolicyTest, SeccompBaselineRefusesOnlyUnconfined) {
  json spec = {
      {"securityContext", {{"seccompProfile", {{"type", "Unconfined"}}}}},
      {"containers",
       {{{"name", "c"}, {"securityContext", {{"seccompProfile", {{"type", "Unconfined"}}}}}}}}};
  EXPECT_EQ(detail(kBaseline, spec),
            "seccompProfile (pod and container \"c\" must not set "
            "securityContext.seccompProfile.type to \"Unconfined\")");
  EXPECT_EQ(detail(kBaseline, {{"containers", {{{"name", "c"}}}}}), "");
  // Before v1.19 the annotations chose the profile.
  json meta = {{"annotations", {{"seccomp.security.alpha.kubernetes.io/pod", "unconfined"}}}};
  EXPECT_EQ(detail({Level::kBaseline, Version::v1(18)}, {{"containers", {{{"name", "c"}}}}}, meta),
            "seccompProfile (forbidden annotation "
            "seccomp.security.alpha.kubernetes.io/pod=\"unconfined\")");
}

TEST(PodSecurityPolicyTest, SysctlsOutsideTheSafeSet) {
  json spec = {{"securityContext",
                {{"sysctls",
                  {{{"name", "net.ipv4.tcp_syncookies"}, {"value", "1"}},
                   {{"name", "kernel.msgmax"}, {"value", "1"}},
                   {{"name", "net.ipv4.tcp_rmem"}, {"value", "4096 87380 6291456"}}}}}}};
  EXPECT_EQ(detail(kBaseline, spec), "forbidden sysctls (kernel.msgmax)");
  // tcp_rmem is safe from v1.32 only.
  EXPECT_EQ(detail({Level::kBaseline, Version::v1(31)}, spec),
            "forbidden sysctls (kernel.msgmax, net.ipv4.tcp_rmem)");
}

TEST(PodSecurityPolicyTest, WindowsHostProcess) {
  json spec = {
      {"securityContext", {{"windowsOptions", {{"hostProcess", true}}}}},
      {"containers",
       {{{"name", "c"}, {"securityContext", {{"windowsOptions", {{"hostProcess", true}}}}}}}}};
  EXPECT_EQ(detail(kBaseline, spec),
            "hostProcess (pod and container \"c\" must not set "
            "securityContext.windowsOptions.hostProcess=true)");
}

TEST(PodSecurityPolicyTest, RestrictedVolumeTypes) {
  json spec = goodSpec();
  spec["volumes"] = {{{"name", "cm"}, {"configMap", {{"name", "x"}}}},
                     {{"name", "root"}, {"hostPath", {{"path", "/"}}}},
                     {{"name", "share"}, {"nfs", {{"server", "s"}, {"path", "/"}}}},
                     {{"name", "claim"}, {"persistentVolumeClaim", {{"claimName", "c"}}}},
                     {{"name", "odd"}, {"somethingNew", json::object()}}};
  // restrictedVolumes replaces the baseline hostPath check.
  EXPECT_EQ(detail(kRestricted, spec),
            "restricted volume types (volumes \"root\", \"share\", \"odd\" use restricted volume "
            "types \"hostPath\", \"nfs\", \"unknown\")");
}

TEST(PodSecurityPolicyTest, RestrictedCapabilities) {
  json spec = goodSpec();
  spec["containers"][0]["securityContext"]["capabilities"] = {
      {"drop", {"NET_RAW"}}, {"add", {"SYS_TIME", "NET_BIND_SERVICE"}}};
  // capabilities_restricted replaces the baseline capabilities check.
  EXPECT_EQ(detail(kRestricted, spec),
            "unrestricted capabilities (container \"c\" must set "
            "securityContext.capabilities.drop=[\"ALL\"]; container \"c\" must not include "
            "\"SYS_TIME\" in securityContext.capabilities.add)");
}

TEST(PodSecurityPolicyTest, RunAsNonRootAndRunAsUser) {
  json spec = goodSpec();
  spec["securityContext"] = {{"runAsNonRoot", false}, {"runAsUser", 0}};
  spec["containers"][0]["securityContext"]["runAsNonRoot"] = false;
  spec["containers"][0]["securityContext"]["runAsUser"] = 0;
  EXPECT_EQ(detail(kRestricted, spec),
            "runAsNonRoot != true (pod and container \"c\" must not set "
            "securityContext.runAsNonRoot=false), runAsUser=0 (pod and container \"c\" must not "
            "set runAsUser=0)");
  // runAsUser=0 is a restricted violation from v1.23 only.
  EXPECT_EQ(detail({Level::kRestricted, Version::v1(22)}, spec),
            "runAsNonRoot != true (pod and container \"c\" must not set "
            "securityContext.runAsNonRoot=false)");
}

TEST(PodSecurityPolicyTest, SeccompRestrictedNeedsAProfile) {
  json spec = goodSpec();
  spec["containers"][0]["securityContext"].erase("seccompProfile");
  EXPECT_EQ(detail(kRestricted, spec),
            "seccompProfile (pod or container \"c\" must set securityContext.seccompProfile.type "
            "to \"RuntimeDefault\" or \"Localhost\")");
  spec["securityContext"] = {{"seccompProfile", {{"type", "Unconfined"}}}};
  EXPECT_EQ(detail(kRestricted, spec),
            "seccompProfile (pod must not set securityContext.seccompProfile.type to "
            "\"Unconfined\")");
  // Windows pods skip the Linux-only restricted checks from v1.25.
  json windows = {{"os", {{"name", "windows"}}},
                  {"securityContext", {{"runAsNonRoot", true}}},
                  {"containers", {{{"name", "c"}}}}};
  EXPECT_EQ(detail(kRestricted, windows), "");
  EXPECT_NE(detail({Level::kRestricted, Version::v1(24)}, windows), "");
}

TEST(PodSecurityPolicyTest, RestrictedIncludesBaselineChecksInKubernetesOrder) {
  json spec = {{"hostNetwork", true},
               {"containers", {{{"name", "c"}, {"securityContext", {{"privileged", true}}}}}}};
  auto result = evaluatePod(kRestricted, json::object(), spec);
  EXPECT_EQ(result.reasons,
            (std::vector<std::string>{
                "host namespaces", "privileged", "allowPrivilegeEscalation != false",
                "unrestricted capabilities", "runAsNonRoot != true", "seccompProfile"}));
  EXPECT_EQ(checkIds(kBaseline),
            (std::vector<std::string>{"appArmorProfile", "capabilities_baseline", "hostNamespaces",
                                      "hostPathVolumes", "hostPorts", "privileged", "procMount",
                                      "seLinuxOptions", "seccompProfile_baseline", "sysctls",
                                      "windowsHostProcess"}));
  EXPECT_EQ(checkIds(kRestricted),
            (std::vector<std::string>{"appArmorProfile", "hostNamespaces", "hostPorts",
                                      "privileged", "procMount", "seLinuxOptions", "sysctls",
                                      "windowsHostProcess", "allowPrivilegeEscalation",
                                      "capabilities_restricted", "restrictedVolumes",
                                      "runAsNonRoot", "runAsUser", "seccompProfile_restricted"}));
}

TEST(PodSecurityPolicyTest, VersionsSelectTheChecksOfTheirTime) {
  // v1.0 restricted: no capabilities_restricted (v1.22), runAsUser (v1.23),
  // allowPrivilegeEscalation (v1.8) or seccompProfile_restricted (v1.19); the baseline checks
  // they override are back.
  EXPECT_EQ(checkIds({Level::kRestricted, Version::v1(0)}),
            (std::vector<std::string>{"appArmorProfile", "capabilities_baseline", "hostNamespaces",
                                      "hostPorts", "privileged", "procMount", "seLinuxOptions",
                                      "seccompProfile_baseline", "sysctls", "windowsHostProcess",
                                      "restrictedVolumes", "runAsNonRoot"}));
  // Versions newer than the server's evaluate as its newest.
  json spec = {{"containers", {{{"name", "c"}}}}};
  EXPECT_EQ(detail({Level::kRestricted, Version::v1(40)}, spec), detail(kRestricted, spec));
}

TEST(PodSecurityPolicyTest, LevelsAndVersionsPrint) {
  EXPECT_EQ(kRestricted.toString(), "restricted:latest");
  EXPECT_EQ((LevelVersion{Level::kBaseline, Version::v1(29)}).toString(), "baseline:v1.29");
  EXPECT_EQ(compareLevels(Level::kRestricted, Level::kBaseline), 1);
  EXPECT_EQ(compareLevels(Level::kPrivileged, Level::kBaseline), -1);
}

TEST(PodSecurityPolicyTest, PolicyFromLabels) {
  auto none = policyFromLabels(json());
  EXPECT_TRUE(none.errors.empty());
  EXPECT_TRUE(none.policy.fullyPrivileged());

  auto p = policyFromLabels({{kEnforceLevelLabel, "baseline"},
                             {kEnforceVersionLabel, "v1.29"},
                             {kAuditLevelLabel, "restricted"}});
  EXPECT_TRUE(p.errors.empty());
  EXPECT_EQ(p.policy.enforce.toString(), "baseline:v1.29");
  EXPECT_EQ(p.policy.audit.toString(), "restricted:latest");
  // Warn follows a stricter explicit enforce level, with its version.
  EXPECT_EQ(p.policy.warn.toString(), "baseline:v1.29");

  p = policyFromLabels({{kEnforceLevelLabel, "restricted"}, {kWarnLevelLabel, "privileged"}});
  EXPECT_EQ(p.policy.warn.toString(), "privileged:latest");
  p = policyFromLabels({{kEnforceLevelLabel, "baseline"}, {kWarnVersionLabel, "v1.25"}});
  EXPECT_EQ(p.policy.warn.toString(), "baseline:v1.25");
}

TEST(PodSecurityPolicyTest, BadLabelsAreErrorsAndFallBack) {
  auto p = policyFromLabels({{kEnforceLevelLabel, "strict"},
                             {kEnforceVersionLabel, "1.29"},
                             {kWarnLevelLabel, "bogus"},
                             {kAuditVersionLabel, "v2.0"}});
  ASSERT_EQ(p.errors.size(), 4u);
  EXPECT_EQ(p.errors[0].field, "metadata.labels[pod-security.kubernetes.io/enforce]");
  EXPECT_EQ(p.errors[0].message,
            "Invalid value: \"strict\": must be one of privileged, baseline, restricted");
  EXPECT_EQ(p.errors[0].reason, "FieldValueInvalid");
  EXPECT_EQ(p.errors[1].field, "metadata.labels[pod-security.kubernetes.io/enforce-version]");
  EXPECT_EQ(p.errors[1].message, "Invalid value: \"1.29\": must be \"latest\" or \"v1.x\"");
  EXPECT_EQ(p.errors[2].field, "metadata.labels[pod-security.kubernetes.io/audit-version]");
  EXPECT_EQ(p.errors[3].field, "metadata.labels[pod-security.kubernetes.io/warn]");
  // Enforce fails closed, warn and audit open.
  EXPECT_EQ(p.policy.enforce.toString(), "restricted:latest");
  EXPECT_EQ(p.policy.warn.level, Level::kPrivileged);
  EXPECT_EQ(p.policy.audit.level, Level::kPrivileged);
  EXPECT_TRUE(policyFromLabels({{kEnforceVersionLabel, "v1.0"}}).errors.empty());
  EXPECT_FALSE(policyFromLabels({{kEnforceVersionLabel, "v1.01"}}).errors.empty());
}

}  // namespace
}  // namespace minik8s::apiserver::admission::podsecurity
