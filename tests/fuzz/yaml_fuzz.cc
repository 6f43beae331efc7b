// YAML manifests (kubectl apply of a YAML body, apply-patch+yaml): parsing never crashes and every
// document survives toYaml -> parseYaml unchanged.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/yaml_json.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto docs = minik8s::parseYamlDocuments(text);
  if (!docs.ok()) {
    FUZZ_CHECK(docs.status().code() == 400);
    return 0;
  }
  for (const auto& doc : *docs) {
    std::string yaml = minik8s::toYaml(doc);
    auto back = minik8s::parseYaml(yaml);
    if (doc.is_null()) continue;  // a null document is skipped by the parser
    FUZZ_CHECK(back.ok());
    FUZZ_CHECK(*back == doc);
  }
  return 0;
}
