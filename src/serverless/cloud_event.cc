#include "serverless/cloud_event.h"

#include <algorithm>
#include <cctype>

#include "common/base64.h"

namespace minik8s::serverless {

namespace {

std::string ceLower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// The media type of a Content-Type value, lower case, without parameters.
std::string ceMediaType(const std::string& contentType) {
  std::string t = ceLower(contentType.substr(0, contentType.find(';')));
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.erase(0, 1);
  return t;
}

bool ceIsJsonMedia(const std::string& media) {
  return media.empty() || media == "application/json" || media == "text/json" ||
         (media.size() > 5 && media.compare(media.size() - 5, 5, "+json") == 0);
}

Status ceCheckRequired(const CloudEvent& e, const std::string& prefix) {
  if (e.specversion != "1.0") {
    return Status::BadRequest(prefix + "specversion: Unsupported value: \"" + e.specversion +
                              "\": supported values: \"1.0\"");
  }
  if (e.id.empty()) return Status::BadRequest(prefix + "id: Required value");
  if (e.source.empty()) return Status::BadRequest(prefix + "source: Required value");
  if (e.type.empty()) return Status::BadRequest(prefix + "type: Required value");
  return {};
}

// The body as data: JSON when the content type says JSON and it parses, else the text.
json ceBodyData(const std::string& body, const std::string& contentType) {
  if (body.empty()) return nullptr;
  if (ceIsJsonMedia(ceMediaType(contentType))) {
    json parsed = json::parse(body, nullptr, false);
    if (!parsed.is_discarded()) return parsed;
  }
  return body;
}

Result<CloudEvent> parseStructuredEvent(const std::string& body) {
  json obj = json::parse(body, nullptr, false);
  if (obj.is_discarded() || !obj.is_object()) {
    return Status::BadRequest("body: a structured CloudEvent must be one JSON object");
  }
  CloudEvent e;
  e.specversion.clear();
  for (const auto& [name, value] : obj.items()) {
    if (name == "data" || name == "data_base64") continue;
    std::string text;
    if (value.is_string()) {
      text = value.get<std::string>();
    } else if (value.is_number() || value.is_boolean()) {
      text = value.dump();
    } else if (value.is_null()) {
      continue;
    } else {
      return Status::BadRequest(name +
                                ": Invalid value: attributes must be strings, numbers or "
                                "booleans");
    }
    if (name == "specversion") {
      e.specversion = text;
    } else if (name == "id") {
      e.id = text;
    } else if (name == "source") {
      e.source = text;
    } else if (name == "type") {
      e.type = text;
    } else if (name == "subject") {
      e.subject = text;
    } else if (name == "time") {
      e.time = text;
    } else if (name == "datacontenttype") {
      e.datacontenttype = text;
    } else {
      if (!validAttributeName(name)) {
        return Status::BadRequest(name +
                                  ": Invalid value: attribute names are lower-case letters "
                                  "and digits, at most 20");
      }
      e.extensions[name] = text;
    }
  }
  if (e.specversion.empty()) return Status::BadRequest("specversion: Required value");
  if (Status s = ceCheckRequired(e, ""); !s.ok()) return s;
  if (obj.contains("data") && obj.contains("data_base64")) {
    return Status::BadRequest("data_base64: Forbidden: data and data_base64 are exclusive");
  }
  if (obj.contains("data")) {
    e.data = obj["data"];
  } else if (obj.contains("data_base64")) {
    if (!obj["data_base64"].is_string()) {
      return Status::BadRequest("data_base64: Invalid value: must be a base64 string");
    }
    auto raw = base64::decode(obj["data_base64"].get<std::string>());
    if (!raw.ok()) return Status::BadRequest("data_base64: " + raw.status().message());
    e.data = *raw;
  }
  return e;
}

}  // namespace

bool validAttributeName(const std::string& name) {
  if (name.empty() || name.size() > 20) return false;
  return std::all_of(name.begin(), name.end(),
                     [](unsigned char c) { return std::islower(c) || std::isdigit(c); });
}

Result<CloudEvent> parseCloudEvent(const http::Request& req) {
  const std::string contentType = req.header("Content-Type");
  const std::string media = ceMediaType(contentType);
  if (media == "application/cloudevents+json") return parseStructuredEvent(req.body);
  if (media.rfind("application/cloudevents", 0) == 0) {
    return Status::BadRequest("Content-Type: Unsupported value: \"" + media +
                              "\": structured mode supports application/cloudevents+json");
  }
  CloudEvent e;
  e.specversion.clear();
  for (const auto& [header, value] : req.headers) {
    const std::string name = ceLower(header);
    if (name.size() <= 3 || name.compare(0, 3, "ce-") != 0) continue;
    const std::string attr = name.substr(3);
    if (attr == "specversion") {
      e.specversion = value;
    } else if (attr == "id") {
      e.id = value;
    } else if (attr == "source") {
      e.source = value;
    } else if (attr == "type") {
      e.type = value;
    } else if (attr == "subject") {
      e.subject = value;
    } else if (attr == "time") {
      e.time = value;
    } else if (attr == "datacontenttype") {
      // Binary mode carries it as Content-Type; a ce- header of it is ignored, as the SDKs do.
    } else {
      if (!validAttributeName(attr)) {
        return Status::BadRequest(header +
                                  ": Invalid value: attribute names are lower-case letters and "
                                  "digits, at most 20");
      }
      e.extensions[attr] = value;
    }
  }
  if (e.specversion.empty()) return Status::BadRequest("ce-specversion: Required value");
  if (Status s = ceCheckRequired(e, "ce-"); !s.ok()) return s;
  e.datacontenttype = contentType;
  e.data = ceBodyData(req.body, contentType);
  return e;
}

json toStructured(const CloudEvent& e) {
  json out = {{"specversion", e.specversion}, {"id", e.id}, {"source", e.source}, {"type", e.type}};
  if (!e.subject.empty()) out["subject"] = e.subject;
  if (!e.time.empty()) out["time"] = e.time;
  if (!e.datacontenttype.empty()) out["datacontenttype"] = e.datacontenttype;
  for (const auto& [name, value] : e.extensions) out[name] = value;
  if (!e.data.is_null()) out["data"] = e.data;
  return out;
}

std::vector<std::pair<std::string, std::string>> toBinaryHeaders(const CloudEvent& e) {
  std::vector<std::pair<std::string, std::string>> h = {{"ce-specversion", e.specversion},
                                                        {"ce-id", e.id},
                                                        {"ce-source", e.source},
                                                        {"ce-type", e.type}};
  if (!e.subject.empty()) h.emplace_back("ce-subject", e.subject);
  if (!e.time.empty()) h.emplace_back("ce-time", e.time);
  for (const auto& [name, value] : e.extensions) h.emplace_back("ce-" + name, value);
  return h;
}

std::string attribute(const CloudEvent& e, const std::string& name) {
  if (name == "specversion") return e.specversion;
  if (name == "id") return e.id;
  if (name == "source") return e.source;
  if (name == "type") return e.type;
  if (name == "subject") return e.subject;
  if (name == "time") return e.time;
  if (name == "datacontenttype") return e.datacontenttype;
  auto it = e.extensions.find(name);
  return it == e.extensions.end() ? "" : it->second;
}

bool matchesFilter(const std::map<std::string, std::string>& filter, const CloudEvent& e) {
  for (const auto& [name, want] : filter) {
    const std::string have = attribute(e, name);
    if (!want.empty() && have != want) return false;
  }
  return true;
}

}  // namespace minik8s::serverless
