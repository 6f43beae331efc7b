#include "api/openapi.h"

#include <openssl/evp.h>

#include <set>

#include "api/custom_resource.h"
#include "api/schema/definitions.h"

namespace minik8s::api {
namespace {

// The index key of a group/version: "api/v1" for core, "apis/<group>/<version>" otherwise.
std::string groupVersionPath(const std::string& group, const std::string& version) {
  return group.empty() ? "api/" + version : "apis/" + group + "/" + version;
}

// Not named `ref`: std::ref would win overload resolution for non-const strings via ADL.
json schemaRef(const std::string& definition) {
  return {{"$ref", std::string(kSchemaRefPrefix) + definition}};
}

json jsonContent(const json& schema) { return {{"application/json", {{"schema", schema}}}}; }

json queryParam(const std::string& name, const std::string& type, const std::string& text) {
  return {{"name", name},
          {"in", "query"},
          {"description", text},
          {"schema", {{"type", type}, {"uniqueItems", true}}}};
}

json pathParam(const std::string& name, const std::string& text) {
  return {{"name", name},
          {"in", "path"},
          {"required", true},
          {"description", text},
          {"schema", {{"type", "string"}, {"uniqueItems", true}}}};
}

json writeParams(bool withForce) {
  json p = json::array(
      {queryParam("dryRun", "string", "All: validate and process the request without persisting."),
       queryParam("fieldManager", "string", "Name of the actor making the change."),
       queryParam(
           "fieldValidation", "string",
           "Ignore, Warn (default) or Strict: what to do with unknown or duplicate fields.")});
  if (withForce) {
    p.push_back(queryParam("force", "boolean", "Apply: take over fields owned by other managers."));
  }
  return p;
}

json listParams(bool watchable) {
  json p = json::array(
      {queryParam("labelSelector", "string", "Restrict the list by labels."),
       queryParam("fieldSelector", "string", "Restrict the list by fields."),
       queryParam("limit", "integer", "Maximum number of items to return."),
       queryParam("continue", "string", "Token of the next page."),
       queryParam("resourceVersion", "string", "Version constraint of the list or watch start."),
       queryParam("resourceVersionMatch", "string", "How resourceVersion is applied."),
       queryParam("timeoutSeconds", "integer", "Timeout of the list or watch call.")});
  if (watchable) {
    p.push_back(queryParam("watch", "boolean", "Stream changes after the list."));
    p.push_back(queryParam("allowWatchBookmarks", "boolean", "Ask for BOOKMARK events."));
    p.push_back(
        queryParam("sendInitialEvents", "boolean", "Start the watch with the current state."));
  }
  return p;
}

json deleteParams() {
  return json::array(
      {queryParam("dryRun", "string", "All: validate without persisting."),
       queryParam("gracePeriodSeconds", "integer", "Seconds before the object is deleted."),
       queryParam("propagationPolicy", "string", "Orphan, Background or Foreground."),
       queryParam("orphanDependents", "boolean", "Deprecated: use propagationPolicy.")});
}

bool hasVerb(const std::vector<std::string>& verbs, const std::string& verb) {
  for (const auto& v : verbs) {
    if (v == verb) return true;
  }
  return false;
}

std::string upperFirst(std::string s) {
  if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  return s;
}

// "AppsV1", "CoreV1", "CoordinationV1": the part of Kubernetes' operation ids naming the API.
std::string apiId(const std::string& group, const std::string& version) {
  std::string g = group.empty() ? "core" : group.substr(0, group.find('.'));
  return upperFirst(g) + upperFirst(version);
}

json gvkOf(const std::string& group, const std::string& version, const std::string& kind) {
  return {{"group", group}, {"version", version}, {"kind", kind}};
}

// The schema of a custom resource as Kubernetes publishes it: the CRD's structural schema with
// apiVersion, kind and metadata (a reference to ObjectMeta) declared, and its GVK.
json customDefinition(const ResourceInfo& r) {
  json def = r.custom->schema();
  if (!def.is_object()) def = json::object();
  def["type"] = "object";
  json& props = def["properties"];
  if (!props.is_object()) props = json::object();
  props["apiVersion"] = {{"type", "string"},
                         {"description",
                          "APIVersion defines the versioned schema of this representation of an "
                          "object."}};
  props["kind"] = {{"type", "string"},
                   {"description",
                    "Kind is a string value representing the REST resource this "
                    "object represents."}};
  props["metadata"] = {{"allOf", json::array({schemaRef("io.k8s.apimachinery.pkg.apis.meta.v1."
                                                        "ObjectMeta")})},
                       {"description", "Standard object's metadata."}};
  def["x-kubernetes-group-version-kind"] = json::array({gvkOf(r.group, r.version, r.kind)});
  return def;
}

json customListDefinition(const ResourceInfo& r) {
  return {
      {"type", "object"},
      {"description", r.listKind + " is a list of " + r.kind},
      {"required", json::array({"items"})},
      {"properties",
       {{"apiVersion", {{"type", "string"}}},
        {"kind", {{"type", "string"}}},
        {"items", {{"type", "array"}, {"items", schemaRef(definitionName(r))}}},
        {"metadata",
         {{"allOf", json::array({schemaRef("io.k8s.apimachinery.pkg.apis.meta.v1."
                                           "ListMeta")})}}}}},
      {"x-kubernetes-group-version-kind", json::array({gvkOf(r.group, r.version, r.listKind)})}};
}

struct DocBuilder {
  json paths = json::object();
  std::set<std::string> roots;  // definitions referred to by the paths
  json extra = json::object();  // definitions of custom resources, by name

