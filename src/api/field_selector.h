// FieldSelector: Kubernetes field selectors (?fieldSelector=, kubectl --field-selector), e.g.
// "spec.nodeName=node-1,status.phase!=Succeeded", and the per-kind set of selectable fields.
//
// Terms are ANDed; values may be empty ("spec.nodeName=" selects unscheduled pods) and may
// escape ',', '=' and '\' with a backslash. Only the fields Kubernetes supports for a kind can be
// selected on (metadata.name and metadata.namespace everywhere, plus e.g. spec.nodeName for
// Pods); others fail with 400 "field label not supported: <field>". A missing field compares as
// its Go zero value ("" for strings). Values are immutable and safe to share between threads.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace minik8s::api {

// Every selectable field of an object with its value (Kubernetes' fields.Set from GetAttrs):
// what a field selector reads, without the object.
using FieldSet = std::vector<std::pair<std::string, std::string>>;

class FieldSelector {
 public:
  struct Term {
    std::string field;
    std::string value;  // unescaped
    bool notEquals = false;
  };

  FieldSelector() = default;  // empty: matches everything

  // Syntax errors are 400 BadRequest. Fields are not checked here: see validate().
  static Result<FieldSelector> parse(std::string_view text);
  // OK when every field of the selector can be selected on for kind ("Pod", "Event", ...).
  static Status validate(const std::string& kind, const FieldSelector& selector);
  // The string value of a selectable field of obj, or 400 when kind does not support the field.
  static Result<std::string> fieldValue(const std::string& kind, const std::string& field,
                                        const json& obj);

  // The value of each field kind can be selected on in obj.
  static FieldSet fieldSet(const std::string& kind, const json& obj);

  // Whether obj (an object of the given kind) satisfies every term.
  Result<bool> matches(const std::string& kind, const json& obj) const;
  // The same for an object's fieldSet; a field the set lacks does not match.
  bool matches(const FieldSet& fields) const;
  bool empty() const { return terms_.empty(); }
  // Terms sorted, values re-escaped: "metadata.name=a,spec.nodeName!=".
  std::string toString() const;
  const std::vector<Term>& terms() const { return terms_; }
  // The value a term requires of field with "=", if any: lets a caller use an index
  // (e.g. the kubelet's watch on spec.nodeName).
  const std::string* requiredValue(std::string_view field) const;

 private:
  std::vector<Term> terms_;
};

}  // namespace minik8s::api
