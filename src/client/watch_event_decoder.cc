#include "client/watch_event_decoder.h"

namespace minik8s::client {

namespace {

std::string stringField(const json& obj, const char* key, const char* fallback) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string(fallback);
}

// The Status an ERROR event carries; a missing or nonsensical code is a 500.
Status statusOfErrorEvent(const json& object) {
  int code = 500;
  if (auto it = object.find("code"); it != object.end() && it->is_number_integer()) {
    const int64_t c = it->get<int64_t>();
    if (c >= 400 && c <= 599) code = static_cast<int>(c);
  }
  return Status(code, stringField(object, "reason", "Unknown"), stringField(object, "message", ""));
}

}  // namespace

bool WatchEventDecoder::feed(std::string_view chunk,
                             const std::function<bool(WatchEvent&)>& onEvent) {
  if (stopped_) return false;
  pending_.append(chunk);
  size_t start = 0;
  size_t nl;
  while ((nl = pending_.find('\n', start)) != std::string::npos) {
    std::string_view line(pending_.data() + start, nl - start);
    start = nl + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    json j = json::parse(line, nullptr, false);
    if (!j.is_object()) continue;
    auto object = j.find("object");
    WatchEvent ev{stringField(j, "type", ""), json()};
    if (ev.type.empty() || object == j.end() || !object->is_object()) continue;
    ev.object = std::move(*object);
    if (ev.type == "ERROR") {
      failure_ = statusOfErrorEvent(ev.object);
      stopped_ = true;
      break;
    }
    if (!onEvent(ev)) {
      stopped_ = true;
      break;
    }
  }
  pending_.erase(0, start);
  if (!stopped_ && pending_.size() > kMaxWatchEventBytes) {
    failure_ = Status::Internal("a watch event is larger than " +
                                std::to_string(kMaxWatchEventBytes) + " bytes");
    stopped_ = true;
  }
  if (stopped_) pending_.clear();
  return !stopped_;
}

}  // namespace minik8s::client
