// The three PATCH formats. The input is "<target JSON>\n<patch JSON>"; the first byte picks the
// kind for strategic merge. No format may crash or throw; failures are 400/422 Statuses; a JSON
// merge patch is idempotent (RFC 7386).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "api/patch.h"
#include "common/json_depth.h"
#include "fuzz_check.h"

using minik8s::json;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  static const char* kKinds[] = {"Pod", "Deployment", "Service", "ConfigMap", "Widget"};
  const char* kind = kKinds[data[0] % 5];
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (!minik8s::checkJsonDepth(text).ok()) return 0;
  size_t nl = text.find('\n');
  if (nl == std::string_view::npos) return 0;
  json target = json::parse(text.substr(0, nl), nullptr, false);
  json patch = json::parse(text.substr(nl + 1), nullptr, false);
  if (target.is_discarded() || patch.is_discarded()) return 0;

  auto failedWell = [](const minik8s::Status& s) { return s.code() == 400 || s.code() == 422; };
  auto merged = minik8s::api::applyMergePatch(target, patch);
  if (merged.ok()) {
    auto twice = minik8s::api::applyMergePatch(*merged, patch);
    FUZZ_CHECK(twice.ok());
    FUZZ_CHECK(*twice == *merged);
  } else {
    FUZZ_CHECK(failedWell(merged.status()));
  }
  auto jsonPatched = minik8s::api::applyJsonPatch(target, patch);
  if (!jsonPatched.ok()) FUZZ_CHECK(failedWell(jsonPatched.status()));
  auto strategic = minik8s::api::applyStrategicMergePatch(target, patch, kind);
  if (!strategic.ok()) FUZZ_CHECK(failedWell(strategic.status()));
  return 0;
}
