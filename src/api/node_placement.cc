#include "api/node_placement.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "api/object_meta.h"
#include "common/json_pointer.h"

namespace minik8s::api {

namespace {

const json kEmptyArray = json::array();

const json& arrayOrEmpty(const json& v) { return v.is_array() ? v : kEmptyArray; }

bool hasLabel(const json& obj, const std::string& key) {
  const json& labels = labelsOf(obj);
  return labels.is_object() && labels.contains(key);
}

std::string labelOf(const json& obj, const std::string& key) {
  const json& labels = labelsOf(obj);
  if (!labels.is_object()) return {};
  auto it = labels.find(key);
  return it != labels.end() && it->is_string() ? it->get<std::string>() : std::string();
}

const json& field(const json& obj, const char* a, const char* b) {
  return member(member(obj, a), b);
}

// One nodeSelectorRequirement against a value that may be absent.
bool matchesRequirement(const json& req, bool present, const std::string& value) {
  const std::string op = req.value("operator", "");
  std::vector<std::string> values;
  for (const auto& v : arrayOrEmpty(member(req, "values"))) {
    if (v.is_string()) values.push_back(v.get<std::string>());
  }
  auto in = [&] { return std::find(values.begin(), values.end(), value) != values.end(); };
  auto asInt = [](const std::string& s, int64_t& out) {
    char* end = nullptr;
    out = std::strtoll(s.c_str(), &end, 10);
    return !s.empty() && end && *end == '\0';
  };
  if (op == "In") return present && in();
  if (op == "NotIn") return !present || !in();
  if (op == "Exists") return present;
  if (op == "DoesNotExist") return !present;
  if (op == "Gt" || op == "Lt") {
    int64_t have = 0, want = 0;
    if (!present || values.size() != 1 || !asInt(value, have) || !asInt(values[0], want)) {
      return false;
    }
    return op == "Gt" ? have > want : have < want;
  }
  return false;
}

// A nodeSelectorTerm: its expressions and fields are ANDed; an empty term matches nothing.
bool matchesNodeSelectorTerm(const json& term, const json& node) {
  const json& exprs = arrayOrEmpty(member(term, "matchExpressions"));
  const json& fields = arrayOrEmpty(member(term, "matchFields"));
  if (exprs.empty() && fields.empty()) return false;
  for (const auto& req : exprs) {
    const std::string key = req.value("key", "");
    if (!matchesRequirement(req, hasLabel(node, key), labelOf(node, key))) return false;
  }
  for (const auto& req : fields) {
    if (req.value("key", "") != "metadata.name") return false;
    std::string name = valueAt(node, "/metadata/name", std::string());
    if (!matchesRequirement(req, true, name)) return false;
  }
  return true;
}

}  // namespace

bool toleratesTaint(const json& tolerations, const json& taint) {
  const std::string key = taint.value("key", "");
  const std::string value = taint.value("value", "");
  const std::string effect = taint.value("effect", "");
  for (const auto& t : arrayOrEmpty(tolerations)) {
    if (!t.is_object()) continue;
    const std::string tEffect = t.value("effect", "");
    if (!tEffect.empty() && tEffect != effect) continue;
    const std::string tKey = t.value("key", "");
    const std::string op = t.value("operator", "Equal");
    if (tKey.empty()) {
      if (op == "Exists") return true;  // an empty key with Exists tolerates everything
      continue;
    }
    if (tKey != key) continue;
    if (op == "Exists" || t.value("value", "") == value) return true;
  }
  return false;
}

bool matchesNodeSelectorAndAffinity(const json& pod, const json& node) {
  const json& selector = field(pod, "spec", "nodeSelector");
  if (selector.is_object()) {
    for (const auto& [k, v] : selector.items()) {
      if (!hasLabel(node, k) || !v.is_string() || labelOf(node, k) != v.get<std::string>()) {
        return false;
      }
    }
  }
  const json& affinity = field(pod, "spec", "affinity");
  if (!affinity.is_object()) return true;
  const json required = affinity.value(
      "/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution"_json_pointer, json());
  if (!required.is_object()) return true;
  for (const auto& term : arrayOrEmpty(member(required, "nodeSelectorTerms"))) {
    if (matchesNodeSelectorTerm(term, node)) return true;  // terms are ORed
  }
  return false;
}

}  // namespace minik8s::api
