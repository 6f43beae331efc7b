// buildPolicyRules: NetworkPolicies + Pods + Namespaces -> the exact iptables-restore document of
// one node (the Kubernetes documentation's examples, named ports, ranges, DNS to the node-hosted
// kube-dns endpoints, what is not selected, stale chains).
#include <gtest/gtest.h>

#include "netpol/policy_rules.h"
#include "proxy/proxy_rules.h"

namespace minik8s::netpol {
namespace {

json pod(const std::string& ns, const std::string& name, const std::string& node,
         const std::string& ip, json labels, json ports = json::array()) {
  json p = {{"metadata", {{"namespace", ns}, {"name", name}, {"labels", labels}}},
            {"spec", {{"nodeName", node}, {"containers", {{{"name", "c"}, {"image", "x"}}}}}},
            {"status", {{"phase", "Running"}, {"podIP", ip}}}};
  if (!ports.empty()) p["spec"]["containers"][0]["ports"] = ports;
  return p;
}

json ns(const std::string& name, json labels = json::object()) {
  labels["kubernetes.io/metadata.name"] = name;
  return {{"metadata", {{"name", name}, {"labels", labels}}}};
}

json policy(const std::string& ns, const std::string& name, const std::string& spec) {
  return {{"metadata", {{"namespace", ns}, {"name", name}}}, {"spec", json::parse(spec)}};
}

std::string ingressChain(const std::string& key) {
  return kIngressChainPrefix + proxy::hash16(key);
}
std::string egressChain(const std::string& key) { return kEgressChainPrefix + proxy::hash16(key); }

// The lines of `doc` that append to `chain`, without the "-A chain" prefix.
std::vector<std::string> rulesOf(const std::string& doc, const std::string& chain) {
  std::vector<std::string> out;
  std::string prefix = "-A " + chain + " ";
  size_t pos = 0;
  while (pos < doc.size()) {
    size_t end = doc.find('\n', pos);
    std::string line = doc.substr(pos, end - pos);
    if (line.starts_with(prefix)) out.push_back(line.substr(prefix.size()));
    pos = end + 1;
  }
  return out;
}

using Lines = std::vector<std::string>;

TEST(PolicyRulesTest, NoPoliciesOnlyTheMainChainAndStaleChainsGo) {
  PolicyInput in{"n1", {}, {pod("a", "web", "n1", "10.244.1.5", {{"app", "web"}})}, {ns("a")}, {}};
  PolicyRules r = buildPolicyRules(in, {"MINIK8S-NETPOL", "MINIK8S-NPI-OLD"});
  EXPECT_EQ(r.restoreText,
            "*filter\n"
            ":MINIK8S-NETPOL - [0:0]\n"
            ":MINIK8S-NPI-OLD - [0:0]\n"
            "-A MINIK8S-NETPOL -m conntrack --ctstate RELATED,ESTABLISHED -j RETURN\n"
            "-A MINIK8S-NETPOL -m addrtype --src-type LOCAL -j RETURN\n"
            "-X MINIK8S-NPI-OLD\n"
            "COMMIT\n");
  EXPECT_EQ(r.chains, (std::set<std::string>{"MINIK8S-NETPOL"}));
  EXPECT_EQ(r.ingressPods + r.egressPods, 0);
}

// https://kubernetes.io/docs/concepts/services-networking/network-policies/ "test-network-policy".
TEST(PolicyRulesTest, TheDocumentationExampleExactly) {
  PolicyInput in;
  in.nodeName = "n1";
  in.namespaces = {ns("default"), ns("myproject", {{"project", "myproject"}})};
  in.pods = {pod("default", "db", "n1", "10.244.1.10", {{"role", "db"}}),
             pod("default", "cache", "n1", "10.244.1.11", {{"role", "cache"}}),
             pod("default", "frontend", "n2", "10.244.2.20", {{"role", "frontend"}}),
             pod("myproject", "client", "n2", "10.244.2.30", {{"app", "x"}}),
             pod("other", "frontend", "n2", "10.244.2.40", {{"role", "frontend"}})};
  in.policies = {policy("default", "test-network-policy", R"({
    "podSelector": {"matchLabels": {"role": "db"}},
    "policyTypes": ["Ingress", "Egress"],
    "ingress": [{"from": [{"ipBlock": {"cidr": "172.17.0.0/16", "except": ["172.17.1.0/24"]}},
                          {"namespaceSelector": {"matchLabels": {"project": "myproject"}}},
                          {"podSelector": {"matchLabels": {"role": "frontend"}}}],
                 "ports": [{"protocol": "TCP", "port": 6379}]}],
    "egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/24"}}],
                "ports": [{"protocol": "TCP", "port": 5978}]}]})")};
  PolicyRules r = buildPolicyRules(in, {});
  const std::string npi = ingressChain("default/db"), npe = egressChain("default/db");
  const std::string npx =
      kExceptChainPrefix + proxy::hash16("-s 172.17.0.0/16 except 172.17.1.0/24");
  EXPECT_EQ(
      r.restoreText,
      "*filter\n"
      ":MINIK8S-NETPOL - [0:0]\n"
      ":" +
          npe +
          " - [0:0]\n"
          ":" +
          npi +
          " - [0:0]\n"
          ":" +
          npx +
          " - [0:0]\n"
          "-A MINIK8S-NETPOL -m conntrack --ctstate RELATED,ESTABLISHED -j RETURN\n"
          "-A MINIK8S-NETPOL -m addrtype --src-type LOCAL -j RETURN\n"
          "-A MINIK8S-NETPOL -s 10.244.1.10/32 -m comment --comment \"default/db egress\" -j " +
          npe +
          "\n"
          "-A MINIK8S-NETPOL -d 10.244.1.10/32 -m comment --comment \"default/db ingress\" -j " +
          npi +
          "\n"
          "-A " +
          npe +
          " -d 10.0.0.0/24 -p tcp -m tcp --dport 5978 -j RETURN\n"
          "-A " +
          npe +
          " -j REJECT\n"
          "-A " +
          npi +
          " -j MARK --set-xmark 0x0/0x10000\n"
          "-A " +
          npi + " -s 172.17.0.0/16 -p tcp -m tcp --dport 6379 -j " + npx +
          "\n"
          "-A " +
          npi +
          " -m mark --mark 0x10000/0x10000 -j RETURN\n"
          "-A " +
          npi +
          " -s 10.244.2.30/32 -p tcp -m tcp --dport 6379 -j RETURN\n"
          "-A " +
          npi +
          " -s 10.244.2.20/32 -p tcp -m tcp --dport 6379 -j RETURN\n"
          "-A " +
          npi +
          " -j REJECT\n"
          "-A " +
          npx +
          " -s 172.17.1.0/24 -j RETURN\n"
          "-A " +
          npx +
          " -j MARK --set-xmark 0x10000/0x10000\n"
          "COMMIT\n");
  EXPECT_EQ(r.ingressPods, 1);
  EXPECT_EQ(r.egressPods, 1);
  EXPECT_EQ(r.rules, 14);
  // The same cluster seen from n2: none of its pods is selected.
  in.nodeName = "n2";
  EXPECT_EQ(buildPolicyRules(in, {}).chains, (std::set<std::string>{"MINIK8S-NETPOL"}));
}

