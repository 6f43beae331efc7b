#include "kubelet/env_resolver.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "api/quantity.h"
#include "common/strings.h"
#include "kubelet/pod_util.h"

namespace minik8s::kubelet {

namespace {

// metadata.labels['key'] -> key
std::optional<std::string> bracketKey(const std::string& path, const std::string& prefix) {
  if (path.rfind(prefix + "['", 0) != 0 || path.size() < prefix.size() + 4) return std::nullopt;
  if (path.substr(path.size() - 2) != "']") return std::nullopt;
  return path.substr(prefix.size() + 2, path.size() - prefix.size() - 4);
}

}  // namespace

Result<std::string> podFieldRefValue(const json& pod, const std::string& path,
                                     const PodRuntimeFields& fields) {
  auto meta = pod.value("metadata", json::object());
  if (path == "metadata.name") return podName(pod);
  if (path == "metadata.namespace") return podNamespace(pod);
  if (path == "metadata.uid") return podUid(pod);
  if (path == "spec.nodeName") return pod["spec"].value("nodeName", "");
  if (path == "spec.serviceAccountName") return pod["spec"].value("serviceAccountName", "");
  if (path == "status.podIP") return fields.podIP;
  if (path == "status.hostIP" || path == "status.hostIPs") return fields.hostIP;
  if (path == "status.podIPs") {
    std::string out;
    for (const auto& ip : fields.podIPs) out += (out.empty() ? "" : ",") + ip;
    return out.empty() ? fields.podIP : out;
  }
  for (const char* m : {"labels", "annotations"}) {
    if (auto key = bracketKey(path, std::string("metadata.") + m)) {
      if (meta.contains(m) && meta[m].contains(*key) && meta[m][*key].is_string())
        return meta[m][*key].get<std::string>();
      return std::string();
    }
  }
  return Status::BadRequest("unsupported fieldRef fieldPath: " + path);
}

Result<std::string> containerResourceFieldValue(const json& container, const json& ref) {
  std::string res = ref.value("resource", "");
  auto dot = res.find('.');
  if (dot == std::string::npos) return Status::BadRequest("unsupported resource: " + res);
  std::string kind = res.substr(0, dot), name = res.substr(dot + 1);
  json q = container.contains("resources") && container["resources"].contains(kind) &&
                   container["resources"][kind].contains(name)
               ? container["resources"][kind][name]
               : json();
  if (q.is_null()) return std::string("0");
  auto parsed = api::Quantity::fromJson(q);
  if (!parsed.ok()) return parsed.status();
  int64_t divisor = 1000;  // in milli units
  if (ref.contains("divisor")) {
    auto d = api::Quantity::fromJson(ref["divisor"]);
    if (d.ok() && d->milliValue() > 0) divisor = d->milliValue();
  }
  // Kubernetes rounds up to the divisor.
  int64_t milli = parsed->milliValue();
  return std::to_string((milli + divisor - 1) / divisor);
}

namespace {

// "my-svc" -> "MY_SVC", as Kubernetes names service variables.
std::string envName(const std::string& name) {
  std::string out;
  for (char c : name) out += c == '-' ? '_' : static_cast<char>(std::toupper(c));
  return out;
}

bool hasClusterIP(const json& svc) {
  if (!svc.contains("spec") || !svc["spec"].is_object()) return false;
  const std::string ip = svc["spec"].value("clusterIP", "");
  return !ip.empty() && ip != "None";
}

}  // namespace

EnvList serviceEnv(const std::vector<json>& services) {
  std::vector<const json*> sorted;
  for (const json& s : services) {
    if (s.is_object() && hasClusterIP(s)) sorted.push_back(&s);
  }
  auto nameOf = [](const json* s) {
    return s->contains("metadata") && (*s)["metadata"].is_object()
               ? (*s)["metadata"].value("name", "")
               : std::string();
  };
  std::sort(sorted.begin(), sorted.end(),
            [&](const json* a, const json* b) { return nameOf(a) < nameOf(b); });
  EnvList env;
  for (const json* svc : sorted) {
    const std::string prefix = envName(nameOf(svc));
    const std::string ip = (*svc)["spec"].value("clusterIP", "");
    const json ports = (*svc)["spec"].value("ports", json::array());
    if (!ports.is_array() || ports.empty() || !ports[0].is_object()) continue;
    auto portOf = [](const json& p) {
      return p.contains("port") && p["port"].is_number_integer()
                 ? std::to_string(p["port"].get<int>())
                 : std::string();
    };
    env.emplace_back(prefix + "_SERVICE_HOST", ip);
    env.emplace_back(prefix + "_SERVICE_PORT", portOf(ports[0]));
    for (const json& p : ports) {
      if (!p.is_object()) continue;
      const std::string portName = p.value("name", "");
      if (!portName.empty())
        env.emplace_back(prefix + "_SERVICE_PORT_" + envName(portName), portOf(p));
    }
    const std::string firstProto = asciiLower(ports[0].value("protocol", "TCP"));
    env.emplace_back(prefix + "_PORT", firstProto + "://" + ip + ":" + portOf(ports[0]));
    for (const json& p : ports) {
      if (!p.is_object()) continue;
      const std::string protocol = p.value("protocol", "TCP");
      const std::string port = portOf(p);
      const std::string base = prefix + "_PORT_" + port + "_" + envName(protocol);
      env.emplace_back(base, asciiLower(protocol) + "://" + ip + ":" + port);
      env.emplace_back(base + "_PROTO", asciiLower(protocol));
      env.emplace_back(base + "_PORT", port);
      env.emplace_back(base + "_ADDR", ip);
    }
  }
  return env;
}

std::string expandEnvRefs(const std::string& in, const EnvList& env) {
  std::string out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '$' || i + 1 >= in.size()) {
      out += in[i];
      continue;
    }
    if (in[i + 1] == '$') {
      out += '$';
      ++i;
      continue;
    }
    if (in[i + 1] == '(') {
      auto close = in.find(')', i + 2);
      if (close != std::string::npos) {
        std::string name = in.substr(i + 2, close - i - 2);
        const std::string* found = nullptr;
        for (const auto& [k, v] : env)
          if (k == name) found = &v;  // the last definition wins
        if (found) {
          out += *found;
          i = close;
          continue;
        }
      }
    }
    out += in[i];
  }
  return out;
}

