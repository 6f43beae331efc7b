// Store: the revisioned key-value store every API object lives in.
//
// Keys are strings such as "/registry/apps/deployments/default/web"; values are opaque bytes
// (the API server stores compact JSON). Every successful write gets a new revision from one
// monotonic counter per store; a key's modRevision is the revision of its last write and is what
// the API server exposes as metadata.resourceVersion. Writes are conditional (create-if-absent,
// update/delete-if-revision) so no update is ever lost. A watch streams every change with a
// revision greater than the one asked for, in revision order, until it is closed; asking for a
// revision older than the last compaction fails with Status::Expired (HTTP 410).
//
// Implementations: sqlite::SqliteStore (embedded default) and etcd::EtcdStore (etcd v3).
// All methods are thread-safe. Both pass tests/unit/storage_conformance_test.cc.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace minik8s::storage {

struct KeyValue {
  std::string key;
  std::string value;
  int64_t createRevision = 0;
  int64_t modRevision = 0;
};

struct ListResult {
  std::vector<KeyValue> items;  // sorted by key
  int64_t revision = 0;         // the store revision the list was read at
  bool more = false;            // true when `limit` cut the list; continue after items.back().key
};

struct WatchEvent {
  enum class Type { kPut, kDelete };
  Type type = Type::kPut;
  KeyValue kv;          // for kPut: the new value; for kDelete: key and revision of the delete
  std::string prevValue;  // the value before this event ("" for a create)
  bool isCreate() const { return type == Type::kPut && kv.createRevision == kv.modRevision; }
};

// A stream of changes under a prefix. next() blocks up to `timeout` and appends the events that
// arrived (possibly none). When the stream fails (compacted past, store closed, connection lost)
// next() returns the failure; the caller then re-lists or gives up.
class WatchStream {
 public:
  virtual ~WatchStream() = default;
  virtual Status next(std::vector<WatchEvent>& out, std::chrono::milliseconds timeout) = 0;
  // Ends the stream; a next() blocked in another thread returns promptly.
  virtual void close() = 0;
};

class Store {
 public:
  virtual ~Store() = default;

  // NotFound when absent.
  virtual Result<KeyValue> get(const std::string& key) = 0;

  // Keys with the given prefix, sorted, starting at `startKey` (inclusive; "" = from the start),
  // at most `limit` (0 = all). `revision` 0 reads the latest; a positive revision reads the state
  // at that revision (Expired if compacted, BadRequest if in the future). Backends that cannot read
  // the past may answer Expired for any revision other than the current one.
  virtual Result<ListResult> list(const std::string& prefix, int64_t revision = 0,
                                  int64_t limit = 0, const std::string& startKey = "") = 0;

  // AlreadyExists when the key is present. Returns the new revision.
  virtual Result<int64_t> create(const std::string& key, const std::string& value) = 0;

  // Replaces the value if the key's modRevision equals `expectedRevision` (0 = any revision).
  // NotFound when absent, Conflict when the revision differs. Returns the new revision.
  virtual Result<int64_t> update(const std::string& key, const std::string& value,
                                 int64_t expectedRevision) = 0;

  // Deletes the key if its modRevision equals `expectedRevision` (0 = any). Returns the deleted
  // key-value as it was, with modRevision set to the revision of the delete itself.
  virtual Result<KeyValue> remove(const std::string& key, int64_t expectedRevision) = 0;

  // Changes under `prefix` with revision > `afterRevision`. Expired when `afterRevision` is older
  // than the compacted revision. `afterRevision` 0 means "from now" (the current revision).
  virtual Result<std::unique_ptr<WatchStream>> watch(const std::string& prefix,
                                                     int64_t afterRevision) = 0;

  // The latest revision of the store.
  virtual Result<int64_t> currentRevision() = 0;

  // Forgets history at and below `revision`; later reads/watches of older revisions get Expired.
  virtual Status compact(int64_t revision) = 0;
  virtual int64_t compactedRevision() = 0;
};

// Opens a store from a datastore URL:
//   "sqlite:///var/lib/minik8s/state.db" (or a bare path) -> SQLite
//   "etcd://127.0.0.1:2379[,host:port...]"               -> etcd v3
Result<std::unique_ptr<Store>> openStore(const std::string& url);

}  // namespace minik8s::storage
