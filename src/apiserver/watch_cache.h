// WatchCache: one store watch that feeds every API watch client.
//
// A single background thread reads the store's change stream from the revision at start, decodes
// each value once into a shared immutable JSON object and keeps the last `capacity` events in a
// ring. A watcher asks for events under a key prefix after a revision: it is served from the ring
// when the ring reaches back that far, otherwise from its own store watch (so resuming from an
// older revision works until compaction, then fails with Expired/410). Each watcher has its own
// bounded queue: a slow client never blocks the cache or other clients; one that falls more than
// `maxQueue` events behind is terminated with Expired and re-lists, as client-go does.
// Thread-safe.
#pragma once

#include <condition_variable>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "storage/store.h"

namespace minik8s::apiserver {

// The JSON text of an event's object as a watch sends it (the stored object with its apiVersion
// and kind), made by the first watcher that needs it and shared by all the others: one event
// to N watchers is encoded once, not N times. Thread-safe.
class EncodedObject {
 public:
  // The text for `object` labelled apiVersion/kind; nullptr when it was already made with
  // another apiVersion or kind (the caller then encodes its own). It is written from
  // `storedText`, the text `object` decodes from, with `revision` as its resourceVersion
  // (stored_json.h), when that text is of the stored shape; otherwise `object` is encoded.
  const std::string* get(const json& object, const std::string* storedText, int64_t revision,
                         const std::string& apiVersion, const std::string& kind);

 private:
  std::once_flag once_;
  std::string apiVersion_, kind_, text_;
};

struct CachedEvent {
  enum class Type { kAdded, kModified, kDeleted };
  Type type = Type::kAdded;
  int64_t revision = 0;
  std::string key;
  std::shared_ptr<const json> object;      // with metadata.resourceVersion set
  std::shared_ptr<const json> prevObject;  // null for kAdded
  std::shared_ptr<EncodedObject> encoded;  // `object`'s text, shared by every watcher
  // The stored texts `object` and `prevObject` decode from. Only the latest kDecodedWindow events
  // of the ring keep their decoded objects (a tree is ~10x its text: 10,000 pods in the ring held
  // ~120 MiB of trees); older ones keep these, and Watcher::next decodes them again for the
  // watcher resuming that far back.
  std::shared_ptr<const std::string> text, prevText;
};

// Decodes a store event; the object's resourceVersion is the event's revision. With
// `decode` false only its texts are kept (decodeCachedEvent decodes them later).
CachedEvent toCachedEvent(const storage::WatchEvent& ev, bool decode = true);

class WatchCache;

// How many of the latest events in the ring keep their shared encoding (older ones, sent only to
// a watcher resuming from far back, are encoded by that watcher).
inline constexpr size_t kEncodedWindow = 1024;
// How many of the latest events in the ring keep their decoded objects.
inline constexpr size_t kDecodedWindow = kEncodedWindow;

// Decodes the objects of an event that kept only its texts (no-op when decoded).
void decodeCachedEvent(CachedEvent& ev);

class Watcher {
 public:
  ~Watcher();
  // Waits up to `timeout` for events (0: takes what is queued, without waiting); returns a failure
  // Status once the watcher is terminated.
  Status next(std::vector<CachedEvent>& out, std::chrono::milliseconds timeout);
  void stop();

 private:
  friend class WatchCache;
  WatchCache* cache_ = nullptr;
  std::string prefix_;
  int64_t afterRevision_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<CachedEvent> queue_;
  Status failure_;
  bool stopped_ = false;
  std::unique_ptr<storage::WatchStream> direct_;  // for revisions older than the ring
};

class WatchCache {
 public:
  WatchCache(storage::Store& store, size_t capacity = 20000, size_t maxQueue = 20000);
  ~WatchCache();

  Status start();
  void stop();

  // Events for keys starting with `prefix` with revision > afterRevision.
  Result<std::shared_ptr<Watcher>> watch(const std::string& prefix, int64_t afterRevision);
  int64_t latestRevision() const;

 private:
  friend class Watcher;
  void run();
  void unregister(Watcher* w);
  void deliver(const std::vector<CachedEvent>& events);
  // Gives `ev` the previous event's text and decoded object for its key when its previous text is
  // that one (a key's events otherwise hold each version twice: as one event's text and the next
  // one's prevText), then decodes what it still lacks. Run thread only.
  void shareWithPrevious(CachedEvent& ev);
  // Forgets the key of an event leaving the ring when it was the key's latest. Run thread only.
  void forgetIfLatest(const CachedEvent& ev);

  storage::Store& store_;
  size_t capacity_, maxQueue_;
  mutable std::mutex mu_;
  std::deque<CachedEvent> ring_;
  int64_t horizon_ = 0;  // the oldest afterRevision the ring can serve
  int64_t latest_ = 0;   // last revision seen
  std::list<Watcher*> watchers_;
  std::thread thread_;
  std::unique_ptr<storage::WatchStream> stream_;
  bool stopping_ = false;
  // The latest event of each key in the ring (its text and decoded object while something holds
  // them), for shareWithPrevious. Run thread only.
  struct Latest {
    std::weak_ptr<const std::string> text;
    std::weak_ptr<const json> object;
  };
  std::unordered_map<std::string, Latest> latestByKey_;
};

}  // namespace minik8s::apiserver