  json responses(const std::string& definition, std::initializer_list<const char*> codes) {
    json r = json::object();
    for (const char* code : codes) {
      std::string c = code;
      std::string text = c == "200" ? "OK" : c == "201" ? "Created" : "Accepted";
      r[c] = {{"description", text}, {"content", jsonContent(schemaRef(definition))}};
    }
    r["401"] = {{"description", "Unauthorized"}};
    roots.insert(definition);
    return r;
  }

  json operation(const std::string& id, const std::string& action, const json& gvk,
                 const std::string& description, json params) {
    return {{"operationId", id},
            {"description", description},
            {"tags", json::array({gvk["group"].get<std::string>().empty()
                                      ? std::string("core_v1")
                                      : gvk["group"].get<std::string>() + "_" +
                                            gvk["version"].get<std::string>()})},
            {"parameters", std::move(params)},
            {"x-kubernetes-action", action},
            {"x-kubernetes-group-version-kind", gvk}};
  }

  json patchOperation(const std::string& id, const json& gvk, const std::string& definition,
                      const std::string& what) {
    // No requestBody on purpose: see the header.
    json op = operation(id, "patch", gvk, "partially update the specified " + what,
                        writeParams(/*withForce=*/true));
    op["responses"] = responses(definition, {"200", "201"});
    return op;
  }

