#include "api/csr_rules.h"

#include <algorithm>
#include <set>

#include "api/user_groups.h"
#include "common/base64.h"
#include "common/time_util.h"

namespace minik8s::api::csr {

namespace {

constexpr char kClientAuth[] = "client auth";
constexpr char kServerAuth[] = "server auth";
const std::set<std::string> kOptionalKeyUsages = {"digital signature", "key encipherment"};

const json& specOf(const json& csr) {
  static const json kEmpty = json::object();
  auto it = csr.find("spec");
  return it != csr.end() && it->is_object() ? *it : kEmpty;
}

std::string stringField(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

std::vector<std::string> stringList(const json& obj, const char* key) {
  std::vector<std::string> out;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_array()) return out;
  for (const auto& v : *it)
    if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

bool contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

// Usages are exactly `required` plus any of the optional key usages.
std::optional<std::string> checkUsages(const std::vector<std::string>& usages,
                                       const std::string& required) {
  if (!contains(usages, required)) return "usages lack \"" + required + "\"";
  for (const auto& u : usages)
    if (u != required && !kOptionalKeyUsages.count(u)) return "usage \"" + u + "\" not allowed";
  return std::nullopt;
}

// The subject must be "system:node:<n>" in exactly the group system:nodes; returns <n>.
Result<std::string> nodeSubject(const pki::CertInfo& info) {
  auto node = nodeNameOfCommonName(info.commonName);
  if (!node)
    return Status::Forbidden("subject CN \"" + info.commonName + "\" is not system:node:<name>");
  if (info.organizations != std::vector<std::string>{kNodesGroup})
    return Status::Forbidden("subject O must be exactly [system:nodes]");
  return *node;
}

std::set<std::string> nodeAddresses(const json& node, std::initializer_list<const char*> types) {
  std::set<std::string> out;
  const json status = node.value("status", json::object());
  if (!status.contains("addresses") || !status["addresses"].is_array()) return out;
  for (const auto& a : status["addresses"]) {
    if (!a.is_object()) continue;
    const std::string type = stringField(a, "type");
    for (const char* t : types)
      if (type == t) out.insert(stringField(a, "address"));
  }
  return out;
}

ApprovalDecision pending(std::string reason) { return {false, std::move(reason)}; }

ApprovalDecision decideClient(const json& spec, const pki::CertInfo& info) {
  auto node = nodeSubject(info);
  if (!node.ok()) return pending(node.status().message());
  if (!info.dnsNames.empty() || !info.ipAddresses.empty())
    return pending("a kubelet client certificate carries no SANs");
  if (auto bad = checkUsages(stringList(spec, "usages"), kClientAuth)) return pending(*bad);
  const std::string user = stringField(spec, "username");
  const auto groups = stringList(spec, "groups");
  if (contains(groups, kBootstrappersGroup)) return {true, "bootstrap"};
  if (user == info.commonName && contains(groups, kNodesGroup)) return {true, "renewal"};
  return pending("requester \"" + user + "\" is neither a bootstrapper nor the node itself");
}

ApprovalDecision decideServing(const json& spec, const pki::CertInfo& info,
                               const std::optional<json>& node) {
  auto nodeName = nodeSubject(info);
  if (!nodeName.ok()) return pending(nodeName.status().message());
  if (auto bad = checkUsages(stringList(spec, "usages"), kServerAuth)) return pending(*bad);
  const std::string user = stringField(spec, "username");
  if (user != info.commonName || !contains(stringList(spec, "groups"), kNodesGroup))
    return pending("requester \"" + user + "\" is not the node " + *nodeName);
  if (info.dnsNames.empty() && info.ipAddresses.empty())
    return pending("a serving certificate needs DNS or IP SANs");
  if (!node) return {false, "node " + *nodeName + " does not exist", true};
  std::set<std::string> dns = nodeAddresses(*node, {"Hostname", "InternalDNS", "ExternalDNS"});
  dns.insert(*nodeName);
  const std::set<std::string> ips = nodeAddresses(*node, {"InternalIP", "ExternalIP"});
  for (const auto& d : info.dnsNames)
    if (!dns.count(d))
      return {false, "DNS SAN " + d + " is not an address of node " + *nodeName, true};
  for (const auto& ip : info.ipAddresses)
    if (!ips.count(ip))
      return {false, "IP SAN " + ip + " is not an address of node " + *nodeName, true};
  return {true, "serving"};
}

}  // namespace

bool hasCondition(const json& csr, const std::string& type) {
  const json status = csr.value("status", json::object());
  auto it = status.find("conditions");
  if (it == status.end() || !it->is_array()) return false;
  for (const auto& c : *it)
    if (c.is_object() && stringField(c, "type") == type && stringField(c, "status") != "False")
      return true;
  return false;
}

bool isIssued(const json& csr) {
  const json status = csr.value("status", json::object());
  return !stringField(status, "certificate").empty();
}

Result<pki::CertInfo> parseCsrRequest(const json& csr) {
  const std::string encoded = stringField(specOf(csr), "request");
  if (encoded.empty()) return Status::BadRequest("spec.request is empty");
  auto pem = base64::decode(encoded);
  if (!pem.ok()) return Status::BadRequest("spec.request is not base64");
  return pki::parseCsr(*pem);
}

std::optional<std::string> nodeNameOfCommonName(const std::string& commonName) {
  const std::string prefix = kNodeUserPrefix;
  if (commonName.rfind(prefix, 0) != 0 || commonName.size() == prefix.size()) return std::nullopt;
  return commonName.substr(prefix.size());
}

ApprovalDecision decideApproval(const json& csr, const std::optional<json>& node) {
  if (hasCondition(csr, "Approved") || hasCondition(csr, "Denied") || hasCondition(csr, "Failed") ||
      isIssued(csr))
    return pending("already decided");
  const json& spec = specOf(csr);
  const std::string signer = stringField(spec, "signerName");
  if (signer != kKubeletClientSigner && signer != kKubeletServingSigner)
    return pending("signer " + signer + " is approved by an admin");
  auto info = parseCsrRequest(csr);
  if (!info.ok()) return pending(info.status().message());
  return signer == kKubeletClientSigner ? decideClient(spec, *info)
                                        : decideServing(spec, *info, node);
}

json withApprovedCondition(json csr, const std::string& message,
                           std::chrono::system_clock::time_point now) {
  const std::string t = formatRfc3339(now);
  json& status = csr["status"];
  if (!status.is_object()) status = json::object();
  if (!status.contains("conditions") || !status["conditions"].is_array())
    status["conditions"] = json::array();
  status["conditions"].push_back({{"type", "Approved"},
                                  {"status", "True"},
                                  {"reason", "AutoApproved"},
                                  {"message", message},
                                  {"lastUpdateTime", t},
                                  {"lastTransitionTime", t}});
  return csr;
}

bool isOurSigner(const std::string& signerName) {
  return signerName == kKubeletClientSigner || signerName == kKubeletServingSigner ||
         signerName == kApiServerClientSigner;
}

Result<std::string> signRequest(const pki::KeyAndCert& ca, const json& csr,
                                std::chrono::seconds defaultValidity,
                                std::chrono::seconds maxValidity) {
  const json& spec = specOf(csr);
  const std::string signer = stringField(spec, "signerName");
  if (!isOurSigner(signer)) return Status::BadRequest("signer " + signer + " is not ours");
  const auto usages = stringList(spec, "usages");
  const std::string required = signer == kKubeletServingSigner ? kServerAuth : kClientAuth;
  if (auto bad = checkUsages(usages, required))
    return Status::BadRequest("signer " + signer + ": " + *bad);
  const std::string encoded = stringField(spec, "request");
  auto pem = base64::decode(encoded);
  if (!pem.ok()) return Status::BadRequest("spec.request is not base64");
  if (auto info = pki::parseCsr(*pem); !info.ok()) return info.status();

  std::chrono::seconds validity = defaultValidity;
  auto exp = spec.find("expirationSeconds");
  if (exp != spec.end() && exp->is_number_integer())
    validity = std::max(std::chrono::seconds(exp->get<int64_t>()), std::chrono::seconds(600));
  validity = std::min(validity, maxValidity);
  pki::CertSpec usage;
  usage.clientAuth = required == kClientAuth;
  usage.serverAuth = required == kServerAuth;
  usage.validity = validity;
  return pki::signCsr(ca, *pem, usage);
}

}  // namespace minik8s::api::csr
