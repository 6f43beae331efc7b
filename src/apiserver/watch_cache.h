// WatchCache: one store watch that feeds every API watch client.
//
// A single background thread reads the store's change stream from the revision at start and keeps
// the last `capacity` events in a ring, as the stored texts (each version once, shared by every
// watcher; decoded only where a watcher needs the object). A watcher asks for events under a key
// prefix after a revision: it is served from the ring when the ring reaches back that far,
// otherwise from its own store watch (so resuming from an older revision works until compaction,
// then fails with Expired/410). Each watcher has its own bounded queue: a slow client never blocks
// the cache or other clients; one that falls more than `maxQueue` events behind is terminated with
// Expired and re-lists, as client-go does. Thread-safe.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "api/field_selector.h"
#include "storage/store.h"

namespace minik8s::apiserver {

// The JSON text of an event's object as a watch sends it (the stored object with its apiVersion
// and kind), made by the first watcher that needs it and shared by all the others: one event
// to N watchers is encoded once, not N times. Thread-safe.
class EncodedObject {
 public:
  // The text for the object of `storedText` labelled apiVersion/kind, with `revision` as its
  // resourceVersion (stored_json.h; a text not of the stored shape is decoded and encoded again);
  // nullptr when it was already made with another apiVersion or kind (the caller then encodes
  // its own).
  const std::string* get(const std::string& storedText, int64_t revision,
                         const std::string& apiVersion, const std::string& kind);

 private:
  std::once_flag once_;
  std::string apiVersion_, kind_, text_;
};

// What a watch's selectors read of one version of an object: its labels and the fields its kind
// can be selected on (Kubernetes' GetAttrs). Taken from the stored text by the first watcher with
// a selector and shared by every other: a decoded tree is ~10x its text, these a few hundred
// bytes, and a watch without selectors decodes nothing. Thread-safe.
class ObjectAttributes {
 public:
  struct Values {
    json labels;  // metadata.labels; null when none
    api::FieldSet fields;
  };
  explicit ObjectAttributes(std::shared_ptr<const std::string> text) : text_(std::move(text)) {}
  // The values for an object of `kind`; shared when made for that kind, else made anew.
  std::shared_ptr<const Values> get(const std::string& kind);

 private:
  std::once_flag once_;
  std::shared_ptr<const std::string> text_;  // the one its events hold
  std::string kind_;
  std::shared_ptr<const Values> values_;
};

struct CachedEvent {
  enum class Type { kAdded, kModified, kDeleted };
  Type type = Type::kAdded;
  int64_t revision = 0;
  std::string key;
  // The stored texts of the object and of its previous version (null for kAdded; a deletion's
  // text is its last state). Objects are decoded only where a watcher needs one (eventObject).
  std::shared_ptr<const std::string> text, prevText;
  std::shared_ptr<EncodedObject> encoded;  // `text`'s served form, shared by every watcher
  // What selectors read of `text` and `prevText` (null exactly when the text is).
  std::shared_ptr<ObjectAttributes> attributes, prevAttributes;
};

// A version of an object the cache already holds: its text and what selectors read of it.
struct SharedVersion {
  std::shared_ptr<const std::string> text;
  std::shared_ptr<ObjectAttributes> attributes;  // may be null: made from `text` then
};

// A store event as the cache keeps it. When `previous` is the event's previous version (the same
// text), the event shares it instead of holding a copy: a key's events otherwise hold each
// version twice, as one event's text and the next one's prevText.
CachedEvent toCachedEvent(const storage::WatchEvent& ev, const SharedVersion& previous = {});

// The event's object decoded from its text, with the event's revision as its resourceVersion (a
// deletion's: the last state). An undecodable text is an empty object.
json eventObject(const CachedEvent& ev);

class WatchCache;

// How many of the latest events in the ring keep their shared encoding (older ones, sent only to
// a watcher resuming from far back, are encoded by that watcher).
inline constexpr size_t kEncodedWindow = 1024;

// Takes a watcher's events on the delivering thread (Watcher::setSink): true when it has sent
// them all, false when the watcher's own thread must (they are queued for next() then).
using WatchSink = std::function<bool(const std::vector<CachedEvent>&)>;

class Watcher {
 public:
  ~Watcher();
  // Waits up to `timeout` for events (0: takes what is queued, without waiting); returns a failure
  // Status once the watcher is terminated.
  Status next(std::vector<CachedEvent>& out, std::chrono::milliseconds timeout);
  void stop();

