#include "storage/sqlite/sqlite_store.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "storage/key_range.h"
#include "storage/sqlite/sqlite_connection.h"

namespace minik8s::storage::sqlite {

namespace {

constexpr char kSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS log (
  revision INTEGER PRIMARY KEY,
  key BLOB NOT NULL,
  create_revision INTEGER NOT NULL,
  prev_revision INTEGER NOT NULL,  -- modRevision before this write; 0 for a create
  deleted INTEGER NOT NULL,
  value BLOB,                      -- NULL for a delete
  prev_value BLOB                  -- NULL for a create
);
CREATE INDEX IF NOT EXISTS log_key_revision ON log(key, revision);
CREATE TABLE IF NOT EXISTS current (
  key BLOB PRIMARY KEY,
  value BLOB NOT NULL,
  create_revision INTEGER NOT NULL,
  mod_revision INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
)sql";

// The revision of a snapshot: the newest log row, or the compaction point if the log was
// compacted empty.
constexpr char kRevisionsSql[] =
    "SELECT max(ifnull((SELECT max(revision) FROM log), 0), "
    "ifnull((SELECT value FROM meta WHERE name = 'compact_revision'), 0)), "
    "ifnull((SELECT value FROM meta WHERE name = 'compact_revision'), 0)";

// At most this many events are read per watch next() so one call cannot hold a huge backlog.
constexpr int64_t kWatchBatch = 1000;
// The latest commits' events kept in memory for watch streams that are caught up (Shared::recent):
// at most this many bytes of them, and none older than kRecentAge once newer ones come.
constexpr size_t kRecentBytes = 1 << 20;
constexpr auto kRecentAge = std::chrono::seconds(1);
constexpr size_t kMaxIdleReaders = 8;
// WAL size (in pages) that wakes the background checkpointer, and the size at which the writer
// checkpoints itself because the background one is not keeping up.
constexpr int kCheckpointPages = 1000;
constexpr int kForcedCheckpointPages = 16000;

// "key >= ?1 AND key < ?2", or without the upper bound when the prefix has no end.
std::string keyRangeSql(const std::string& end, const std::string& column = "key") {
  return column + " >= ?1" + (end.empty() ? "" : " AND " + column + " < ?2");
}

Status notFound(const std::string& key) {
  return Status::NotFoundMessage("key \"" + key + "\" not found");
}
Status conflict(const std::string& key, int64_t expected, int64_t actual) {
  return Status::ConflictMessage("key \"" + key + "\" has revision " + std::to_string(actual) +
                                 ", expected " + std::to_string(expected));
}

struct WriteOp {
  enum class Kind { kCreate, kUpdate, kRemove, kCompact };
  Kind kind;
  const std::string& key;
  const std::string& value;
  int64_t expected = 0;  // update/remove: expected modRevision; compact: the revision
  // Results.
  Status status;
  int64_t revision = 0;
  KeyValue removed;
  bool done = false;
  // Its writer's wake-up (under Shared::queueMu): when the op is done, or when the op is first
  // in the queue and the leader's turn is free.
  std::condition_variable cv;
};

}  // namespace

struct SqliteStore::Shared {
  std::string path;

  // The writer connection; touched only by the current group-commit leader.
  std::unique_ptr<SqliteConnection> writer;

  // Group commit: writers queue here, one of them (the leader) applies the whole queue in one
  // transaction while the others wait, each on its op's own condition variable: the leader wakes
  // the writers of its batch and the first writer of the next one, not every waiting thread
  // (under 8 clients a notify_all per batch was 10% of the server's samples in futex calls).
  std::mutex queueMu;
  std::deque<WriteOp*> pending;
  bool leaderActive = false;

  // Checkpoints run on their own thread and connection so that no commit waits for the database
  // file's fsync; the writer only reports the WAL size after each commit.
  std::thread checkpointer;
  std::mutex checkpointMu;
  std::condition_variable checkpointCv;
  int walPages = 0;
  bool stopCheckpointer = false;

