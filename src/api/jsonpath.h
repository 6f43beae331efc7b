// JSONPath as CustomResourceDefinitions use it: additionalPrinterColumns' jsonPath and the scale
// subresource's specReplicasPath/statusReplicasPath/labelSelectorPath.
//
// Supported: an optional surrounding {...}, dotted fields (.spec.replicas), quoted fields
// (['app.kubernetes.io/name'] or ["x"]), indexes ([0], [-1]), wildcards ([*], .*) and filters on
// a field of each element ([?(@.type=="Ready")], !=, or a bare [?(@.ready)] for presence). That is
// what printer columns in the wild use; unions, slices and recursive descent are refused by
// parse(). Pure functions: thread-safe.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace minik8s::api {

class JsonPath {
 public:
  // A clear BadRequest-style message for an expression outside the supported subset.
  static Result<JsonPath> parse(const std::string& expression);

  // Every value the path reaches in `root`, in document order.
  std::vector<json> evaluate(const json& root) const;
  // The first value reached, or null.
  json first(const json& root) const;

  // A JSON pointer for a path of plain fields only (".spec.replicas" -> "/spec/replicas"), as the
  // scale subresource needs for writing; "" when the path has indexes, wildcards or filters.
  std::string pointer() const;

  const std::string& expression() const { return expression_; }

 private:
  struct Step {
    enum class Kind { kField, kIndex, kWildcard, kFilter } kind = Kind::kField;
    std::string field;             // kField
    long index = 0;                // kIndex
    std::vector<std::string> lhs;  // kFilter: the fields after @
    bool hasValue = false, notEquals = false;
    json value;  // kFilter: the compared literal
  };
  std::string expression_;
  std::vector<Step> steps_;
};

}  // namespace minik8s::api
