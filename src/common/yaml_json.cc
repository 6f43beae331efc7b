#include "common/yaml_json.h"

#include <yaml-cpp/yaml.h>

#include <regex>

namespace minik8s {

namespace {

json scalarToJson(const YAML::Node& node) {
  const std::string& s = node.Scalar();
  if (node.Tag() == "!") return s;  // quoted: always a string
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  static const std::regex kInt("^[-+]?[0-9]+$");
  static const std::regex kFloat(R"(^[-+]?([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)([eE][-+]?[0-9]+)?$)");
  if (std::regex_match(s, kInt)) {
    try {
      return std::stoll(s);
    } catch (...) {
      return s;
    }
  }
  if (std::regex_match(s, kFloat)) {
    try {
      return std::stod(s);
    } catch (...) {
      return s;
    }
  }
  return s;
}

json nodeToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Scalar:
      return scalarToJson(node);
    case YAML::NodeType::Sequence: {
      json arr = json::array();
      for (const auto& item : node) arr.push_back(nodeToJson(item));
      return arr;
    }
    case YAML::NodeType::Map: {
      json obj = json::object();
      for (const auto& kv : node) obj[kv.first.as<std::string>()] = nodeToJson(kv.second);
      return obj;
    }
  }
  return nullptr;
}

void emit(YAML::Emitter& out, const json& v) {
  if (v.is_object()) {
    out << YAML::BeginMap;
    for (auto it = v.begin(); it != v.end(); ++it) {
      out << YAML::Key << it.key() << YAML::Value;
      emit(out, it.value());
    }
    out << YAML::EndMap;
  } else if (v.is_array()) {
    out << YAML::BeginSeq;
    for (const auto& e : v) emit(out, e);
    out << YAML::EndSeq;
  } else if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    YAML::Node probe = YAML::Load(s.empty() ? "''" : s);
    bool ambiguous = s.empty() || !probe.IsScalar() || scalarToJson(probe) != json(s);
    if (ambiguous) out << YAML::DoubleQuoted;
    out << s;
  } else if (v.is_null()) {
    out << YAML::Null;
  } else {
    out << v.dump();
  }
}

}  // namespace

Result<std::vector<json>> parseYamlDocuments(const std::string& text) {
  try {
    std::vector<json> docs;
    for (const auto& node : YAML::LoadAll(text)) {
      if (node.IsNull()) continue;
      docs.push_back(nodeToJson(node));
    }
    return docs;
  } catch (const YAML::Exception& e) {
    return Status::BadRequest(std::string("invalid YAML: ") + e.what());
  }
}

Result<json> parseYaml(const std::string& text) {
  auto docs = parseYamlDocuments(text);
  if (!docs.ok()) return docs.status();
  if (docs->size() != 1) return Status::BadRequest("expected exactly one YAML document");
  return std::move(docs->front());
}

std::string toYaml(const json& value) {
  YAML::Emitter out;
  emit(out, value);
  return std::string(out.c_str()) + "\n";
}

}  // namespace minik8s
