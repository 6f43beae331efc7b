#include "api/schema/definitions.h"

#include "api/schema/schema_dsl.h"
#include "api/schema/schema_texts.h"
#include "common/logging.h"

namespace minik8s::api {
namespace {

json buildDefinitions() {
  json defs = json::object();
  // oneOf rather than a type, as Kubernetes publishes them: kubectl explain then prints the
  // definition's name instead of "string".
  defs[kIntOrStringDefinition] = {
      {"oneOf", json::array({{{"type", "integer"}}, {{"type", "string"}}})},
      {"format", "int-or-string"},
      {"x-kubernetes-int-or-string", true},
      {"description", "A number or a string: a port number or name, a count or a percentage."}};
  defs[kQuantityDefinition] = {
      {"oneOf", json::array({{{"type", "string"}}, {{"type", "number"}}})},
      {"description",
       "A fixed-point amount with an optional suffix: 100m (0.1), 1.5, 1Gi (binary), 1G (decimal), "
       "1e3. Numbers are accepted on input."}};
  for (auto text :
       {schema::metaSchemaText(), schema::coreV1SchemaText(), schema::coreV1OtherSchemaText(),
        schema::appsBatchSchemaText(), schema::otherGroupsSchemaText(),
        schema::securityGroupsSchemaText(), schema::storageSchemaText(), schema::quotaSchemaText(),
        schema::networkingSchemaText()}) {
    schema::parseSchemaText(text, defs);
  }
  for (const auto& missing : schema::resolveRefs(defs)) {
    LOG_ERROR("schema: unresolved type {}", missing);  // caught by api_openapi_test
  }
  return defs;
}

}  // namespace

const json& schemaDefinitions() {
  static const json defs = buildDefinitions();
  return defs;
}

std::string definitionName(const std::string& group, const std::string& version,
                           const std::string& kind) {
  if (group.empty()) return "io.k8s.api.core." + version + "." + kind;
  const std::string k8sSuffix = ".k8s.io";
  if (group.find('.') == std::string::npos)
    return "io.k8s.api." + group + "." + version + "." + kind;
  if (group.size() > k8sSuffix.size() &&
      group.compare(group.size() - k8sSuffix.size(), k8sSuffix.size(), k8sSuffix) == 0) {
    return "io.k8s.api." + group.substr(0, group.find('.')) + "." + version + "." + kind;
  }
  // Reverse the domain, as Kubernetes names the schemas of custom resources.
  std::string reversed;
  size_t end = group.size();
  while (true) {
    size_t dot = group.rfind('.', end - 1);
    size_t begin = dot == std::string::npos ? 0 : dot + 1;
    if (!reversed.empty()) reversed += ".";
    reversed += group.substr(begin, end - begin);
    if (dot == std::string::npos) break;
    end = dot;
  }
  return reversed + "." + version + "." + kind;
}

std::string definitionName(const ResourceInfo& resource) {
  return definitionName(resource.group, resource.version, resource.kind);
}

}  // namespace minik8s::api