TEST(PolicyRulesTest, NamedPortsRangesAndProtocols) {
  PolicyInput in;
  in.nodeName = "n1";
  in.namespaces = {ns("a")};
  in.pods = {
      pod("a", "web", "n1", "10.244.1.5", {{"app", "web"}},
          {{{"name", "http"}, {"containerPort", 8080}},
           {{"name", "dns"}, {"containerPort", 5353}, {"protocol", "UDP"}}}),
      pod("a", "api", "n2", "10.244.2.6", {{"app", "api"}},
          {{{"name", "metrics"}, {"containerPort", 9100}}}),
      pod("a", "api-old", "n2", "10.244.2.7", {{"app", "api"}}),
  };
  in.policies = {
      policy("a", "web-in", R"({"podSelector": {"matchLabels": {"app": "web"}},
        "ingress": [{"ports": [{"port": "http"}, {"port": "dns", "protocol": "UDP"},
                               {"port": "dns"}, {"port": "nosuch"},
                               {"port": 30000, "endPort": 30010, "protocol": "SCTP"}]}]})"),
      policy("a", "web-out", R"({"podSelector": {"matchLabels": {"app": "web"}},
        "policyTypes": ["Egress"],
        "egress": [{"to": [{"podSelector": {"matchLabels": {"app": "api"}}}],
                    "ports": [{"port": "metrics"}]},
                   {"ports": [{"port": 53, "protocol": "UDP"}, {"port": "metrics"}]}]})"),
  };
  PolicyRules r = buildPolicyRules(in, {});
  // Ingress: named ports of the selected pod itself; "dns" over TCP and "nosuch" match nothing.
  EXPECT_EQ(rulesOf(r.restoreText, ingressChain("a/web")),
            (Lines{"-p tcp -m tcp --dport 8080 -j RETURN", "-p udp -m udp --dport 5353 -j RETURN",
                   "-p sctp -m sctp --dport 30000:30010 -j RETURN", "-j REJECT"}));
  // Egress: named ports of each destination pod (api-old has none); a rule without peers allows
  // its numbered ports anywhere and its named ports on every pod that has them.
  EXPECT_EQ(rulesOf(r.restoreText, egressChain("a/web")),
            (Lines{"-d 10.244.2.6/32 -p tcp -m tcp --dport 9100 -j RETURN",
                   "-p udp -m udp --dport 53 -j RETURN", "-j REJECT"}));
}

