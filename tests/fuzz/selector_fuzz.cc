// Label and field selectors from ?labelSelector= / ?fieldSelector=: parsing never crashes, and a
// parsed selector prints a string that parses back to the same selector.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "api/field_selector.h"
#include "api/selector.h"
#include "fuzz_check.h"

using minik8s::json;
using minik8s::api::FieldSelector;
using minik8s::api::LabelSelector;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  const json labels = {{"app", "web"}, {"tier", "a"}, {"n", "5"}};
  const json pod = {{"kind", "Pod"},
                    {"metadata", {{"name", "p"}, {"namespace", "default"}, {"labels", labels}}},
                    {"spec", {{"nodeName", "node-1"}}},
                    {"status", {{"phase", "Running"}}}};

  if (auto ls = LabelSelector::parse(text); ls.ok()) {
    const std::string printed = ls->toString();
    auto back = LabelSelector::parse(printed);
    FUZZ_CHECK(back.ok());
    FUZZ_CHECK(back->toString() == printed);
    FUZZ_CHECK(back->matches(labels) == ls->matches(labels));
    (void)ls->matches(json());
  } else {
    FUZZ_CHECK(ls.status().code() == 400);
  }

  if (auto fs = FieldSelector::parse(text); fs.ok()) {
    const std::string printed = fs->toString();
    auto back = FieldSelector::parse(printed);
    FUZZ_CHECK(back.ok());
    // The same terms; their order may change, as Kubernetes sorts the raw terms before parsing
    // ("N==b" sorts after "N=c", printed "N=b").
    auto sortedTerms = [](const FieldSelector& f) {
      std::vector<std::string> out;
      for (const auto& t : f.terms()) out.push_back(t.field + (t.notEquals ? "!" : "=") + t.value);
      std::sort(out.begin(), out.end());
      return out;
    };
    FUZZ_CHECK(sortedTerms(*back) == sortedTerms(*fs));
    (void)FieldSelector::validate("Pod", *fs);
    auto m = fs->matches("Pod", pod);
    auto m2 = back->matches("Pod", pod);
    FUZZ_CHECK(m.ok() == m2.ok());
    if (m.ok()) FUZZ_CHECK(*m == *m2);
  } else {
    FUZZ_CHECK(fs.status().code() == 400);
  }

  // A metav1.LabelSelector object, as in a Deployment's spec.selector.
  json obj = json::parse(text, nullptr, false);
  if (!obj.is_discarded()) {
    if (auto ls = LabelSelector::fromJson(obj); ls.ok()) (void)ls->matches(labels);
  }
  return 0;
}
