// Accessors of the fields every component reads from API objects as JSON: the string at a JSON
// pointer (empty when absent, not a string, or unreachable: objects may come from untrusted
// input), namespace, name, uid, a label or annotation value, a pod's node. One set for the whole
// tree instead of a copy per file. Pure, thread-safe.
#pragma once

#include <string>

#include "common/status.h"

namespace minik8s::api {

std::string stringAt(const json& obj, const json::json_pointer& ptr);
// The same with the pointer as text ("/roleRef/name"); "" for a malformed pointer too.
std::string stringAt(const json& obj, const char* pointer);
// obj[key] when obj is an object that has it, else a null value: for walking untrusted objects
// one member at a time without a throw.
const json& member(const json& obj, const char* key);
// obj[key] when it is a string, else "".
std::string stringMember(const json& obj, const char* key);
// metadata.labels as it is (null when absent), read in place.
inline const json& labelsOf(const json& obj) { return member(member(obj, "metadata"), "labels"); }

inline std::string namespaceOf(const json& obj) { return stringAt(obj, "/metadata/namespace"); }
inline std::string nameOf(const json& obj) { return stringAt(obj, "/metadata/name"); }
inline std::string uidOf(const json& obj) { return stringAt(obj, "/metadata/uid"); }
inline std::string nodeNameOf(const json& pod) { return stringAt(pod, "/spec/nodeName"); }
inline std::string labelValue(const json& obj, const std::string& key) {
  return stringAt(obj, json::json_pointer("/metadata/labels") / key);
}
inline std::string annotationValue(const json& obj, const std::string& key) {
  return stringAt(obj, json::json_pointer("/metadata/annotations") / key);
}

}  // namespace minik8s::api