TEST(PolicyRulesTest, DenyAllAndNamespaceAndPodSelectorPeers) {
  PolicyInput in;
  in.nodeName = "n1";
  in.namespaces = {ns("a"), ns("b", {{"team", "blue"}}), ns("c", {{"team", "blue"}})};
  json noIP = pod("a", "pending", "n1", "", {});
  json host = pod("a", "host", "n1", "172.29.138.11", {});
  host["spec"]["hostNetwork"] = true;
  json done = pod("a", "done", "n1", "10.244.1.9", {});
  done["status"]["phase"] = "Succeeded";
  in.pods = {pod("a", "web", "n1", "10.244.1.5", {{"app", "web"}}),
             pod("a", "remote", "n2", "10.244.2.5", {{"app", "web"}}),
             pod("b", "x", "n2", "10.244.2.10", {{"role", "client"}}),
             pod("b", "y", "n2", "10.244.2.11", {{"role", "server"}}),
             pod("c", "z", "n1", "10.244.1.12", {{"role", "client"}}),
             noIP,
             host,
             done};
  in.policies = {
      policy("a", "default-deny-ingress", R"({"podSelector": {}, "policyTypes": ["Ingress"]})"),
      policy("a", "from-blue-clients", R"({"podSelector": {"matchLabels": {"app": "web"}},
        "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"team": "blue"}},
                               "podSelector": {"matchLabels": {"role": "client"}}},
                              {"namespaceSelector": {"matchLabels":
                                  {"kubernetes.io/metadata.name": "c"}}}]}]})"),
  };
  PolicyRules r = buildPolicyRules(in, {});
  // Only the local pods with an IP, not on the host network, not finished, are isolated.
  EXPECT_EQ(r.ingressPods, 1);
  EXPECT_EQ(r.egressPods, 0);
  EXPECT_EQ(rulesOf(r.restoreText, ingressChain("a/web")),
            (Lines{"-s 10.244.2.10/32 -j RETURN", "-s 10.244.1.12/32 -j RETURN", "-j REJECT"}));
  EXPECT_EQ(rulesOf(r.restoreText, "MINIK8S-NETPOL").size(), 3u);
}

