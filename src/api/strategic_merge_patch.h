// The patch metadata strategic merge patch needs: for a list field at a location in an object of
// a kind, whether it merges (and by which key) or is replaced whole. This is the information
// Kubernetes keeps in its Go struct tags (patchStrategy, patchMergeKey); here it is a table.
// Pure functions over constant tables: safe from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace minik8s::api {

struct ListPatchStrategy {
  bool merge = false;             // false: the patch's list replaces the whole list
  std::vector<std::string> keys;  // merge keys of a list of maps; empty for a set of scalars
  // Values assumed for absent keys when matching elements (e.g. protocol "TCP" of a port).
  std::vector<std::string> keyDefaults;
};

// path: the field names from the object root to the list, list indexes left out, e.g.
// {"spec", "template", "spec", "containers", "ports"} for a Deployment.
ListPatchStrategy listPatchStrategy(const std::string& kind, const std::vector<std::string>& path);

}  // namespace minik8s::api
