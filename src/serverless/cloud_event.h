// CloudEvents 1.0 over HTTP, as the broker receives them and the triggers deliver them:
//   - binary mode: the attributes in ce-* headers (ce-id, ce-source, ce-type, ce-specversion,
//     ce-subject, ce-time, any extension ce-<name>), the data as the body with its Content-Type;
//   - structured mode: Content-Type application/cloudevents+json, the whole event as one JSON
//     object (attributes at the top level, `data` or `data_base64`).
// Filters match attributes exactly, as Knative Eventing's Trigger filter does. Pure; thread-safe.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/http.h"
#include "common/status.h"

namespace minik8s::serverless {

struct CloudEvent {
  std::string specversion = "1.0";
  std::string id, source, type;                // required
  std::string subject, time, datacontenttype;  // optional ("" when absent)
  std::map<std::string, std::string> extensions;
  json data;  // the body as JSON when it is JSON, else a string; null when there is none
};

// The event a request carries (structured when its Content-Type is
// application/cloudevents+json, binary otherwise). BadRequest naming the attribute that is
// missing or malformed (e.g. "ce-type: Required value", "specversion: Unsupported value").
Result<CloudEvent> parseCloudEvent(const http::Request& req);

// The event in structured mode: the attributes and `data` in one object (what a Function's
// handler receives as its event).
json toStructured(const CloudEvent& event);
// Its attributes as binary-mode headers (ce-*), for a sender.
std::vector<std::pair<std::string, std::string>> toBinaryHeaders(const CloudEvent& event);

// One attribute by its CloudEvents name (type, source, subject, id, time, specversion,
// datacontenttype or an extension); "" when the event has none.
std::string attribute(const CloudEvent& event, const std::string& name);

// True when every attribute of `filter` equals the event's (an empty filter matches every
// event; a filter value "" matches any value, as in Knative).
bool matchesFilter(const std::map<std::string, std::string>& filter, const CloudEvent& event);

// Attribute names as the spec allows them: lower-case letters and digits, 1-20 characters.
bool validAttributeName(const std::string& name);

}  // namespace minik8s::serverless
