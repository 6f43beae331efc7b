// builtinResourceTypes(): every group's registrations, in discovery order.
#include <string_view>
#include <vector>

#include "api/resources/builders.h"

namespace minik8s::api {

const std::vector<ResourceType>& builtinResourceTypes() {
  static const std::vector<ResourceType> types = [] {
    std::vector<ResourceType> out;
    resources::addCoreResources(out);
    resources::addAppsResources(out);
    resources::addAutoscalingResources(out);
    resources::addBatchResources(out);
    resources::addNetworkingResources(out);
    resources::addRbacResources(out);
    resources::addCertificatesResources(out);
    resources::addStorageResources(out);
    resources::addExtensionResources(out);
    return out;
  }();
  return types;
}

const ResourceType* builtinResourceType(std::string_view group, std::string_view version,
                                        std::string_view kind) {
  for (const auto& t : builtinResourceTypes()) {
    if (t.info.kind == kind && t.info.group == group && t.info.version == version) return &t;
  }
  return nullptr;
}

}  // namespace minik8s::api
