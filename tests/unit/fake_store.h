// An in-memory Store for unit tests of the layers above storage: same contract as the real
// backends (revisions, conditional writes, watch from a revision, compaction), no disk.
#pragma once

#include <condition_variable>
#include <map>
#include <mutex>

#include "storage/store.h"

namespace minik8s::testing {

class FakeStore : public storage::Store {
 public:
  Result<storage::KeyValue> get(const std::string& key) override {
    std::lock_guard lock(mu_);
    auto it = data_.find(key);
    if (it == data_.end()) return Status::NotFound("keys", key);
    return it->second;
  }

  Result<storage::ListResult> list(const std::string& prefix, int64_t revision, int64_t limit,
                                   const std::string& startKey) override {
    std::lock_guard lock(mu_);
    if (revision != 0 && revision != rev_) return Status::Expired("fake store has no history");
    storage::ListResult out;
    out.revision = rev_;
    for (auto it = data_.lower_bound(std::max(prefix, startKey)); it != data_.end(); ++it) {
      if (it->first.compare(0, prefix.size(), prefix) != 0) break;
      if (limit > 0 && static_cast<int64_t>(out.items.size()) == limit) {
        out.more = true;
        break;
      }
      out.items.push_back(it->second);
    }
    return out;
  }

  Result<int64_t> create(const std::string& key, const std::string& value) override {
    std::lock_guard lock(mu_);
    if (data_.count(key)) return Status::AlreadyExists("keys", key);
    storage::KeyValue kv{key, value, ++rev_, rev_};
    data_[key] = kv;
    record({storage::WatchEvent::Type::kPut, kv, ""});
    return rev_;
  }

  Result<int64_t> update(const std::string& key, const std::string& value,
                         int64_t expected) override {
    std::lock_guard lock(mu_);
    auto it = data_.find(key);
    if (it == data_.end()) return Status::NotFound("keys", key);
    if (expected != 0 && it->second.modRevision != expected) return Status::Conflict("keys", key);
    std::string prev = it->second.value;
    it->second.value = value;
    it->second.modRevision = ++rev_;
    record({storage::WatchEvent::Type::kPut, it->second, prev});
    return rev_;
  }

  Result<storage::KeyValue> remove(const std::string& key, int64_t expected) override {
    std::lock_guard lock(mu_);
    auto it = data_.find(key);
    if (it == data_.end()) return Status::NotFound("keys", key);
    if (expected != 0 && it->second.modRevision != expected) return Status::Conflict("keys", key);
    storage::KeyValue kv = it->second;
    data_.erase(it);
    kv.modRevision = ++rev_;
    storage::KeyValue delKv{key, "", kv.createRevision, rev_};
    record({storage::WatchEvent::Type::kDelete, delKv, kv.value});
    return kv;
  }

  class Stream : public storage::WatchStream {
   public:
    Stream(FakeStore* s, std::string prefix, int64_t after)
        : store_(s), prefix_(std::move(prefix)), next_(after) {}
    Status next(std::vector<storage::WatchEvent>& out, std::chrono::milliseconds timeout) override {
      std::unique_lock lock(store_->mu_);
      store_->cv_.wait_for(lock, timeout, [&] { return closed_ || store_->rev_ > next_; });
      for (const auto& ev : store_->log_) {
        if (ev.kv.modRevision > next_ && ev.kv.key.compare(0, prefix_.size(), prefix_) == 0) {
          out.push_back(ev);
        }
      }
      next_ = store_->rev_;
      return closed_ ? Status::Gone("closed") : Status::Ok();
    }
    void close() override {
      std::lock_guard lock(store_->mu_);
      closed_ = true;
      store_->cv_.notify_all();
    }

   private:
    FakeStore* store_;
    std::string prefix_;
    int64_t next_;
    bool closed_ = false;
  };

  Result<std::unique_ptr<storage::WatchStream>> watch(const std::string& prefix,
                                                      int64_t after) override {
    std::lock_guard lock(mu_);
    if (after < compacted_) return Status::Expired("compacted");
    return std::unique_ptr<storage::WatchStream>(new Stream(this, prefix, after));
  }
  Result<int64_t> currentRevision() override {
    std::lock_guard lock(mu_);
    return rev_;
  }
  Status compact(int64_t revision) override {
    std::lock_guard lock(mu_);
    compacted_ = revision;
    std::erase_if(log_, [&](const auto& ev) { return ev.kv.modRevision <= revision; });
    return Status::Ok();
  }
  int64_t compactedRevision() override {
    std::lock_guard lock(mu_);
    return compacted_;
  }

 private:
  void record(storage::WatchEvent ev) {
    log_.push_back(std::move(ev));
    cv_.notify_all();
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, storage::KeyValue> data_;
  std::vector<storage::WatchEvent> log_;
  int64_t rev_ = 0;
  int64_t compacted_ = 0;
};

}  // namespace minik8s::testing
