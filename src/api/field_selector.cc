#include "api/field_selector.h"

#include <algorithm>

namespace minik8s::api {
namespace {

// Splits on commas that are not escaped with a backslash.
std::vector<std::string_view> splitTerms(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == ',') {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  out.push_back(s.substr(start));
  return out;
}

Result<std::string> unescapeValue(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '\\') {
      if (i + 1 >= s.size() || (s[i + 1] != '\\' && s[i + 1] != ',' && s[i + 1] != '=')) {
        return Status::BadRequest("invalid field selector: invalid escape sequence: " +
                                  std::string(s.substr(i, 2)));
      }
      out += s[++i];
    } else if (c == ',' || c == '=') {
      return Status::BadRequest(std::string("invalid field selector: unescaped character in ") +
                                "value: " + c);
    } else {
      out += c;
    }
  }
  return out;
}

std::string escapeValue(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == ',' || c == '=') out += '\\';
    out += c;
  }
  return out;
}

// The value at a dotted path; "" when absent. Scalars print as Go's fmt would.
std::string stringAt(const json& obj, std::string_view path) {
  const json* cur = &obj;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    std::string key(path.substr(start, dot == std::string_view::npos ? path.npos : dot - start));
    if (!cur->is_object()) return "";
    auto it = cur->find(key);
    if (it == cur->end()) return "";
    cur = &*it;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (cur->is_string()) return cur->get<std::string>();
  if (cur->is_boolean() || cur->is_number()) return cur->dump();
  return "";
}

// The fields each kind can be selected on besides metadata.name and metadata.namespace.
const std::vector<std::string_view>& kindFields(const std::string& kind) {
  static const std::vector<std::pair<std::string_view, std::vector<std::string_view>>> kFields = {
      {"Pod",
       {"spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
        "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName"}},
      {"Event",
       {"involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
        "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
        "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"}},
      {"Secret", {"type"}},
      {"Node", {"spec.unschedulable"}},
      {"Namespace", {"status.phase"}},
      {"ReplicaSet", {"status.replicas"}},
  };
  static const std::vector<std::string_view> kNone;
  for (const auto& [k, fields] : kFields) {
    if (k == kind) return fields;
  }
  return kNone;
}

bool supportedByKind(const std::string& kind, std::string_view field) {
  if (field == "metadata.name" || field == "metadata.namespace") return true;
  const auto& fields = kindFields(kind);
  return std::find(fields.begin(), fields.end(), field) != fields.end();
}

}  // namespace

Result<FieldSelector> FieldSelector::parse(std::string_view text) {
  auto parts = splitTerms(text);
  std::sort(parts.begin(), parts.end());
  FieldSelector selector;
  for (std::string_view part : parts) {
    if (part.empty()) continue;
    size_t opAt = std::string_view::npos;
    size_t opLen = 0;
    bool notEquals = false;
    for (size_t i = 0; i < part.size() && opAt == std::string_view::npos; ++i) {
      if (part[i] == '\\') {
        ++i;
      } else if (part.substr(i).starts_with("!=")) {
        opAt = i, opLen = 2, notEquals = true;
      } else if (part.substr(i).starts_with("==")) {
        opAt = i, opLen = 2;
      } else if (part[i] == '=') {
        opAt = i, opLen = 1;
      }
    }
    if (opAt == std::string_view::npos) {
      return Status::BadRequest("invalid selector: '" + std::string(text) +
                                "'; can't understand '" + std::string(part) + "'");
    }
    auto value = unescapeValue(part.substr(opAt + opLen));
    if (!value.ok()) return value.status();
    selector.terms_.push_back({std::string(part.substr(0, opAt)), *value, notEquals});
  }
  return selector;
}

Result<std::string> FieldSelector::fieldValue(const std::string& kind, const std::string& field,
                                              const json& obj) {
  if (!supportedByKind(kind, field)) {
    return Status::BadRequest("field label not supported: " + field);
  }
  // Non-string fields print their Go zero value when absent, as the Kubernetes field sets do.
  if (kind == "Node" && field == "spec.unschedulable") {
    std::string v = stringAt(obj, field);
    return v.empty() ? "false" : v;
  }
  if (kind == "Pod" && field == "spec.hostNetwork") {
    std::string v = stringAt(obj, field);
    return v.empty() ? "false" : v;
  }
  if (kind == "ReplicaSet" && field == "status.replicas") {
    std::string v = stringAt(obj, field);
    return v.empty() ? "0" : v;
  }
  if (kind == "Pod" && field == "status.podIP") {
    // podIPs[0] is authoritative when present (dual-stack).
    const json* ips =
        obj.contains("status") && obj["status"].is_object() && obj["status"].contains("podIPs")
            ? &obj["status"]["podIPs"]
            : nullptr;
    if (ips != nullptr && ips->is_array() && !ips->empty()) return stringAt((*ips)[0], "ip");
    return stringAt(obj, field);
  }
  if (kind == "Event" && field == "reportingComponent") {
    return stringAt(obj, "reportingComponent");
  }
  if (kind == "Event" && field == "source") {
    std::string v = stringAt(obj, "source.component");
    return v.empty() ? stringAt(obj, "reportingComponent") : v;
  }
  return stringAt(obj, field);
}

Status FieldSelector::validate(const std::string& kind, const FieldSelector& selector) {
  for (const auto& term : selector.terms_) {
    if (!supportedByKind(kind, term.field)) {
      return Status::BadRequest("field label not supported: " + term.field);
    }
  }
  return Status::Ok();
}

Result<bool> FieldSelector::matches(const std::string& kind, const json& obj) const {
  for (const auto& term : terms_) {
    auto actual = fieldValue(kind, term.field, obj);
    if (!actual.ok()) return actual.status();
    if ((*actual == term.value) == term.notEquals) return false;
  }
  return true;
}

FieldSet FieldSelector::fieldSet(const std::string& kind, const json& obj) {
  FieldSet out;
  auto add = [&](std::string_view field) {
    std::string name(field);
    auto value = fieldValue(kind, name, obj);
    out.emplace_back(std::move(name), value.ok() ? std::move(value).value() : std::string());
  };
  add("metadata.name");
  add("metadata.namespace");
  for (std::string_view field : kindFields(kind)) add(field);
  return out;
}

bool FieldSelector::matches(const FieldSet& fields) const {
  for (const auto& term : terms_) {
    auto it = std::find_if(fields.begin(), fields.end(),
                           [&](const auto& f) { return f.first == term.field; });
    if (it == fields.end() || (it->second == term.value) == term.notEquals) return false;
  }
  return true;
}

std::string FieldSelector::toString() const {
  std::string out;
  for (const auto& t : terms_) {
    if (!out.empty()) out += ",";
    out += t.field + (t.notEquals ? "!=" : "=") + escapeValue(t.value);
  }
  return out;
}

const std::string* FieldSelector::requiredValue(std::string_view field) const {
  for (const auto& t : terms_) {
    if (!t.notEquals && t.field == field) return &t.value;
  }
  return nullptr;
}

}  // namespace minik8s::api