  void runCheckpointer(std::unique_ptr<SqliteConnection> conn);
  static int onWalCommit(void* self, sqlite3* db, const char* dbName, int pages);

  // Committed state, signalled to watchers.
  std::mutex revMu;
  std::condition_variable revCv;
  int64_t committedRev = 0;
  int64_t compactRev = 0;
  bool closed = false;
  // The events of the latest commits as they were written, one per revision, the last at
  // committedRev: a watch stream whose next revision is here copies its events from memory
  // instead of reading the log rows back (a SELECT and a copy of every value and previous value
  // out of SQLite, per event and stream). Bounded by kRecentBytes and kRecentAge; under revMu.
  struct Recent {
    std::shared_ptr<const WatchEvent> event;
    std::chrono::steady_clock::time_point at;
  };
  std::deque<Recent> recent;
  size_t recentBytes = 0;
  // Appends a commit's events (revisions following committedRev's) and drops what is too old.
  void rememberLocked(std::vector<std::shared_ptr<const WatchEvent>>& events);

  // Idle reader connections.
  std::mutex poolMu;
  std::vector<std::unique_ptr<SqliteConnection>> idleReaders;

  // A reader connection, returned to the pool when the lease ends.
  class ReaderLease {
   public:
    ReaderLease(Shared* shared, std::unique_ptr<SqliteConnection> conn)
        : shared_(shared), conn_(std::move(conn)) {}
    ReaderLease(ReaderLease&&) = default;
    ~ReaderLease() {
      if (!conn_) return;
      std::lock_guard lock(shared_->poolMu);
      if (shared_->idleReaders.size() < kMaxIdleReaders) {
        shared_->idleReaders.push_back(std::move(conn_));
      }
    }
    SqliteConnection* operator->() { return conn_.get(); }

   private:
    Shared* shared_;
    std::unique_ptr<SqliteConnection> conn_;
  };

  Result<ReaderLease> reader() {
    {
      std::lock_guard lock(poolMu);
      if (!idleReaders.empty()) {
        auto conn = std::move(idleReaders.back());
        idleReaders.pop_back();
        return ReaderLease(this, std::move(conn));
      }
    }
    auto conn = SqliteConnection::open(path, /*readOnly=*/true);
    if (!conn.ok()) return conn.status();
    // A reader's page cache is dropped whenever another connection has written since its last
    // read (WAL), and the file's pages are in the kernel's cache anyway: 512 KiB each (the
    // default is 2 MiB) keeps up to kMaxIdleReaders of them small.
    if (Status s = (*conn)->exec("PRAGMA cache_size=-512;"); !s.ok()) return s;
    return ReaderLease(this, std::move(conn).value());
  }