  // Write-through: while this watcher's thread waits in next() with nothing queued, the cache's
  // thread hands new events to `sink` itself instead of queueing them and waking that thread (a
  // wake-up and a context switch per watcher per event: most of what an event to 100 watchers
  // cost). next() does not return until a running sink is done, so the sink may use what the
  // watcher's thread owns. The sink must not block (a socket write only when it cannot wait,
  // http::ResponseWriter::writeIfReady) nor call into the cache. Set it before the first next();
  // stop() ends its use. Events the sink declines come out of next() in order, as without it.
  void setSink(WatchSink sink);

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
  WatchSink sink_;
  bool parked_ = false;        // the thread waits in next() for events
  bool delivering_ = false;    // the cache's thread holds events for the sink
  bool awaitingSink_ = false;  // the thread, out of its wait, waits for the sink to finish
  std::unique_ptr<storage::WatchStream> direct_;  // for revisions older than the ring
};

class WatchCache {
 public:
  // The ring keeps up to `capacity` events and, beyond its latest kEncodedWindow, up to
  // `maxTextBytes` of their texts: 20,000 events of 1.3 KB pods are 26 MB of text, and a watcher
  // resuming from further back is served from the store instead.
  WatchCache(storage::Store& store, size_t capacity = 20000, size_t maxQueue = 20000,
             size_t maxTextBytes = 16 << 20);
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
  // Under mu_: queues each watcher's events, or marks them for its sink (`handOff`).
  struct HandOff {
    Watcher* watcher;
    std::vector<CachedEvent> events;
  };
  void deliver(const std::vector<CachedEvent>& events, std::vector<HandOff>& handOff);
  // Without mu_: runs the sinks; what one declines is queued for its thread. Many hand-offs are
  // split with a helper thread, so both cores write; it returns once all have run.
  void runSinks(std::vector<HandOff>& handOff);
  void runSinks(HandOff* begin, HandOff* end);
  void sinkHelperLoop();
  // Under w.mu_: queues `ev` for the watcher's thread, or terminates a watcher whose queue is
  // full with Expired (it re-lists).
  void enqueue(Watcher& w, CachedEvent ev);
  // The latest version of `key` the ring's events hold, if something still holds it, and the
  // record of `ev` as its key's latest (or of the key's end, for a deletion). Run thread only.
  SharedVersion latestVersion(const std::string& key) const;
  void rememberLatest(const CachedEvent& ev);
  // Forgets the key of an event leaving the ring when it was the key's latest. Run thread only.
  void forgetIfLatest(const CachedEvent& ev);

  storage::Store& store_;
  size_t capacity_, maxQueue_, maxTextBytes_;
  size_t ringTextBytes_ = 0;  // the sizes of the ring's events' texts
  mutable std::mutex mu_;
  std::deque<CachedEvent> ring_;
  int64_t horizon_ = 0;  // the oldest afterRevision the ring can serve
  int64_t latest_ = 0;   // last revision seen
  std::list<Watcher*> watchers_;
  std::thread thread_;
  // The helper that runs half of a large hand-off (started the first time one comes).
  std::thread sinkHelper_;
  std::mutex helperMu_;
  std::condition_variable helperCv_;
  HandOff *helperBegin_ = nullptr, *helperEnd_ = nullptr;  // its work; null when it has none
  bool helperStop_ = false;
  std::unique_ptr<storage::WatchStream> stream_;
  bool stopping_ = false;
  // The latest event of each key in the ring (its text and attributes while something holds
  // them), for latestVersion. Run thread only.
  struct Latest {
    std::weak_ptr<const std::string> text;
    std::weak_ptr<ObjectAttributes> attributes;
  };
  std::unordered_map<std::string, Latest> latestByKey_;
};

}  // namespace minik8s::apiserver
