// SqliteStore: the embedded default Store, one SQLite database file (like k3s's kine).
//
// Every write appends a row to a `log` table (revision, key, value, create revision, previous
// revision and value, deleted flag) and updates a `current` table that indexes the latest value
// of each key. The log makes list-at-a-past-revision (current state, undone by the log rows
// after that revision) and watch-from-a-revision possible; compact(r) deletes log rows at or
// below r and records r. The database runs in WAL mode with synchronous=FULL: a write is
// acknowledged only after it is durable (it survives SIGKILL and power loss).
//
// Writers are serialised on one connection; concurrent writers are grouped into one transaction
// (group commit), each still getting its own revision and its own conditional check, so one
// fsync serves many writes. Readers use a small pool of separate connections and never wait for
// a write to reach the disk. Watchers wait on a condition variable signalled after each commit
// and read new log rows in revision order.
//
// Thread-safety: all methods are thread-safe. Watch streams may outlive the store; after the
// store is destroyed their next() fails with Unavailable.
#pragma once

#include <memory>
#include <string>

#include "storage/store.h"

namespace minik8s::storage::sqlite {

class SqliteStore : public Store {
 public:
  // Opens or creates the database at `path` (an absolute or relative file path).
  static Result<std::unique_ptr<SqliteStore>> open(const std::string& path);
  ~SqliteStore() override;

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

  struct Shared;  // state shared with watch streams; defined in the .cc

 private:
  explicit SqliteStore(std::shared_ptr<Shared> shared) : shared_(std::move(shared)) {}
  std::shared_ptr<Shared> shared_;
};

}  // namespace minik8s::storage::sqlite
