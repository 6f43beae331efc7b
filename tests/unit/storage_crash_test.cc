// SqliteStore durability: a write acknowledged to the caller survives SIGKILL of the process, and
// a reopened store continues the revision counter and remembers its compaction.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <thread>
#include <vector>

#include "storage/sqlite/sqlite_store.h"

namespace minik8s::storage::sqlite {
namespace {

using namespace std::chrono_literals;

std::string crashTempDir() {
  char tmpl[] = "/tmp/minik8s-storage-crash-XXXXXX";
  return ::mkdtemp(tmpl) ? std::string(tmpl) : std::string();
}

std::string keyOf(int64_t writer, int64_t i) {
  return "/registry/pods/w" + std::to_string(writer) + "/p" + std::to_string(i);
}
std::string valueOf(int64_t writer, int64_t i) {
  return "{\"writer\":" + std::to_string(writer) + ",\"i\":" + std::to_string(i) + "}";
}

// One acknowledged create, as the child reports it through the pipe (atomic: < PIPE_BUF).
struct Ack {
  int64_t writer, index, revision;
};

[[noreturn]] void runWriters(const std::string& path, int pipeFd) {
  auto store = SqliteStore::open(path);
  if (!store.ok()) ::_exit(2);
  std::vector<std::thread> writers;
  for (int64_t w = 0; w < 4; ++w) {  // several writers: acknowledgements come from group commits
    writers.emplace_back([&, w] {
      for (int64_t i = 0;; ++i) {
        auto rev = (*store)->create(keyOf(w, i), valueOf(w, i));
        if (!rev.ok()) ::_exit(3);
        Ack ack{w, i, *rev};
        if (::write(pipeFd, &ack, sizeof ack) != sizeof ack) ::_exit(4);
      }
    });
  }
  for (auto& t : writers) t.join();
  ::_exit(0);
}

TEST(SqliteCrashTest, AcknowledgedWritesSurviveSigkill) {
  const std::string dir = crashTempDir();
  ASSERT_FALSE(dir.empty());
  const std::string path = dir + "/state.db";
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(fds[0]);
    runWriters(path, fds[1]);
  }
  ::close(fds[1]);

  std::vector<Ack> acks;
  auto readAcks = [&](int timeoutMs) {
    Ack buf[256];
    pollfd p{fds[0], POLLIN, 0};
    if (::poll(&p, 1, timeoutMs) <= 0) return true;
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) return false;  // EOF: the child is gone
    EXPECT_EQ(n % static_cast<ssize_t>(sizeof(Ack)), 0);
    acks.insert(acks.end(), buf, buf + n / sizeof(Ack));
    return true;
  };
  const auto killAt = std::chrono::steady_clock::now() + 500ms;
  while (std::chrono::steady_clock::now() < killAt) readAcks(10);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << "the writer died on its own (exit " << WEXITSTATUS(status) << ")";
  while (readAcks(100)) {
  }
  ::close(fds[0]);
  ASSERT_GT(acks.size(), 20u) << "too few writes to say anything";

  auto store = SqliteStore::open(path);
  ASSERT_TRUE(store.ok()) << store.status().toString();
  int64_t lastAcked = 0;
  for (const Ack& a : acks) {
    auto kv = (*store)->get(keyOf(a.writer, a.index));
    ASSERT_TRUE(kv.ok()) << "acknowledged write lost: " << keyOf(a.writer, a.index);
    EXPECT_EQ(kv->value, valueOf(a.writer, a.index));
    EXPECT_EQ(kv->modRevision, a.revision);
    lastAcked = std::max(lastAcked, a.revision);
  }
  // Nothing is lost after the last acknowledgement either: revisions have no holes.
  auto all = (*store)->list("/registry/pods/");
  ASSERT_TRUE(all.ok());
  EXPECT_GE(*(*store)->currentRevision(), lastAcked);
  EXPECT_EQ(static_cast<int64_t>(all->items.size()), *(*store)->currentRevision());
  auto next = (*store)->create("/registry/after-crash", "x");
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(*next, *(*store)->currentRevision());
  EXPECT_GT(*next, lastAcked);
  std::filesystem::remove_all(dir);
}

TEST(SqliteStoreReopenTest, KeepsRevisionsCompactionAndHistory) {
  const std::string dir = crashTempDir();
  const std::string path = dir + "/state.db";
  int64_t r2 = 0, r3 = 0;
  {
    auto store = SqliteStore::open(path);
    ASSERT_TRUE(store.ok());
    int64_t r1 = *(*store)->create("/k/a", "1");
    r2 = *(*store)->update("/k/a", "2", r1);
    r3 = *(*store)->create("/k/b", "3");
    ASSERT_TRUE((*store)->compact(r2).ok());
  }
  auto store = SqliteStore::open(path);
  ASSERT_TRUE(store.ok());
  EXPECT_EQ(*(*store)->currentRevision(), r3);
  EXPECT_EQ((*store)->compactedRevision(), r2);
  EXPECT_EQ((*store)->list("/k/", r2 - 1).status().reason(), "Expired");
  auto atR2 = (*store)->list("/k/", r2);
  ASSERT_TRUE(atR2.ok());
  ASSERT_EQ(atR2->items.size(), 1u);
  EXPECT_EQ(atR2->items[0].value, "2");
  {
    auto w = (*store)->watch("/k/", r2);
    ASSERT_TRUE(w.ok());
    std::vector<WatchEvent> events;
    ASSERT_TRUE((*w)->next(events, 1s).ok());
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].kv.key, "/k/b");
  }
  EXPECT_EQ(*(*store)->create("/k/c", "4"), r3 + 1);

  // Compacting everything leaves an empty log; the revision must still not go back.
  ASSERT_TRUE((*store)->compact(r3 + 1).ok());
  store = Result<std::unique_ptr<SqliteStore>>(Status::Internal("closed"));
  auto again = SqliteStore::open(path);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*(*again)->currentRevision(), r3 + 1);
  EXPECT_EQ(*(*again)->create("/k/d", "5"), r3 + 2);
  std::filesystem::remove_all(dir);
}

int64_t pageSizeOf(const std::string& path) {
  sqlite3* db = nullptr;
  int64_t size = -1;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, "PRAGMA page_size", -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
      size = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return size;
}

// A new database has 8 KiB pages, so that a typical object is read from its b-tree page rather
// than from an overflow page of its own; a database made with 4 KiB pages keeps them and works.
TEST(SqliteStorePageSizeTest, NewDatabasesHaveLargerPagesOldOnesKeepTheirs) {
  const std::string dir = crashTempDir();
  std::vector<std::string> values;
  for (int i = 0; i < 3; ++i) values.push_back(std::string(1500 + 700 * i, 'a' + i));
  auto check = [&](SqliteStore& store) {
    for (size_t i = 0; i < values.size(); ++i) {
      ASSERT_TRUE(store.create("/k/" + std::to_string(i), values[i]).ok());
    }
    auto listed = store.list("/k/");
    ASSERT_TRUE(listed.ok());
    ASSERT_EQ(listed->items.size(), values.size());
    for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(listed->items[i].value, values[i]);
  };
  {
    auto store = SqliteStore::open(dir + "/new.db");
    ASSERT_TRUE(store.ok());
    check(**store);
  }
  EXPECT_EQ(pageSizeOf(dir + "/new.db"), 8192);

  const std::string old = dir + "/old.db";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(old.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA page_size=4096; VACUUM;", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  {
    auto store = SqliteStore::open(old);
    ASSERT_TRUE(store.ok());
    check(**store);
  }
  EXPECT_EQ(pageSizeOf(old), 4096);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace minik8s::storage::sqlite
