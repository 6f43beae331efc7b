// InstrumentedStore: a Store that times every request of the Store it wraps into
// etcd_request_duration_seconds{operation,type} (kube-apiserver's name, whichever the backend):
// operation get, list, create, update, delete, currentRevision, compact; type the resource of the
// key ("pods", "deployments.apps"; "" for keys outside /registry/<group>/<resource>/).
// openStore() wraps every store it opens. Watches are not timed (they last). Thread-safe as the
// wrapped store.
#pragma once

#include <memory>

#include "common/metrics.h"
#include "storage/store.h"

namespace minik8s::storage {

class InstrumentedStore : public Store {
 public:
  explicit InstrumentedStore(std::unique_ptr<Store> inner,
                             metrics::Registry& registry = metrics::defaultRegistry());

  Result<KeyValue> get(const std::string& key) override;
  Result<ListResult> list(const std::string& prefix, int64_t revision = 0, int64_t limit = 0,
                          const std::string& startKey = "") override;
  Result<int64_t> create(const std::string& key, const std::string& value) override;
  Result<int64_t> update(const std::string& key, const std::string& value,
                         int64_t expectedRevision) override;
  Result<KeyValue> remove(const std::string& key, int64_t expectedRevision) override;
  Result<std::unique_ptr<WatchStream>> watch(const std::string& prefix,
                                             int64_t afterRevision) override;
  Result<int64_t> currentRevision() override;
  Status compact(int64_t revision) override;
  int64_t compactedRevision() override { return inner_->compactedRevision(); }

  Store& inner() { return *inner_; }

 private:
  class Timer;
  std::unique_ptr<Store> inner_;
  metrics::HistogramVec& duration_;
};

// "/registry/core/pods/default/web" -> "pods", "/registry/apps/deployments/..." ->
// "deployments.apps", anything else -> "". Writes into `buf` (no allocation) and returns a view.
std::string_view storageResourceOf(std::string_view key, char* buf, size_t size);

}  // namespace minik8s::storage
