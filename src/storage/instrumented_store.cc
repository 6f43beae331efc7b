#include "storage/instrumented_store.h"

#include <chrono>
#include <cstring>

namespace minik8s::storage {

std::string_view storageResourceOf(std::string_view key, char* buf, size_t size) {
  constexpr std::string_view kRoot = "/registry/";
  if (key.substr(0, kRoot.size()) != kRoot) return {};
  std::string_view rest = key.substr(kRoot.size());
  size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return {};
  std::string_view group = rest.substr(0, slash);
  rest = rest.substr(slash + 1);
  std::string_view resource = rest.substr(0, rest.find('/'));
  if (resource.empty()) return {};
  if (group == "core") return resource;
  size_t n = resource.size() + 1 + group.size();
  if (n > size) return resource;
  std::memcpy(buf, resource.data(), resource.size());
  buf[resource.size()] = '.';
  std::memcpy(buf + resource.size() + 1, group.data(), group.size());
  return std::string_view(buf, n);
}

// Observes the time from its construction to its destruction.
class InstrumentedStore::Timer {
 public:
  Timer(InstrumentedStore& store, std::string_view operation, std::string_view key)
      : store_(store), operation_(operation), key_(key), start_(std::chrono::steady_clock::now()) {}
  ~Timer() {
    char buf[256];
    std::string_view type = storageResourceOf(key_, buf, sizeof buf);
    store_.duration_.with({operation_, type})
        .observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }

 private:
  InstrumentedStore& store_;
  std::string_view operation_, key_;
  std::chrono::steady_clock::time_point start_;
};

InstrumentedStore::InstrumentedStore(std::unique_ptr<Store> inner, metrics::Registry& registry)
    : inner_(std::move(inner)),
      duration_(registry.histogramVec(
          "etcd_request_duration_seconds",
          "Etcd request latency in seconds for each operation and object type.",
          {"operation", "type"}, {0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2,
                                  3,     4,     5,    6,   8,   10,  15,  20,  30,  45,   60})) {}

Result<KeyValue> InstrumentedStore::get(const std::string& key) {
  Timer t(*this, "get", key);
  return inner_->get(key);
}

Result<ListResult> InstrumentedStore::list(const std::string& prefix, int64_t revision,
                                           int64_t limit, const std::string& startKey) {
  Timer t(*this, "list", prefix);
  return inner_->list(prefix, revision, limit, startKey);
}

Result<int64_t> InstrumentedStore::create(const std::string& key, const std::string& value) {
  Timer t(*this, "create", key);
  return inner_->create(key, value);
}

Result<int64_t> InstrumentedStore::update(const std::string& key, const std::string& value,
                                          int64_t expectedRevision) {
  Timer t(*this, "update", key);
  return inner_->update(key, value, expectedRevision);
}

Result<KeyValue> InstrumentedStore::remove(const std::string& key, int64_t expectedRevision) {
  Timer t(*this, "delete", key);
  return inner_->remove(key, expectedRevision);
}

Result<std::unique_ptr<WatchStream>> InstrumentedStore::watch(const std::string& prefix,
                                                              int64_t afterRevision) {
  return inner_->watch(prefix, afterRevision);
}

Result<int64_t> InstrumentedStore::currentRevision() {
  Timer t(*this, "currentRevision", "");
  return inner_->currentRevision();
}

Status InstrumentedStore::compact(int64_t revision) {
  Timer t(*this, "compact", "");
  return inner_->compact(revision);
}

}  // namespace minik8s::storage
