// SqliteConnection: one sqlite3 handle with a cache of prepared statements, and Statement, a
// scoped use of one cached statement (bind, step, read columns, reset on destruction).
//
// Internal to the SQLite backend. Not thread-safe: a connection is used by one thread at a time
// (SqliteStore guards its writer with a mutex and hands out reader connections from a pool).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

namespace minik8s::storage::sqlite {

class Statement {
 public:
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // Parameters are numbered from 1 as in SQLite. Text is bound as BLOB so that every key compares
  // bytewise (memcmp) with every other key.
  Statement& bind(int index, int64_t value);
  Statement& bind(int index, std::string_view bytes);

  // Advances to the next row: true when a row is available, false when done or on error (then
  // status() says why).
  bool step();
  const Status& status() const { return status_; }

  int64_t int64Column(int index) const;
  std::string blobColumn(int index) const;
  bool isNull(int index) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_;
  Status status_;
};

class SqliteConnection {
 public:
  // Opens (creating if needed) the database file and applies the pragmas every connection needs.
  static Result<std::unique_ptr<SqliteConnection>> open(const std::string& path, bool readOnly);
  SqliteConnection(const SqliteConnection&) = delete;
  SqliteConnection& operator=(const SqliteConnection&) = delete;
  ~SqliteConnection();

  // A prepared statement for `sql`, compiled once per connection and reused.
  Result<std::unique_ptr<Statement>> prepare(const std::string& sql);
  // Runs one or more statements that return no rows (schema, pragmas, BEGIN/COMMIT).
  Status exec(const std::string& sql);

  sqlite3* handle() { return db_; }

 private:
  explicit SqliteConnection(sqlite3* db) : db_(db) {}
  sqlite3* db_;
  std::map<std::string, sqlite3_stmt*, std::less<>> statements_;
};

}  // namespace minik8s::storage::sqlite
