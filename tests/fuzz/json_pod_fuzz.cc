// The API server's path for a Pod body: depth guard, JSON parse, strict decoding against the
// schema, defaulting, validation on create and on update. None of it may crash or throw, and
// defaulting must be idempotent.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "api/defaults.h"
#include "api/scheme.h"
#include "api/strict_decoding.h"
#include "api/validation.h"
#include "common/json_depth.h"
#include "fuzz_check.h"

using minik8s::json;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (!minik8s::checkJsonDepth(text).ok()) return 0;
  json obj = json::parse(text, nullptr, false);
  if (!obj.is_object()) return 0;
  const auto& scheme = minik8s::api::Scheme::builtin();
  for (const char* kind : {"Pod", "Deployment", "Service"}) {
    const auto* r = scheme.byKind(kind == std::string_view("Deployment") ? "apps" : "", "v1", kind);
    FUZZ_CHECK(r != nullptr);
    json o = obj;
    o["apiVersion"] = r->apiVersion();
    o["kind"] = r->kind;
    minik8s::api::checkAgainstSchema(*r, o);
    minik8s::api::applyDefaults(*r, o);
    json again = o;
    minik8s::api::applyDefaults(*r, again);
    FUZZ_CHECK(again == o);
    minik8s::api::validate(*r, o, nullptr);
    minik8s::api::validate(*r, o, &obj);
    (void)o.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  return 0;
}