  void addResource(const ResourceInfo& r) {
    if (r.custom) {
      extra[definitionName(r)] = customDefinition(r);
      extra[definitionName(r.group, r.version, r.listKind)] = customListDefinition(r);
    }
    const std::string base = "/" + groupVersionPath(r.group, r.version);
    const std::string collection =
        base + (r.namespaced ? "/namespaces/{namespace}/" : "/") + r.plural;
    const std::string item = collection + "/{name}";
    const std::string def = definitionName(r);
    const std::string listDef = definitionName(r.group, r.version, r.listKind);
    const json gvk = gvkOf(r.group, r.version, r.kind);
    const std::string scope = r.namespaced ? "Namespaced" : "";
    const std::string id = apiId(r.group, r.version);
    const json nsParam = pathParam("namespace", "object name and auth scope, such as for teams");
    const json nameParam = pathParam("name", "name of the " + r.kind);

    json coll = json::object();
    if (r.namespaced) coll["parameters"] = json::array({nsParam});
    if (hasVerb(r.verbs, "list")) {
      json op = operation("list" + id + scope + r.kind, "list", gvk,
                          "list or watch objects of kind " + r.kind,
                          listParams(hasVerb(r.verbs, "watch")));
      op["responses"] = responses(listDef, {"200"});
      coll["get"] = op;
    }
    if (hasVerb(r.verbs, "create")) {
      json op = operation("create" + id + scope + r.kind, "post", gvk, "create a " + r.kind,
                          writeParams(false));
      op["requestBody"] = {{"required", true}, {"content", jsonContent(schemaRef(def))}};
      op["responses"] = responses(def, {"200", "201", "202"});
      coll["post"] = op;
    }
    if (hasVerb(r.verbs, "deletecollection")) {
      json op = operation("deletecollection" + id + scope + r.kind, "deletecollection", gvk,
                          "delete collection of " + r.kind, listParams(false));
      for (const auto& p : deleteParams()) op["parameters"].push_back(p);
      op["responses"] = responses("io.k8s.apimachinery.pkg.apis.meta.v1.Status", {"200"});
      coll["delete"] = op;
    }
    if (coll.size() > (r.namespaced ? 1u : 0u)) paths[collection] = coll;

    if (r.namespaced && hasVerb(r.verbs, "list")) {
      json op = operation("list" + id + r.kind + "ForAllNamespaces", "list", gvk,
                          "list or watch objects of kind " + r.kind + " in all namespaces",
                          listParams(hasVerb(r.verbs, "watch")));
      op["responses"] = responses(listDef, {"200"});
      paths[base + "/" + r.plural] = {{"get", op}};
    }

    json itemPath = json::object();
    if (hasVerb(r.verbs, "get")) {
      json op = operation("read" + id + scope + r.kind, "get", gvk, "read the specified " + r.kind,
                          json::array());
      op["responses"] = responses(def, {"200"});
      itemPath["get"] = op;
    }
    if (hasVerb(r.verbs, "update")) {
      json op = operation("replace" + id + scope + r.kind, "put", gvk,
                          "replace the specified " + r.kind, writeParams(false));
      op["requestBody"] = {{"required", true}, {"content", jsonContent(schemaRef(def))}};
      op["responses"] = responses(def, {"200", "201"});
      itemPath["put"] = op;
    }
    if (hasVerb(r.verbs, "patch")) {
      itemPath["patch"] = patchOperation("patch" + id + scope + r.kind, gvk, def, r.kind);
    }
    if (hasVerb(r.verbs, "delete")) {
      json op = operation("delete" + id + scope + r.kind, "delete", gvk, "delete a " + r.kind,
                          deleteParams());
      op["requestBody"] = {{"content", jsonContent(schemaRef(
                                           "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"))}};
      op["responses"] = responses(def, {"200", "202"});
      roots.insert("io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions");
      itemPath["delete"] = op;
    }
    if (!itemPath.empty()) {
      itemPath["parameters"] =
          r.namespaced ? json::array({nameParam, nsParam}) : json::array({nameParam});
      paths[item] = itemPath;
    }

    for (const auto& sub : r.subresources) addSubresource(r, sub, item, nameParam, nsParam);
  }

