// networking.k8s.io/v1 NetworkPolicy: scheme entry, defaults (policyTypes, protocol), validation
// worded as Kubernetes' and kubectl's table row.
#include <gtest/gtest.h>

#include "api/defaults.h"
#include "api/scheme.h"
#include "api/table.h"
#include "api/validation.h"
#include "test_times.h"
#include "validation_messages.h"

namespace minik8s::api {
namespace {

using testing::kStartedAt;

const ResourceInfo& netpol() {
  return *Scheme::builtin().byResource("networking.k8s.io", "v1", "networkpolicies");
}

using testing::messages;

json policy(json spec) {
  return {{"apiVersion", "networking.k8s.io/v1"},
          {"kind", "NetworkPolicy"},
          {"metadata", {{"name", "test-network-policy"}, {"namespace", "default"}}},
          {"spec", std::move(spec)}};
}

TEST(NetworkPolicyKindTest, SchemeNamesAsKubernetes) {
  EXPECT_EQ(netpol().kind, "NetworkPolicy");
  EXPECT_TRUE(netpol().namespaced);
  EXPECT_EQ(netpol().shortNames, (std::vector<std::string>{"netpol"}));
}

TEST(NetworkPolicyKindTest, PolicyTypesAndProtocolDefaultAsKubernetes) {
  json ingressOnly = policy(
      {{"podSelector", json::object()}, {"ingress", json::array({{{"ports", {{{"port", 80}}}}}})}});
  applyDefaults(netpol(), ingressOnly);
  EXPECT_EQ(ingressOnly["spec"]["policyTypes"], json::array({"Ingress"}));
  EXPECT_EQ(ingressOnly["spec"]["ingress"][0]["ports"][0]["protocol"], "TCP");

  json both =
      policy({{"podSelector", json::object()},
              {"egress", json::array({{{"ports", {{{"port", 53}, {"protocol", "UDP"}}}}}})}});
  applyDefaults(netpol(), both);
  EXPECT_EQ(both["spec"]["policyTypes"], json::array({"Ingress", "Egress"}));
  EXPECT_EQ(both["spec"]["egress"][0]["ports"][0]["protocol"], "UDP");

  json denyEgress = policy({{"podSelector", json::object()}, {"policyTypes", {"Egress"}}});
  applyDefaults(netpol(), denyEgress);
  EXPECT_EQ(denyEgress["spec"]["policyTypes"], json::array({"Egress"}));
}

TEST(NetworkPolicyKindTest, TheDocumentationExampleIsValid) {
  json p = policy(json::parse(R"({
    "podSelector": {"matchLabels": {"role": "db"}},
    "policyTypes": ["Ingress", "Egress"],
    "ingress": [{"from": [{"ipBlock": {"cidr": "172.17.0.0/16", "except": ["172.17.1.0/24"]}},
                          {"namespaceSelector": {"matchLabels": {"project": "myproject"}}},
                          {"podSelector": {"matchLabels": {"role": "frontend"}}}],
                 "ports": [{"protocol": "TCP", "port": 6379}]}],
    "egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/24"}}],
                "ports": [{"protocol": "TCP", "port": 5978}, {"port": 32000, "endPort": 32768},
                          {"port": "http"}]}]})"));
  applyDefaults(netpol(), p);
  EXPECT_EQ(messages(validate(netpol(), p, nullptr)), "");
}

TEST(NetworkPolicyKindTest, ValidationErrorsAsKubernetes) {
  json p = policy(json::parse(R"({
    "podSelector": {"matchExpressions": [{"key": "app", "operator": "In"}]},
    "policyTypes": ["Ingress", "Sideways"],
    "ingress": [{"from": [{},
                          {"podSelector": {}, "ipBlock": {"cidr": "10.0.0.0/8"}},
                          {"ipBlock": {"cidr": "10.0.0.0/33"}},
                          {"ipBlock": {"cidr": "10.0.0.0/16",
                                       "except": ["10.1.0.0/24", "10.0.0.0/16", "x"]}}],
                 "ports": [{"protocol": "ICMP", "port": 0},
                           {"port": 90, "endPort": 80},
                           {"port": "http", "endPort": 81},
                           {"endPort": 82},
                           {"port": "no_such_name"}]}]})"));
  EXPECT_EQ(
      messages(validate(netpol(), p, nullptr)),
      "spec.podSelector.matchExpressions[0].values: Required value: must be specified when "
      "`operator` is 'In' or 'NotIn'\n"
      "spec.ingress[0].ports[0].protocol: Unsupported value: \"ICMP\": supported values: "
      "\"TCP\", \"UDP\", \"SCTP\"\n"
      "spec.ingress[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive\n"
      "spec.ingress[0].ports[1].endPort: Invalid value: 90: must be greater than or equal to "
      "`port`\n"
      "spec.ingress[0].ports[2].endPort: Invalid value: 81: may not be specified when `port` is "
      "non-numeric\n"
      "spec.ingress[0].ports[3].endPort: Invalid value: 82: may not be specified when `port` is "
      "not specified\n"
      "spec.ingress[0].ports[4].port: Invalid value: \"no_such_name\": must contain only "
      "alphanumeric characters (a-z, 0-9), and hyphens (-)\n"
      "spec.ingress[0].from[0]: Required value: must specify a peer\n"
      "spec.ingress[0].from[1]: Forbidden: may not specify both ipBlock and another peer\n"
      "spec.ingress[0].from[2].ipBlock.cidr: Invalid value: \"10.0.0.0/33\": must be a valid CIDR "
      "value, (e.g. 10.9.8.0/24 or 2001:db8::/64)\n"
      "spec.ingress[0].from[3].ipBlock.except[0]: Invalid value: \"10.1.0.0/24\": must be a "
      "strict subset of `cidr`\n"
      "spec.ingress[0].from[3].ipBlock.except[1]: Invalid value: \"10.0.0.0/16\": must be a "
      "strict subset of `cidr`\n"
      "spec.ingress[0].from[3].ipBlock.except[2]: Invalid value: \"x\": must be a valid CIDR "
      "value, (e.g. 10.9.8.0/24 or 2001:db8::/64)\n"
      "spec.policyTypes[1]: Unsupported value: \"Sideways\": supported values: \"Ingress\", "
      "\"Egress\"\n");
}

TEST(NetworkPolicyKindTest, TableRowAsKubectl) {
  std::vector<std::string> columns;
  for (const auto& c : tableColumns("NetworkPolicy")) columns.push_back(c.name);
  EXPECT_EQ(columns, (std::vector<std::string>{"Name", "Pod-Selector", "Age"}));
  json p = policy({{"podSelector", {{"matchLabels", {{"role", "db"}}}}}});
  EXPECT_EQ(tableCells("NetworkPolicy", p, kStartedAt)[1], "role=db");
  json all = policy({{"podSelector", json::object()}});
  EXPECT_EQ(tableCells("NetworkPolicy", all, kStartedAt)[1], "<none>");
}

}  // namespace
}  // namespace minik8s::api
