// EtcdStore: the Store on an etcd v3 cluster, spoken to over gRPC (KV and Watch services).
//
// Conditional writes are single etcd transactions: create = Txn(create_revision == 0, put);
// update = Txn(mod_revision == expected, put, else range) so a failure tells NotFound from
// Conflict; remove likewise with prev_kv. A watch is one bidirectional Watch stream with prev_kv
// starting at afterRevision + 1; a compacted start ends it with Expired.
//
// Endpoints are tried in the order given whenever one refuses the connection (gRPC UNAVAILABLE);
// the last one that answered is tried first next time. A write whose call failed in flight
// (writeNeverProposed() false: its member may have applied it) is sent again too; its compare
// then keeps it from applying twice, and a create or update refused after such a failure whose
// key holds exactly the value it wrote is reported as done, at that revision, not as
// AlreadyExists/Conflict for its own first attempt. (A remove refused after such a failure still
// says NotFound/Conflict.)
// compactedRevision() knows only compactions made or observed through this client.
//
// Thread-safety: all methods are thread-safe. Watch streams may outlive the store.
#pragma once

#include <memory>
#include <string>

#include "storage/store.h"

namespace minik8s::storage::etcd {

// Whether a write whose call failed with this gRPC status (code, message) certainly never reached
// a member: the channel could not connect, or the member refused it for want of a leader.
// Otherwise (a connection broken during the call, a proposal that timed out) it may have been
// applied.
bool writeNeverProposed(int grpcCode, const std::string& message);

class EtcdStore : public Store {
 public:
  // `endpoints` is "host:port[,host:port...]". Does not connect yet: the first call does.
  static Result<std::unique_ptr<EtcdStore>> open(const std::string& endpoints);
  ~EtcdStore() override;

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
  int64_t compactedRevision() override;

  struct Impl;

 private:
  explicit EtcdStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace minik8s::storage::etcd