  // JSON subresources only: log, exec, attach, portforward and proxy stream other media types.
  void addSubresource(const ResourceInfo& r, const SubresourceInfo& sub, const std::string& item,
                      const json& nameParam, const json& nsParam) {
    std::string subDef = definitionName(sub.group, sub.version, sub.kind);
    if (sub.name == "log" || (!schemaDefinitions().contains(subDef) && !extra.contains(subDef))) {
      return;
    }
    const json gvk = gvkOf(sub.group, sub.version, sub.kind);
    const std::string id = apiId(r.group, r.version) + (r.namespaced ? "Namespaced" : "") + r.kind +
                           upperFirst(sub.name);
    const std::string what = sub.name + " of the specified " + r.kind;
    json p = json::object();
    for (const auto& verb : sub.verbs) {
      if (verb == "get") {
        json op = operation("read" + id, "get", gvk, "read " + what, json::array());
        op["responses"] = responses(subDef, {"200"});
        p["get"] = op;
      } else if (verb == "update") {
        json op = operation("replace" + id, "put", gvk, "replace " + what, writeParams(false));
        op["requestBody"] = {{"required", true}, {"content", jsonContent(schemaRef(subDef))}};
        op["responses"] = responses(subDef, {"200", "201"});
        p["put"] = op;
      } else if (verb == "patch") {
        p["patch"] = patchOperation("patch" + id, gvk, subDef, sub.name + " of " + r.kind);
      } else if (verb == "create") {
        json op = operation("create" + id, "post", gvk, "create " + what, writeParams(false));
        op["requestBody"] = {{"required", true}, {"content", jsonContent(schemaRef(subDef))}};
        op["responses"] = responses(subDef, {"200", "201", "202"});
        p["post"] = op;
      }
    }
    if (p.empty()) return;
    p["parameters"] = r.namespaced ? json::array({nameParam, nsParam}) : json::array({nameParam});
    paths[item + "/" + sub.name] = p;
  }

  // Every definition reachable from the roots through $ref.
  json components() const {
    const json& defs = schemaDefinitions();
    json schemas = json::object();
    std::vector<std::string> todo(roots.begin(), roots.end());
    const std::string prefix = kSchemaRefPrefix;
    while (!todo.empty()) {
      std::string name = todo.back();
      todo.pop_back();
      if (schemas.contains(name)) continue;
      const json* def = extra.contains(name)  ? &extra[name]
                        : defs.contains(name) ? &defs[name]
                                              : nullptr;
      if (!def) continue;
      schemas[name] = *def;
      collectRefs(*def, prefix, todo);
    }
    return schemas;
  }

  static void collectRefs(const json& node, const std::string& prefix,
                          std::vector<std::string>& out) {
    if (node.is_object()) {
      auto r = node.find("$ref");
      if (r != node.end() && r->is_string() && r->get<std::string>().rfind(prefix, 0) == 0) {
        out.push_back(r->get<std::string>().substr(prefix.size()));
      }
      for (const auto& [key, child] : node.items()) collectRefs(child, prefix, out);
    } else if (node.is_array()) {
      for (const auto& child : node) collectRefs(child, prefix, out);
    }
  }
};

}  // namespace

std::string openapiDocumentHash(const json& document) {
  std::string text = document.dump();
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha512(), nullptr);
  constexpr char kHex[] = "0123456789ABCDEF";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex.push_back(kHex[digest[i] >> 4]);
    hex.push_back(kHex[digest[i] & 0xf]);
  }
  return hex;
}

Result<json> openapiV3Document(const Scheme& scheme, const std::string& path) {
  std::string p = path.substr(0, path.find('?'));
  while (!p.empty() && p.front() == '/') p.erase(0, 1);
  while (!p.empty() && p.back() == '/') p.pop_back();
  for (const auto& g : scheme.groups()) {
    for (const auto& v : g.versions) {
      if (groupVersionPath(g.name, v) != p) continue;
      DocBuilder b;
      for (const auto* r : scheme.groupVersion(g.name, v)) b.addResource(*r);
      return json{{"openapi", "3.0.0"},
                  {"info", {{"title", "Kubernetes"}, {"version", "v1.32.0"}}},
                  {"paths", std::move(b.paths)},
                  {"components", {{"schemas", b.components()}}}};
    }
  }
  return Status::NotFoundMessage("the OpenAPI document \"" + path + "\" does not exist");
}

json openapiV3Index(const Scheme& scheme) {
  json paths = json::object();
  for (const auto& g : scheme.groups()) {
    for (const auto& v : g.versions) {
      std::string p = groupVersionPath(g.name, v);
      auto doc = openapiV3Document(scheme, p);
      if (!doc.ok()) continue;
      paths[p] = {{"serverRelativeURL", "/openapi/v3/" + p + "?hash=" + openapiDocumentHash(*doc)}};
    }
  }
  return {{"paths", paths}};
}

}  // namespace minik8s::api
