// Resource quantities ("500m", "1.5Gi", "1e3"): parsing never crashes or overflows, a parsed
// quantity prints a form that parses back to an equal value and is stable from then on, and
// comparisons agree with the milli values they saturate to.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "api/quantity.h"
#include "fuzz_check.h"

using minik8s::api::Quantity;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto q = Quantity::parse(text);
  if (!q.ok()) {
    FUZZ_CHECK(q.status().code() == 400);
    return 0;
  }
  const std::string printed = q->toString();
  auto back = Quantity::parse(printed);
  FUZZ_CHECK(back.ok());
  FUZZ_CHECK(back->compare(*q) == 0);
  // Printing is stable from the second round on: a binary quantity that is no whole multiple of
  // 1Ki prints as a plain number, which then parses as decimal (as in Kubernetes).
  const std::string again = back->toString();
  auto third = Quantity::parse(again);
  FUZZ_CHECK(third.ok());
  FUZZ_CHECK(third->toString() == again);
  FUZZ_CHECK(q->compare(*q) == 0);
  const int64_t milli = q->milliValue();
  const int64_t value = q->value();
  FUZZ_CHECK((milli > 0) == (q->sign() > 0) || milli == 0);
  FUZZ_CHECK((value >= 0) == (q->sign() >= 0) || value == 0);
  Quantity fromMilli = Quantity::fromMilli(milli);
  FUZZ_CHECK(fromMilli.milliValue() == milli);
  (void)Quantity::fromJson(minik8s::json(std::string(text)));
  return 0;
}
