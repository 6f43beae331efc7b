// CapturingWriter: an http::ResponseWriter that keeps what a handler sends, for tests that call
// a handler directly.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/http.h"

namespace minik8s::testing {

class CapturingWriter : public http::ResponseWriter {
 public:
  void send(http::Response r) override { response = std::move(r); }
  bool beginStream(int, std::vector<std::pair<std::string, std::string>>) override { return false; }
  bool write(std::string_view) override { return false; }
  void end() override {}
  bool clientGone() override { return false; }
  http::Response response;
};

}  // namespace minik8s::testing