TEST(PolicyRulesTest, DnsEgressReachesTheNodeHostedKubeDnsEndpoints) {
  PolicyInput in;
  in.nodeName = "n1";
  in.namespaces = {ns("a"), ns("kube-system")};
  in.pods = {pod("a", "web", "n1", "10.244.1.5", {{"app", "web"}})};
  for (auto [node, ip] : {std::pair{"n1", "172.29.138.11"}, std::pair{"n2", "172.29.138.12"}}) {
    in.hostEndpoints.push_back({{"metadata",
                                 {{"namespace", "kube-system"},
                                  {"name", std::string("kube-dns-") + node},
                                  {"labels",
                                   {{"kubernetes.io/service-name", "kube-dns"},
                                    {"endpointslice.kubernetes.io/managed-by", "minik8s-agent"}}}}},
                                {"endpoints", {{{"addresses", {ip}}, {"nodeName", node}}}},
                                {"ports", {{{"name", "dns"}, {"port", 53}, {"protocol", "UDP"}}}}});
  }
  // Default policyTypes of a policy written without them: Ingress, and Egress as it has egress
  // rules (the agent applies Kubernetes' defaulting to objects that missed it).
  in.policies = {policy("a", "dns-only", R"({"podSelector": {},
    "egress": [{"to": [{"namespaceSelector":
                           {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
                        "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}],
                "ports": [{"port": 53, "protocol": "UDP"}, {"port": "dns", "protocol": "UDP"}]}]})")};
  PolicyRules r = buildPolicyRules(in, {});
  EXPECT_EQ(r.ingressPods, 1);
  EXPECT_EQ(rulesOf(r.restoreText, ingressChain("a/web")), (Lines{"-j REJECT"}));
  EXPECT_EQ(rulesOf(r.restoreText, egressChain("a/web")),
            (Lines{"-d 172.29.138.11/32 -p udp -m udp --dport 53 -j RETURN",
                   "-d 172.29.138.12/32 -p udp -m udp --dport 53 -j RETURN", "-j REJECT"}));
}

TEST(PolicyRulesTest, EgressIpBlockExceptAndChainsOfASave) {
  PolicyInput in;
  in.nodeName = "n1";
  in.namespaces = {ns("a")};
  in.pods = {pod("a", "web", "n1", "10.244.1.5", {}), pod("a", "web2", "n1", "10.244.1.6", {})};
  in.policies = {policy("a", "out", R"({"podSelector": {}, "policyTypes": ["Egress"],
    "egress": [{"to": [{"ipBlock": {"cidr": "10.244.0.0/16",
                                    "except": ["10.244.2.0/24", "10.244.3.0/24"]}}]}]})")};
  PolicyRules r = buildPolicyRules(in, {});
  const std::string npx =
      kExceptChainPrefix + proxy::hash16("-d 10.244.0.0/16 except 10.244.2.0/24,10.244.3.0/24");
  EXPECT_EQ(rulesOf(r.restoreText, egressChain("a/web")),
            (Lines{"-j MARK --set-xmark 0x0/0x10000", "-d 10.244.0.0/16 -j " + npx,
                   "-m mark --mark 0x10000/0x10000 -j RETURN", "-j REJECT"}));
  // One except chain, shared by both pods.
  EXPECT_EQ(rulesOf(r.restoreText, npx),
            (Lines{"-d 10.244.2.0/24 -j RETURN", "-d 10.244.3.0/24 -j RETURN",
                   "-j MARK --set-xmark 0x10000/0x10000"}));
  EXPECT_EQ(r.chains.size(), 4u);
  std::string save = "*filter\n:INPUT ACCEPT [0:0]\n:KUBE-SERVICES - [0:0]\n" + r.restoreText;
  EXPECT_EQ(policyChains(save), r.chains);
}

}  // namespace
}  // namespace minik8s::netpol
