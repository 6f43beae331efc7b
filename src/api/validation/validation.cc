// validate(): dispatches to the validator each kind registers (api/resource_type.h).
#include "api/validation.h"

#include <string>

#include "api/custom_resource.h"
#include "api/resource_type.h"
#include "api/validation/kinds.h"

namespace minik8s::api {

using validation::FieldErrors;

std::vector<Cause> validate(const ResourceInfo& r, const json& obj, const json* old) {
  FieldErrors errs;
  if (!obj.is_object()) {
    errs.typeInvalid("", obj, "object");
    return errs.take();
  }
  if (old && !old->is_object()) old = &validation::kNoObject;
  if (r.custom) return r.custom->validate(obj, old, r.namespaced);
  try {
    const ResourceType* type = builtinResourceType(r);
    if (type && type->validate) {
      type->validate(errs, obj, old);
    } else {
      // Kinds without rules of their own (ServiceAccount, ...): metadata only.
      validation::validateObjectMeta(errs, obj, r.namespaced, validation::nameIsDNSSubdomain);
      if (old) validation::validateObjectMetaUpdate(errs, obj, *old);
    }
  } catch (const std::exception& e) {
    // The validators check types before reading; this only guards against a missed case.
    std::vector<Cause> causes = errs.take();
    causes.push_back(Cause{"InternalError", "", std::string("Internal error: ") + e.what()});
    return causes;
  }
  return errs.take();
}

}  // namespace minik8s::api
