#include "client/event_recorder.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/logging.h"

namespace minik8s::client {

namespace {

constexpr const char* kCombinedPrefix = "(combined from similar events): ";

std::string str(const json& obj, const char* field) {
  auto it = obj.find(field);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

// The involved object without its field path: events of one object share a rate limit and an
// aggregation window, as in Kubernetes.
std::string involvedKey(const json& ref) {
  return str(ref, "kind") + "/" + str(ref, "namespace") + "/" + str(ref, "name") + "/" +
         str(ref, "uid") + "/" + str(ref, "apiVersion");
}

template <typename Map>
void bound(Map& m, size_t max) {
  if (m.size() > max) m.clear();
}

}  // namespace

json objectReference(const json& object, const std::string& fieldPath) {
  // Tolerates malformed objects: an Event is never worth an exception.
  const json empty = json::object();
  const json& obj = object.is_object() ? object : empty;
  auto metaIt = obj.find("metadata");
  const json& meta = metaIt != obj.end() && metaIt->is_object() ? *metaIt : empty;
  auto text = [](const json& o, const char* field, const std::string& otherwise) {
    std::string s = str(o, field);
    return s.empty() ? otherwise : s;
  };
  json ref = {{"kind", text(obj, "kind", "Pod")},
              // Empty for a cluster-scoped object (a Node): `kubectl describe node` selects
              // involvedObject.namespace= (empty); the Event itself then lives in "default".
              {"namespace", str(meta, "namespace")},
              {"name", str(meta, "name")},
              {"uid", str(meta, "uid")},
              {"apiVersion", text(obj, "apiVersion", "v1")},
              {"resourceVersion", str(meta, "resourceVersion")}};
  if (!fieldPath.empty()) ref["fieldPath"] = fieldPath;
  return ref;
}

std::string containerFieldPath(const std::string& name, bool isInit) {
  return (isInit ? "spec.initContainers{" : "spec.containers{") + name + "}";
}

EventCorrelator::Decision EventCorrelator::observe(const Input& in, EventClock::time_point now) {
  Decision d;
  d.lastTimestamp = now;
  d.message = in.message;
  const std::string object = involvedKey(in.involvedObject);
  const std::string aggregateKey = object + "/" + in.type + "/" + in.reason;

  // Aggregation: too many different messages for one reason become one combined Event.
  bound(similar_, options_.maxRemembered);
  Similar& sim = similar_[aggregateKey];
  std::erase_if(sim.messages,
                [&](const auto& kv) { return now - kv.second > options_.aggregateWindow; });
  sim.messages[in.message] = now;
  if (sim.messages.size() >= options_.maxSimilarMessages) {
    d.key = aggregateKey;
    d.message = kCombinedPrefix + in.message;
  } else {
    d.key = aggregateKey + "/" + str(in.involvedObject, "fieldPath") + "/" + in.message;
  }

  // De-duplication: the same event again bumps the count of the first one.
  auto it = seen_.find(d.key);
  if (it != seen_.end()) {
    d.kind = Decision::kUpdate;
    d.count = ++it->second.count;
    d.firstTimestamp = it->second.first;
    return d;
  }

  // Rate limit of new Events per object (a token bucket).
  bound(buckets_, options_.maxRemembered);
  auto [b, fresh] = buckets_.try_emplace(object);
  if (fresh) {
    b->second.tokens = options_.burst;
  } else {
    double refill = std::chrono::duration<double>(now - b->second.last) /
                    std::chrono::duration<double>(options_.refillEvery);
    b->second.tokens = std::min(options_.burst, b->second.tokens + std::max(0.0, refill));
  }
  b->second.last = now;
  if (b->second.tokens < 1) {
    d.kind = Decision::kDrop;
    return d;
  }
  b->second.tokens -= 1;
  bound(seen_, options_.maxRemembered);
  seen_[d.key] = {1, now};
  d.kind = Decision::kCreate;
  d.count = 1;
  d.firstTimestamp = now;
  return d;
}

ApiEventRecorder::ApiEventRecorder(RestClient& client, ApiEventRecorderOptions options)
    : client_(client), options_(std::move(options)), correlator_(options_.correlator) {}

ApiEventRecorder::~ApiEventRecorder() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (writer_.joinable()) writer_.join();
}

void ApiEventRecorder::recordAt(const json& object, const std::string& fieldPath,
                                const std::string& type, const std::string& reason,
                                const std::string& message) {
  json ref = objectReference(object, fieldPath);
  LOG_DEBUG("event {} {} {} {}/{}: {}", type, reason, str(ref, "kind"), str(ref, "namespace"),
            str(ref, "name"), message);
  const EventClock::time_point at = options_.now();
  std::lock_guard lock(mu_);
  if (stopping_ || queue_.size() >= options_.maxQueued) return;
  queue_.push_back({{std::move(ref), type, reason, message}, at});
  // The writer starts with the first record: most of a server's 17 recorders (one per
  // controller) never record anything on a quiet cluster, and each thread is a stack.
  if (!writer_.joinable()) writer_ = std::thread([this] { writerLoop(); });
  cv_.notify_all();
}

json ApiEventRecorder::newEvent(const EventCorrelator::Input& in,
                                const EventCorrelator::Decision& d) const {
  std::string ns = str(in.involvedObject, "namespace");
  if (ns.empty()) ns = "default";
  // Named by the real time, as client-go does: `options_.now` may be a fake clock.
  const auto nanos =
      std::chrono::duration_cast<std::chrono::nanoseconds>(EventClock::now().time_since_epoch())
          .count();
  json source = {{"component", options_.component}};
  if (!options_.host.empty()) source["host"] = options_.host;
  return {{"apiVersion", "v1"},
          {"kind", "Event"},
          {"metadata",
           {{"name", fmt::format("{}.{:x}", str(in.involvedObject, "name"), nanos)},
            {"namespace", ns}}},
          {"involvedObject", in.involvedObject},
          {"reason", in.reason},
          {"message", d.message},
          {"source", source},
          {"firstTimestamp", formatRfc3339(d.firstTimestamp)},
          {"lastTimestamp", formatRfc3339(d.lastTimestamp)},
          {"count", d.count},
          {"type", in.type},
          {"eventTime", nullptr},
          {"reportingComponent", options_.component},
          {"reportingInstance", options_.host}};
}

void ApiEventRecorder::create(Written& w, const EventCorrelator::Decision& d) {
  json event = newEvent(w.input, d);
  w.ns = event["metadata"]["namespace"];
  auto created = client_.create(resources::kEvents, w.ns, event);
  // The same nanosecond (a fake clock, or two recorders): another name.
  for (int i = 1; i <= 3 && !created.ok() && created.status().code() == 409; ++i) {
    event["metadata"]["name"] =
        fmt::format("{}.{}", event["metadata"]["name"].get<std::string>(), i);
    created = client_.create(resources::kEvents, w.ns, event);
  }
  if (!created.ok()) {
    LOG_WARN("cannot create event {} for {}/{}: {}", w.input.reason, w.ns,
             str(w.input.involvedObject, "name"), created.status().message());
    w.name.clear();
    return;
  }
  w.name = event["metadata"]["name"];
  w.count = w.pendingCount = d.count;
  w.writtenAt = std::chrono::steady_clock::now();
}

void ApiEventRecorder::process(const Queued& q) {
  EventCorrelator::Decision d = correlator_.observe(q.input, q.at);
  if (d.kind == EventCorrelator::Decision::kDrop) {
    LOG_DEBUG("event {} for {} dropped by the rate limit", q.input.reason,
              str(q.input.involvedObject, "name"));
    return;
  }
  auto it = written_.find(d.key);
  if (d.kind == EventCorrelator::Decision::kCreate || it == written_.end() ||
      it->second.name.empty()) {
    bound(written_, options_.correlator.maxRemembered);
    Written& w = written_[d.key];
    w.input = q.input;
    w.firstTimestamp = d.firstTimestamp;
    w.pendingMessage = d.message;
    w.pendingLast = d.lastTimestamp;
    create(w, d);
    return;
  }
  Written& w = it->second;
  w.pendingCount = d.count;
  w.pendingMessage = d.message;
  w.pendingLast = d.lastTimestamp;
}

void ApiEventRecorder::writePending(bool all) {
  const auto now = std::chrono::steady_clock::now();
  for (auto& [key, w] : written_) {
    if (w.name.empty() || w.pendingCount <= w.count) continue;
    if (!all && now - w.writtenAt < options_.updateInterval) continue;
    json patch = {{"count", w.pendingCount},
                  {"lastTimestamp", formatRfc3339(w.pendingLast)},
                  {"message", w.pendingMessage}};
    auto patched = client_.patch(resources::kEvents, w.ns, w.name, patch);
    if (patched.ok()) {
      w.count = w.pendingCount;
      w.writtenAt = now;
      continue;
    }
    if (patched.status().code() != 404) {
      LOG_WARN("cannot update event {}/{}: {}", w.ns, w.name, patched.status().message());
      w.writtenAt = now;  // try again after the interval
      continue;
    }
    // The Event expired or was deleted: start it again with what we know.
    EventCorrelator::Decision d;
    d.count = w.pendingCount;
    d.message = w.pendingMessage;
    d.firstTimestamp = w.firstTimestamp;
    d.lastTimestamp = w.pendingLast;
    create(w, d);
  }
}

void ApiEventRecorder::flush() {
  std::lock_guard write(writeMu_);
  std::deque<Queued> batch;
  {
    std::lock_guard lock(mu_);
    batch.swap(queue_);
  }
  for (const auto& q : batch) process(q);
  writePending(true);
}

void ApiEventRecorder::writerLoop() {
  const auto tick = std::max<std::chrono::milliseconds>(std::chrono::milliseconds(50),
                                                        options_.updateInterval / 4);
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait_for(lock, tick, [this] { return stopping_ || !queue_.empty(); });
    lock.unlock();
    bool stop = false;
    {
      // writeMu_ before the queue (the order flush() takes them in): a flush() that starts
      // now waits until this batch is written instead of finding the queue already empty.
      std::lock_guard write(writeMu_);
      std::deque<Queued> batch;
      {
        std::lock_guard queued(mu_);
        stop = stopping_;
        batch.swap(queue_);
      }
      for (const auto& q : batch) process(q);
      writePending(stop);
    }
    lock.lock();
    if (stop && queue_.empty()) return;
  }
}

void FakeEventRecorder::recordAt(const json& object, const std::string& fieldPath,
                                 const std::string& type, const std::string& reason,
                                 const std::string& message) {
  std::lock_guard lock(mu_);
  events_.push_back({objectReference(object, fieldPath), type, reason, message});
}

std::vector<FakeEventRecorder::Recorded> FakeEventRecorder::events() const {
  std::lock_guard lock(mu_);
  return events_;
}

std::vector<std::string> FakeEventRecorder::reasons() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& e : events_) out.push_back(e.reason);
  return out;
}

std::optional<FakeEventRecorder::Recorded> FakeEventRecorder::find(
    const std::string& reason) const {
  std::lock_guard lock(mu_);
  for (const auto& e : events_) {
    if (e.reason == reason) return e;
  }
  return std::nullopt;
}

void FakeEventRecorder::clear() {
  std::lock_guard lock(mu_);
  events_.clear();
}

}  // namespace minik8s::client
