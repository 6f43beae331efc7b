// The watch-event framing the client parses (newline-delimited JSON in arbitrary chunks): never
// crashes, delivers the same events whatever the chunking, and an ERROR never ends it with OK.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "client/watch_event_decoder.h"
#include "fuzz_check.h"

using minik8s::client::WatchEvent;
using minik8s::client::WatchEventDecoder;

namespace {

struct Outcome {
  std::vector<std::string> events;  // type + object, as text
  bool failed = false;
  int code = 0;
};

Outcome decode(std::string_view body, size_t piece) {
  WatchEventDecoder decoder;
  Outcome out;
  auto onEvent = [&](const WatchEvent& ev) {
    FUZZ_CHECK(!ev.type.empty() && ev.object.is_object());
    out.events.push_back(ev.type + " " + ev.object.dump());
    return out.events.size() < 1000;
  };
  for (size_t i = 0; i < body.size(); i += piece) {
    if (!decoder.feed(body.substr(i, piece), onEvent)) break;
  }
  out.failed = !decoder.failure().ok();
  out.code = decoder.failure().code();
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const size_t piece = 1 + data[0] % 64;
  std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  Outcome whole = decode(body, body.size() + 1);
  Outcome pieces = decode(body, piece);
  FUZZ_CHECK(whole.events == pieces.events);
  FUZZ_CHECK(whole.failed == pieces.failed);
  FUZZ_CHECK(whole.code == pieces.code);
  if (whole.failed) FUZZ_CHECK(whole.code >= 400 && whole.code <= 599);
  return 0;
}
