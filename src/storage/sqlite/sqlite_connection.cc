#include "storage/sqlite/sqlite_connection.h"

#include <mutex>

namespace minik8s::storage::sqlite {

namespace {
Status sqliteError(sqlite3* db, const std::string& what) {
  return Status::Internal("sqlite: " + what + ": " + sqlite3_errmsg(db));
}
}  // namespace

Statement::~Statement() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

Statement& Statement::bind(int index, int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
  return *this;
}

Statement& Statement::bind(int index, std::string_view bytes) {
  // A zero-length blob must not be bound as NULL: pass a valid pointer.
  static constexpr char kEmpty = 0;
  sqlite3_bind_blob64(stmt_, index, bytes.empty() ? &kEmpty : bytes.data(), bytes.size(),
                      SQLITE_TRANSIENT);
  return *this;
}

bool Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc != SQLITE_DONE) status_ = sqliteError(db_, "step");
  return false;
}

int64_t Statement::int64Column(int index) const { return sqlite3_column_int64(stmt_, index); }

std::string Statement::blobColumn(int index) const {
  const void* data = sqlite3_column_blob(stmt_, index);
  int size = sqlite3_column_bytes(stmt_, index);
  return data ? std::string(static_cast<const char*>(data), size) : std::string();
}

bool Statement::isNull(int index) const { return sqlite3_column_type(stmt_, index) == SQLITE_NULL; }

Result<std::unique_ptr<SqliteConnection>> SqliteConnection::open(const std::string& path,
                                                                 bool readOnly) {
  // Before SQLite's first use: no page-cache slab per connection. By default each connection
  // allocates room for 20 pages up front (170 KiB with 8 KiB pages): an idle server's
  // connections held 1.66 MiB, 0.66 MiB with pages allocated as they are read. (Refused,
  // harmlessly, if SQLite was initialised already.)
  static std::once_flag configured;
  std::call_once(configured, [] { sqlite3_config(SQLITE_CONFIG_PAGECACHE, nullptr, 0, 0); });
  sqlite3* db = nullptr;
  int flags = SQLITE_OPEN_NOMUTEX |
              (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (sqlite3_open_v2(path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    Status s = Status::Internal("sqlite: cannot open " + path + ": " +
                                (db ? sqlite3_errmsg(db) : "out of memory"));
    sqlite3_close(db);
    return s;
  }
  std::unique_ptr<SqliteConnection> conn(new SqliteConnection(db));
  // Another connection may hold the write lock briefly (checkpoints); wait instead of failing.
  sqlite3_busy_timeout(db, 10000);
  return conn;
}

SqliteConnection::~SqliteConnection() {
  for (auto& [sql, stmt] : statements_) sqlite3_finalize(stmt);
  sqlite3_close(db_);
}

Result<std::unique_ptr<Statement>> SqliteConnection::prepare(const std::string& sql) {
  auto it = statements_.find(sql);
  if (it == statements_.end()) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size()),
                           SQLITE_PREPARE_PERSISTENT, &stmt, nullptr) != SQLITE_OK) {
      return sqliteError(db_, "prepare \"" + sql + "\"");
    }
    it = statements_.emplace(sql, stmt).first;
  }
  return std::make_unique<Statement>(db_, it->second);
}

Status SqliteConnection::exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    return Status::Internal("sqlite: " + sql + ": " + msg);
  }
  return Status::Ok();
}

}  // namespace minik8s::storage::sqlite
