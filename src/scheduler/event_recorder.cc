#include "scheduler/event_recorder.h"

#include <fmt/format.h>

#include "common/logging.h"
#include "common/time_util.h"

namespace minik8s::scheduler {

namespace {
// Bounds memory on long runs; forgetting only means the next repeat starts a new Event.
constexpr size_t kMaxRemembered = 4096;
}  // namespace

EventRecorder::EventRecorder(client::RestClient& client, std::string component)
    : client_(client), component_(std::move(component)) {}

json EventRecorder::newEvent(const json& object, const std::string& type, const std::string& reason,
                             const std::string& message, const std::string& timestamp) const {
  const json meta = object.value("metadata", json::object());
  const std::string ns = meta.value("namespace", "default");
  const std::string name = meta.value("name", "");
  const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  json involved = {{"kind", object.value("kind", "Pod")},
                   {"namespace", ns},
                   {"name", name},
                   {"uid", meta.value("uid", "")},
                   {"apiVersion", object.value("apiVersion", "v1")},
                   {"resourceVersion", meta.value("resourceVersion", "")}};
  return {{"apiVersion", "v1"},
          {"kind", "Event"},
          {"metadata", {{"name", fmt::format("{}.{:x}", name, nanos)}, {"namespace", ns}}},
          {"involvedObject", involved},
          {"reason", reason},
          {"message", message},
          {"source", {{"component", component_}}},
          {"firstTimestamp", timestamp},
          {"lastTimestamp", timestamp},
          {"count", 1},
          {"type", type},
          {"reportingComponent", component_},
          {"reportingInstance", ""}};
}

void EventRecorder::record(const json& object, const std::string& type, const std::string& reason,
                           const std::string& message) {
  const std::string now = formatRfc3339(minik8s::Clock::now());
  const json meta = object.value("metadata", json::object());
  const std::string key = meta.value("namespace", "") + "/" + meta.value("name", "") + "/" +
                          meta.value("uid", "") + "/" + type + "/" + reason + "/" + message;
  std::unique_lock l(mu_);
  auto it = seen_.find(key);
  if (it != seen_.end()) {
    Seen seen = it->second;
    ++seen.count;
    it->second.count = seen.count;
    l.unlock();
    auto patched = client_.patch(client::resources::kEvents, seen.ns, seen.name,
                                 {{"count", seen.count}, {"lastTimestamp", now}});
    if (patched.ok()) return;
    if (patched.status().code() != 404) {
      LOG_WARN("cannot update event {}/{}: {}", seen.ns, seen.name, patched.status().message());
      return;
    }
    l.lock();
    seen_.erase(key);  // the Event was deleted (or expired): start a new one
  }
  if (seen_.size() >= kMaxRemembered) seen_.clear();
  l.unlock();
  json event = newEvent(object, type, reason, message, now);
  const std::string ns = event["metadata"]["namespace"];
  auto created = client_.create(client::resources::kEvents, ns, event);
  if (!created.ok()) {
    LOG_WARN("cannot create event {} for {}/{}: {}", reason, ns, meta.value("name", ""),
             created.status().message());
    return;
  }
  l.lock();
  seen_[key] = {ns, event["metadata"]["name"], 1};
}

}  // namespace minik8s::scheduler