Result<EnvList> resolveEnv(const json& pod, const json& container, const PodRuntimeFields& fields,
                           ObjectSource& objects) {
  const std::string ns = podNamespace(pod);
  // Service variables come first so that env values can refer to them with $(NAME).
  std::vector<json> services;
  const bool serviceLinks = !(pod.contains("spec") && pod["spec"].is_object() &&
                              pod["spec"].value("enableServiceLinks", true) == false);
  if (serviceLinks) {
    auto own = objects.services(ns);
    if (!own.ok()) {
      return Status::Unavailable("failed to list services when setting up env vars: " +
                                 own.status().message());
    }
    services = std::move(*own);
  }
  // The API server's own Service: always, from namespace default (the pod's own namespace may
  // have a Service of that name too; default's wins, as in Kubernetes).
  {
    auto defaults = objects.services("default");
    if (!defaults.ok()) {
      return Status::Unavailable("failed to list services when setting up env vars: " +
                                 defaults.status().message());
    }
    std::erase_if(services, [](const json& s) {
      return s.contains("metadata") && s["metadata"].is_object() &&
             s["metadata"].value("name", "") == "kubernetes";
    });
    for (const json& s : *defaults) {
      if (s.contains("metadata") && s["metadata"].is_object() &&
          s["metadata"].value("name", "") == "kubernetes") {
        services.push_back(s);
      }
    }
  }
  EnvList env = serviceEnv(services);
  auto set = [&env](const std::string& k, const std::string& v) {
    for (auto& e : env)
      if (e.first == k) {
        e.second = v;
        return;
      }
    env.emplace_back(k, v);
  };
  if (container.contains("envFrom") && container["envFrom"].is_array()) {
    for (const auto& from : container["envFrom"]) {
      std::string prefix = from.value("prefix", "");
      bool isSecret = from.contains("secretRef");
      const json& ref = isSecret ? from["secretRef"] : from.value("configMapRef", json::object());
      std::string name = ref.value("name", "");
      auto data = isSecret ? objects.secretData(ns, name) : objects.configMapData(ns, name);
      if (!data.ok()) {
        if (ref.value("optional", false) && isMissing(data.status())) continue;
        return unreadableObject(isSecret ? "secret" : "configmap", name, data.status());
      }
      for (const auto& [k, v] : *data) set(prefix + k, v);
    }
  }
  if (!container.contains("env") || !container["env"].is_array()) return env;
  for (const auto& e : container["env"]) {
    std::string name = e.value("name", "");
    if (!e.contains("valueFrom")) {
      set(name, expandEnvRefs(e.value("value", ""), env));
      continue;
    }
    const json& from = e["valueFrom"];
    if (from.contains("fieldRef")) {
      auto v = podFieldRefValue(pod, from["fieldRef"].value("fieldPath", ""), fields);
      if (!v.ok()) return v.status();
      set(name, *v);
    } else if (from.contains("resourceFieldRef")) {
      auto v = containerResourceFieldValue(container, from["resourceFieldRef"]);
      if (!v.ok()) return v.status();
      set(name, *v);
    } else if (from.contains("configMapKeyRef") || from.contains("secretKeyRef")) {
      bool isSecret = from.contains("secretKeyRef");
      const json& ref = isSecret ? from["secretKeyRef"] : from["configMapKeyRef"];
      std::string objName = ref.value("name", ""), key = ref.value("key", "");
      bool optional = ref.value("optional", false);
      const char* kind = isSecret ? "secret" : "configmap";
      auto data = isSecret ? objects.secretData(ns, objName) : objects.configMapData(ns, objName);
      if (!data.ok()) {
        if (optional && isMissing(data.status())) continue;
        return unreadableObject(kind, objName, data.status());
      }
      auto it = data->find(key);
      if (it == data->end()) {
        if (optional) continue;
        return Status::NotFoundMessage("couldn't find key " + key + " in " +
                                       (isSecret ? "Secret " : "ConfigMap ") + ns + "/" + objName);
      }
      set(name, it->second);
    }
  }
  return env;
}

}  // namespace minik8s::kubelet