  Status submit(WriteOp& op);
  void applyBatch(const std::vector<WriteOp*>& batch);
  // Applies one operation inside the open transaction. A non-OK return is a database failure
  // that aborts the whole batch; a refused condition is reported in op.status instead.
  Status applyOne(WriteOp& op, int64_t& rev, int64_t& compactTo,
                  std::vector<std::shared_ptr<const WatchEvent>>& events);
};

namespace {
size_t eventBytes(const WatchEvent& ev) {
  return sizeof(WatchEvent) + ev.kv.key.size() + ev.kv.value.size() + ev.prevValue.size();
}
}  // namespace

void SqliteStore::Shared::rememberLocked(std::vector<std::shared_ptr<const WatchEvent>>& events) {
  const auto now = std::chrono::steady_clock::now();
  for (auto& ev : events) {
    recentBytes += eventBytes(*ev);
    recent.push_back({std::move(ev), now});
  }
  while (!recent.empty() && (recentBytes > kRecentBytes || now - recent.front().at > kRecentAge)) {
    recentBytes -= eventBytes(*recent.front().event);
    recent.pop_front();
  }
}

Status SqliteStore::Shared::submit(WriteOp& op) {
  std::unique_lock lock(queueMu);
  pending.push_back(&op);
  while (!op.done) {
    if (leaderActive) {
      op.cv.wait(lock);
      continue;
    }
    leaderActive = true;
    std::vector<WriteOp*> batch(pending.begin(), pending.end());
    pending.clear();
    lock.unlock();
    applyBatch(batch);
    lock.lock();
    for (WriteOp* o : batch) {
      o->done = true;
      if (o != &op) o->cv.notify_one();
    }
    leaderActive = false;
    if (!pending.empty()) pending.front()->cv.notify_one();  // the next leader
  }
  return op.status;
}

void SqliteStore::Shared::applyBatch(const std::vector<WriteOp*>& batch) {
  int64_t rev, compactTo;
  {
    std::lock_guard lock(revMu);
    rev = committedRev;  // only the leader changes it, so it is stable during the batch
    compactTo = compactRev;
  }
  auto failAll = [&](const Status& s) {
    writer->exec("ROLLBACK");
    for (WriteOp* o : batch) o->status = s;
  };
  Status s = writer->exec("BEGIN IMMEDIATE");
  if (!s.ok()) {
    for (WriteOp* o : batch) o->status = s;
    return;
  }
  std::vector<std::shared_ptr<const WatchEvent>> events;
  for (WriteOp* op : batch) {
    s = applyOne(*op, rev, compactTo, events);
    if (!s.ok()) return failAll(s);
  }
  s = writer->exec("COMMIT");
  if (!s.ok()) return failAll(s);
  std::lock_guard lock(revMu);
  rememberLocked(events);
  committedRev = rev;
  compactRev = compactTo;
  revCv.notify_all();
}

Status SqliteStore::Shared::applyOne(WriteOp& op, int64_t& rev, int64_t& compactTo,
                                     std::vector<std::shared_ptr<const WatchEvent>>& events) {
  if (op.kind == WriteOp::Kind::kCompact) {
    if (op.expected > rev) {
      op.status = Status::BadRequest("cannot compact at revision " + std::to_string(op.expected) +
                                     ": the current revision is " + std::to_string(rev));
      return Status::Ok();
    }
    if (op.expected <= compactTo) return Status::Ok();  // already compacted that far
    auto del = writer->prepare("DELETE FROM log WHERE revision <= ?1");
    if (!del.ok()) return del.status();
    (*del)->bind(1, op.expected).step();
    if (!(*del)->status().ok()) return (*del)->status();
    auto meta =
        writer->prepare("INSERT OR REPLACE INTO meta(name, value) VALUES ('compact_revision', ?1)");
    if (!meta.ok()) return meta.status();
    (*meta)->bind(1, op.expected).step();
    if (!(*meta)->status().ok()) return (*meta)->status();
    compactTo = op.expected;
    return Status::Ok();
  }

  auto cur =
      writer->prepare("SELECT value, create_revision, mod_revision FROM current WHERE key = ?1");
  if (!cur.ok()) return cur.status();
  Statement& q = **cur;
  q.bind(1, op.key);
  bool exists = q.step();
  if (!q.status().ok()) return q.status();
  std::string prevValue = exists ? q.blobColumn(0) : "";
  int64_t createRev = exists ? q.int64Column(1) : 0;
  int64_t prevRev = exists ? q.int64Column(2) : 0;
  cur->reset();

  if (op.kind == WriteOp::Kind::kCreate) {
    if (exists) {
      op.status = Status::AlreadyExists("key", op.key);
      return Status::Ok();
    }
  } else {
    if (!exists) {
      op.status = notFound(op.key);
      return Status::Ok();
    }
    if (op.expected != 0 && op.expected != prevRev) {
      op.status = conflict(op.key, op.expected, prevRev);
      return Status::Ok();
    }
  }

  const int64_t newRev = rev + 1;
  bool deleting = op.kind == WriteOp::Kind::kRemove;
  if (op.kind == WriteOp::Kind::kCreate) createRev = newRev;

  auto log = writer->prepare(
      "INSERT INTO log(revision, key, create_revision, prev_revision, deleted, value, prev_value) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  if (!log.ok()) return log.status();
  Statement& l = **log;
  l.bind(1, newRev).bind(2, op.key).bind(3, createRev).bind(4, prevRev).bind(5, deleting ? 1 : 0);
  if (!deleting) l.bind(6, op.value);
  if (exists) l.bind(7, prevValue);
  l.step();
  if (!l.status().ok()) return l.status();

  std::unique_ptr<Statement> change;
  if (deleting) {
    auto st = writer->prepare("DELETE FROM current WHERE key = ?1");
    if (!st.ok()) return st.status();
    change = std::move(st).value();
    change->bind(1, op.key);
  } else {
    auto st = writer->prepare(
        "INSERT OR REPLACE INTO current(key, value, create_revision, mod_revision) "
        "VALUES (?1, ?2, ?3, ?4)");
    if (!st.ok()) return st.status();
    change = std::move(st).value();
    change->bind(1, op.key).bind(2, op.value).bind(3, createRev).bind(4, newRev);
  }
  change->step();
  if (!change->status().ok()) return change->status();

  rev = newRev;
  op.revision = newRev;
  // The event as a watch stream reads it back from the log row.
  auto ev = std::make_shared<WatchEvent>();
  ev->kv.key = op.key;
  ev->kv.modRevision = newRev;
  if (deleting) {
    ev->type = WatchEvent::Type::kDelete;
  } else {
    ev->kv.value = op.value;
    ev->kv.createRevision = createRev;
  }
  if (exists) ev->prevValue = prevValue;
  events.push_back(std::move(ev));
  if (deleting) op.removed = KeyValue{op.key, std::move(prevValue), createRev, newRev};
  return Status::Ok();
}

int SqliteStore::Shared::onWalCommit(void* self, sqlite3* db, const char* dbName, int pages) {
  auto* shared = static_cast<Shared*>(self);
  if (pages >= kForcedCheckpointPages) {
    sqlite3_wal_checkpoint_v2(db, dbName, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
  } else if (pages >= kCheckpointPages) {
    std::lock_guard lock(shared->checkpointMu);
    shared->walPages = pages;
    shared->checkpointCv.notify_one();
  }
  return SQLITE_OK;
}

void SqliteStore::Shared::runCheckpointer(std::unique_ptr<SqliteConnection> conn) {
  std::unique_lock lock(checkpointMu);
  while (true) {
    checkpointCv.wait(lock, [&] { return stopCheckpointer || walPages >= kCheckpointPages; });
    if (stopCheckpointer) return;
    walPages = 0;
    lock.unlock();
    // PASSIVE: copies what it can without blocking readers or the writer; the writer then
    // restarts the WAL from its beginning, so the file stops growing.
    sqlite3_wal_checkpoint_v2(conn->handle(), nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
    lock.lock();
  }
}

// ---------------------------------------------------------------------------------------------

namespace {

class SqliteWatchStream : public WatchStream {
 public:
  SqliteWatchStream(std::shared_ptr<SqliteStore::Shared> shared, std::string prefix,
                    int64_t afterRevision)
      : shared_(std::move(shared)),
        prefix_(std::move(prefix)),
        end_(prefixEnd(prefix_)),
        lastRev_(afterRevision) {}

  Status next(std::vector<WatchEvent>& out, std::chrono::milliseconds timeout) override;

  void close() override {
    std::lock_guard lock(shared_->revMu);
    closed_ = true;
    shared_->revCv.notify_all();
  }

 private:
  Status readEvents(int64_t upTo, std::vector<WatchEvent>& out);

  std::shared_ptr<SqliteStore::Shared> shared_;
  const std::string prefix_;
  const std::string end_;
  int64_t lastRev_;      // every event up to this revision was delivered
  bool closed_ = false;  // guarded by shared_->revMu
  Status failure_;       // sticky: once failed, the stream stays failed
};

Status SqliteWatchStream::next(std::vector<WatchEvent>& out, std::chrono::milliseconds timeout) {
  if (!failure_.ok()) return failure_;
  int64_t upTo;
  {
    std::unique_lock lock(shared_->revMu);
    shared_->revCv.wait_for(lock, timeout, [&] {
      return closed_ || shared_->closed || shared_->committedRev > lastRev_;
    });
    if (closed_) return failure_ = Status::Unavailable("watch stream closed");
    if (shared_->closed) return failure_ = Status::Unavailable("store closed");
    upTo = shared_->committedRev;
    if (upTo <= lastRev_) return Status::Ok();
    // Caught up (the next revision is still in memory, nothing it needs compacted): the events
    // from memory, copied below without the lock.
    const auto& recent = shared_->recent;
    if (!recent.empty() && shared_->compactRev <= lastRev_ &&
        recent.front().event->kv.modRevision <= lastRev_ + 1) {
      std::vector<std::shared_ptr<const WatchEvent>> events;
      for (size_t i = lastRev_ + 1 - recent.front().event->kv.modRevision; i < recent.size(); ++i)
        events.push_back(recent[i].event);
      lock.unlock();
      for (const auto& ev : events) {
        const std::string& key = ev->kv.key;
        if (key >= prefix_ && (end_.empty() || key < end_)) out.push_back(*ev);  // as the SELECT
      }
      lastRev_ = upTo;
      return Status::Ok();
    }
  }
  Status s = readEvents(upTo, out);
  if (!s.ok()) failure_ = s;
  return s;
}

Status SqliteWatchStream::readEvents(int64_t upTo, std::vector<WatchEvent>& out) {
  auto conn = shared_->reader();
  if (!conn.ok()) return conn.status();
  // One read transaction, so the compaction point and the rows come from the same snapshot.
  Status s = (*conn)->exec("BEGIN");
  if (!s.ok()) return s;
  struct EndTxn {
    SqliteConnection* c;
    ~EndTxn() { c->exec("COMMIT"); }
  } endTxn{conn->operator->()};

  auto meta = (*conn)->prepare(kRevisionsSql);
  if (!meta.ok()) return meta.status();
  (*meta)->step();
  int64_t compacted = (*meta)->int64Column(1);
  if (!(*meta)->status().ok()) return (*meta)->status();
  meta->reset();
  if (compacted > lastRev_) {
    return Status::Expired("watch from revision " + std::to_string(lastRev_) +
                           " is too old: compacted at " + std::to_string(compacted));
  }

  auto rows = (*conn)->prepare(
      "SELECT revision, key, value, create_revision, deleted, prev_value FROM log WHERE " +
      keyRangeSql(end_) + " AND revision > ?3 AND revision <= ?4 ORDER BY revision LIMIT ?5");
  if (!rows.ok()) return rows.status();
  Statement& q = **rows;
  q.bind(1, prefix_);
  if (!end_.empty()) q.bind(2, end_);
  q.bind(3, lastRev_).bind(4, upTo).bind(5, kWatchBatch);
  int64_t count = 0, lastRow = lastRev_;
  while (q.step()) {
    WatchEvent ev;
    lastRow = q.int64Column(0);
    ev.kv.key = q.blobColumn(1);
    ev.kv.modRevision = lastRow;
    if (q.int64Column(4)) {
      ev.type = WatchEvent::Type::kDelete;
    } else {
      ev.type = WatchEvent::Type::kPut;
      ev.kv.value = q.blobColumn(2);
      ev.kv.createRevision = q.int64Column(3);
    }
    ev.prevValue = q.blobColumn(5);
    out.push_back(std::move(ev));
    ++count;
  }
  if (!q.status().ok()) return q.status();
  lastRev_ = count < kWatchBatch ? upTo : lastRow;
  return Status::Ok();
}

}  // namespace

// ---------------------------------------------------------------------------------------------

Result<std::unique_ptr<SqliteStore>> SqliteStore::open(const std::string& path) {
  auto shared = std::make_shared<Shared>();
  shared->path = path;
  auto writer = SqliteConnection::open(path, /*readOnly=*/false);
  if (!writer.ok()) return writer.status();
  shared->writer = std::move(writer).value();
  // WAL: readers never block the writer nor wait for its fsync. FULL: fsync the WAL on every
  // commit, so an acknowledged write survives power loss.
  // 8 KiB pages for a new database (an existing one keeps its size): a value up to ~2 KiB (a
  // typical object) stays in its b-tree page. With 4 KiB pages anything over ~1 KiB spills into
  // an overflow page of its own, so a LIST of 10,000 pods read 10,000 overflow pages, one pread
  // and one copy each, and SQLite assembled every value in a buffer before handing it out.
  Status s = shared->writer->exec(
      "PRAGMA page_size=8192; PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;");
  if (s.ok()) s = shared->writer->exec(kSchema);
  if (!s.ok()) return s;
  auto revs = shared->writer->prepare(kRevisionsSql);
  if (!revs.ok()) return revs.status();
  (*revs)->step();
  if (!(*revs)->status().ok()) return (*revs)->status();
  shared->committedRev = (*revs)->int64Column(0);
  shared->compactRev = (*revs)->int64Column(1);
  revs->reset();

  auto checkpointConn = SqliteConnection::open(path, /*readOnly=*/false);
  if (!checkpointConn.ok()) return checkpointConn.status();
  sqlite3_wal_hook(shared->writer->handle(), &Shared::onWalCommit, shared.get());
  shared->checkpointer =
      std::thread(&Shared::runCheckpointer, shared.get(), std::move(checkpointConn).value());
  return std::unique_ptr<SqliteStore>(new SqliteStore(std::move(shared)));
}

SqliteStore::~SqliteStore() {
  {
    std::lock_guard lock(shared_->checkpointMu);
    shared_->stopCheckpointer = true;
    shared_->checkpointCv.notify_one();
  }
  shared_->checkpointer.join();
  std::lock_guard lock(shared_->revMu);
  shared_->closed = true;
  shared_->revCv.notify_all();
}

Result<KeyValue> SqliteStore::get(const std::string& key) {
  auto conn = shared_->reader();
  if (!conn.ok()) return conn.status();
  auto st =
      (*conn)->prepare("SELECT value, create_revision, mod_revision FROM current WHERE key = ?1");
  if (!st.ok()) return st.status();
  Statement& q = **st;
  q.bind(1, key);
  if (!q.step()) return q.status().ok() ? notFound(key) : q.status();
  return KeyValue{key, q.blobColumn(0), q.int64Column(1), q.int64Column(2)};
}

Result<ListResult> SqliteStore::list(const std::string& prefix, int64_t revision, int64_t limit,
                                     const std::string& startKey) {
  if (revision < 0 || limit < 0) return Status::BadRequest("revision and limit must be >= 0");
  auto conn = shared_->reader();
  if (!conn.ok()) return conn.status();
  Status s = (*conn)->exec("BEGIN");
  if (!s.ok()) return s;
  struct EndTxn {
    SqliteConnection* c;
    ~EndTxn() { c->exec("COMMIT"); }
  } endTxn{conn->operator->()};

  auto revs = (*conn)->prepare(kRevisionsSql);
  if (!revs.ok()) return revs.status();
  (*revs)->step();
  if (!(*revs)->status().ok()) return (*revs)->status();
  const int64_t current = (*revs)->int64Column(0);
  const int64_t compacted = (*revs)->int64Column(1);
  revs->reset();
  if (revision > current) {
    return Status::BadRequest("revision " + std::to_string(revision) +
                              " is in the future: the current revision is " +
                              std::to_string(current));
  }
  if (revision != 0 && revision < compacted) {
    return Status::Expired("revision " + std::to_string(revision) +
                           " has been compacted; the oldest available is " +
                           std::to_string(compacted));
  }
  const bool past = revision != 0 && revision < current;
  const std::string end = prefixEnd(prefix);
  const std::string& from = std::max(prefix, startKey);

  std::string sql;
  if (!past) {
    sql = "SELECT key, value, create_revision, mod_revision FROM current WHERE " +
          keyRangeSql(end) + " ORDER BY key LIMIT ?4";
  } else {
    // The state at `revision`: current rows untouched since, plus, for every key written
    // since, the value its first later write replaced (unless that write created it).
    sql = "SELECT key, value, create_revision, mod_revision FROM current c WHERE " +
          keyRangeSql(end) +
          " AND NOT EXISTS (SELECT 1 FROM log l WHERE l.key = c.key AND l.revision > ?3)"
          " UNION ALL "
          "SELECT key, prev_value, create_revision, prev_revision FROM log l WHERE " +
          keyRangeSql(end) +
          " AND revision > ?3 AND prev_revision > 0 AND revision = "
          "(SELECT min(m.revision) FROM log m WHERE m.key = l.key AND m.revision > ?3)"
          " ORDER BY 1 LIMIT ?4";
  }
  auto st = (*conn)->prepare(sql);
  if (!st.ok()) return st.status();
  Statement& q = **st;
  q.bind(1, from);
  if (!end.empty()) q.bind(2, end);
  q.bind(3, revision).bind(4, limit > 0 ? limit + 1 : int64_t{-1});

  ListResult result;
  result.revision = revision != 0 ? revision : current;
  while (q.step()) {
    if (limit > 0 && static_cast<int64_t>(result.items.size()) == limit) {
      result.more = true;
      break;
    }
    result.items.push_back(
        KeyValue{q.blobColumn(0), q.blobColumn(1), q.int64Column(2), q.int64Column(3)});
  }
  if (!q.status().ok()) return q.status();
  return result;
}

Result<int64_t> SqliteStore::create(const std::string& key, const std::string& value) {
  WriteOp op{WriteOp::Kind::kCreate, key, value};
  Status s = shared_->submit(op);
  if (!s.ok()) return s;
  return op.revision;
}

Result<int64_t> SqliteStore::update(const std::string& key, const std::string& value,
                                    int64_t expectedRevision) {
  WriteOp op{WriteOp::Kind::kUpdate, key, value, expectedRevision};
  Status s = shared_->submit(op);
  if (!s.ok()) return s;
  return op.revision;
}

Result<KeyValue> SqliteStore::remove(const std::string& key, int64_t expectedRevision) {
  static const std::string kNoValue;
  WriteOp op{WriteOp::Kind::kRemove, key, kNoValue, expectedRevision};
  Status s = shared_->submit(op);
  if (!s.ok()) return s;
  return std::move(op.removed);
}

Result<std::unique_ptr<WatchStream>> SqliteStore::watch(const std::string& prefix,
                                                        int64_t afterRevision) {
  std::lock_guard lock(shared_->revMu);
  if (afterRevision == 0) afterRevision = shared_->committedRev;  // from now
  if (afterRevision < shared_->compactRev) {
    return Status::Expired("watch from revision " + std::to_string(afterRevision) +
                           " is too old: compacted at " + std::to_string(shared_->compactRev));
  }
  return std::unique_ptr<WatchStream>(
      std::make_unique<SqliteWatchStream>(shared_, prefix, afterRevision));
}

Result<int64_t> SqliteStore::currentRevision() {
  std::lock_guard lock(shared_->revMu);
  return shared_->committedRev;
}

Status SqliteStore::compact(int64_t revision) {
  static const std::string kNone;
  WriteOp op{WriteOp::Kind::kCompact, kNone, kNone, revision};
  return shared_->submit(op);
}

int64_t SqliteStore::compactedRevision() {
  std::lock_guard lock(shared_->revMu);
  return shared_->compactRev;
}

}  // namespace minik8s::storage::sqlite
