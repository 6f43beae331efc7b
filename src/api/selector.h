// LabelSelector: Kubernetes label selectors, from the string syntax of ?labelSelector= and
// kubectl -l ("app=web,tier in (a,b),!canary") or from a metav1.LabelSelector object
// ({matchLabels, matchExpressions}), matched against an object's metadata.labels.
//
// Requirements are kept sorted by key, as Kubernetes does, so toString() prints the same string
// kube-apiserver would (e.g. for a Scale's status.selector). Values are immutable after parsing
// and safe to share between threads.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace minik8s::api {

class LabelSelector {
 public:
  enum class Operator {
    kEquals,        // k=v
    kDoubleEquals,  // k==v
    kNotEquals,     // k!=v
    kIn,            // k in (a,b)
    kNotIn,         // k notin (a,b)
    kExists,        // k
    kDoesNotExist,  // !k
    kGreaterThan,   // k>5 (integer label values)
    kLessThan,      // k<5
  };

  struct Requirement {
    std::string key;
    Operator op = Operator::kExists;
    std::vector<std::string> values;  // sorted, unique

    bool matches(const json& labels) const;
    std::string toString() const;
  };

  LabelSelector() = default;  // empty: matches everything

  // The string syntax. Syntax and key/value errors are 400 BadRequest.
  static Result<LabelSelector> parse(std::string_view text);
  // A metav1.LabelSelector. null yields a selector matching nothing (as Kubernetes treats a
  // missing selector); {} matches everything. Bad operators or values are 400 BadRequest.
  static Result<LabelSelector> fromJson(const json& selector);

  // labels: an object of string values, or null (no labels).
  bool matches(const json& labels) const;
  bool empty() const { return requirements_.empty() && !matchesNothing_; }
  bool matchesNothing() const { return matchesNothing_; }
  // "app=web,tier in (a,b)"; "" for the empty selector.
  std::string toString() const;
  const std::vector<Requirement>& requirements() const { return requirements_; }

 private:
  std::vector<Requirement> requirements_;
  bool matchesNothing_ = false;

  // Validates and appends; keeps requirements_ sorted by key.
  Status add(Requirement requirement);
};

}  // namespace minik8s::api
