// coordination.k8s.io Lease, discovery.k8s.io EndpointSlice and minik8s.io Dns.
#include <set>
#include <string>

#include "api/validation/kinds.h"

namespace minik8s::api::validation {
namespace {

constexpr size_t kMaxSliceEndpoints = 1000;
constexpr size_t kMaxSliceAddresses = 100;
constexpr size_t kMaxSlicePorts = 100;

void validateSliceEndpoints(FieldErrors& errs, const json& endpoints, const std::string& type) {
  if (endpoints.size() > kMaxSliceEndpoints) {
    errs.tooMany("endpoints", static_cast<int64_t>(endpoints.size()), kMaxSliceEndpoints);
    return;
  }
  for (size_t i = 0; i < endpoints.size(); ++i) {
    std::string p = index("endpoints", i);
    const json& e = endpoints[i];
    if (!e.is_object()) {
      errs.typeInvalid(p, e, "object");
      continue;
    }
    std::string ap = child(p, "addresses");
    const json* addresses = errs.array(e, "addresses", ap);
    if (!addresses || addresses->empty()) {
      if (addresses || absent(e, "addresses")) errs.required(ap, "must contain at least 1 address");
    } else if (addresses->size() > kMaxSliceAddresses) {
      errs.tooMany(ap, static_cast<int64_t>(addresses->size()), kMaxSliceAddresses);
    } else {
      for (size_t j = 0; j < addresses->size(); ++j) {
        const json& a = (*addresses)[j];
        std::string s = a.is_string() ? a.get<std::string>() : "";
        if (!a.is_string()) {
          errs.typeInvalid(index(ap, j), a, "string");
        } else if (type == "IPv4" && !isIPv4(s)) {
          errs.invalid(index(ap, j), a, "must be a valid IPv4 address");
        } else if (type == "IPv6" && !isIPv6(s)) {
          errs.invalid(index(ap, j), a, "must be a valid IPv6 address");
        } else if (type == "FQDN") {
          errs.invalidEach(index(ap, j), a, isDNS1123Subdomain(s));
        }
      }
    }
    auto nodeName = errs.string(e, "nodeName", child(p, "nodeName"));
    if (nodeName) errs.invalidEach(child(p, "nodeName"), *nodeName, isDNS1123Subdomain(*nodeName));
    auto hostname = errs.string(e, "hostname", child(p, "hostname"));
    if (hostname) errs.invalidEach(child(p, "hostname"), *hostname, isDNS1123Label(*hostname));
    if (const json* conditions = errs.object(e, "conditions", child(p, "conditions"))) {
      for (const char* c : {"ready", "serving", "terminating"}) {
        errs.boolean(*conditions, c, child(child(p, "conditions"), c));
      }
    }
  }
}

void validateSlicePorts(FieldErrors& errs, const json& ports) {
  if (ports.size() > kMaxSlicePorts) {
    errs.tooMany("ports", static_cast<int64_t>(ports.size()), kMaxSlicePorts);
    return;
  }
  std::set<std::string> names;
  for (size_t i = 0; i < ports.size(); ++i) {
    std::string p = index("ports", i);
    const json& port = ports[i];
    if (!port.is_object()) {
      errs.typeInvalid(p, port, "object");
      continue;
    }
    std::string name = errs.string(port, "name", child(p, "name")).value_or("");
    if (!name.empty()) errs.invalidEach(child(p, "name"), name, isDNS1123Label(name));
    if (names.count(name)) errs.duplicate(child(p, "name"), name);
    names.insert(name);
    validateProtocol(errs, port, child(p, "protocol"));
    auto number = errs.integer(port, "port", child(p, "port"));
    if (number) errs.invalidEach(child(p, "port"), *number, isValidPortNum(*number));
  }
}

}  // namespace

void validateLease(FieldErrors& errs, const json& obj, const json* old) {
  validateObjectMeta(errs, obj, true, nameIsDNSSubdomain);
  if (const json* spec = errs.object(obj, "spec", "spec")) {
    auto duration = errs.integer(*spec, "leaseDurationSeconds", "spec.leaseDurationSeconds");
    if (duration && *duration <= 0) {
      errs.invalid("spec.leaseDurationSeconds", *duration, "must be greater than 0");
    }
    auto transitions = errs.integer(*spec, "leaseTransitions", "spec.leaseTransitions");
    validateNonnegative(errs, transitions, "spec.leaseTransitions");
    errs.string(*spec, "holderIdentity", "spec.holderIdentity");
    errs.string(*spec, "acquireTime", "spec.acquireTime");
    errs.string(*spec, "renewTime", "spec.renewTime");
  }
  if (old) validateObjectMetaUpdate(errs, obj, *old);
}

void validateEndpointSlice(FieldErrors& errs, const json& obj, const json* old) {
  validateObjectMeta(errs, obj, true, nameIsDNSSubdomain);
  auto type = errs.string(obj, "addressType", "addressType");
  if (!type || type->empty()) {
    if (type || absent(obj, "addressType")) errs.required("addressType");
  } else if (*type != "IPv4" && *type != "IPv6" && *type != "FQDN") {
    errs.notSupported("addressType", *type, {"FQDN", "IPv4", "IPv6"});
  }
  if (const json* endpoints = errs.array(obj, "endpoints", "endpoints")) {
    validateSliceEndpoints(errs, *endpoints, type.value_or(""));
  }
  if (const json* ports = errs.array(obj, "ports", "ports")) validateSlicePorts(errs, *ports);
  if (old) {
    validateObjectMetaUpdate(errs, obj, *old);
    validateImmutable(errs, member(obj, "addressType"), member(*old, "addressType"), "addressType");
  }
}

void validateDns(FieldErrors& errs, const json& obj, const json* old) {
  validateObjectMeta(errs, obj, true, nameIsDNSSubdomain);
  const json* specPtr = errs.object(obj, "spec", "spec");
  const json& spec = specPtr ? *specPtr : kNoObject;
  auto host = errs.string(spec, "host", "spec.host");
  if (!host || host->empty()) {
    if (host || absent(spec, "host")) errs.required("spec.host");
  } else {
    errs.invalidEach("spec.host", *host, isDNS1123Subdomain(*host));
  }
  const json* paths = errs.array(spec, "paths", "spec.paths");
  if (!paths || paths->empty()) {
    if (paths || absent(spec, "paths")) errs.required("spec.paths");
    if (old) validateObjectMetaUpdate(errs, obj, *old);
    return;
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < paths->size(); ++i) {
    std::string p = index("spec.paths", i);
    const json& entry = (*paths)[i];
    if (!entry.is_object()) {
      errs.typeInvalid(p, entry, "object");
      continue;
    }
    auto path = errs.string(entry, "path", child(p, "path"));
    if (!path || path->empty()) {
      if (path || absent(entry, "path")) errs.required(child(p, "path"));
    } else if (path->front() != '/') {
      errs.invalid(child(p, "path"), *path, "must start with '/'");
    } else {
      if (seen.count(*path)) errs.duplicate(child(p, "path"), *path);
      seen.insert(*path);
    }
    auto service = errs.string(entry, "serviceName", child(p, "serviceName"));
    if (!service || service->empty()) {
      if (service || absent(entry, "serviceName")) errs.required(child(p, "serviceName"));
    } else {
      errs.invalidEach(child(p, "serviceName"), *service, isDNS1123Label(*service));
    }
    auto port = errs.integer(entry, "servicePort", child(p, "servicePort"));
    if (!port) {
      if (absent(entry, "servicePort")) errs.required(child(p, "servicePort"));
    } else {
      errs.invalidEach(child(p, "servicePort"), *port, isValidPortNum(*port));
    }
  }
  if (old) validateObjectMetaUpdate(errs, obj, *old);
}

}  // namespace minik8s::api::validation
