#include "apiserver/watch_cache.h"

#include <algorithm>

#include "apiserver/stored_json.h"
#include "common/logging.h"

namespace minik8s::apiserver {

namespace {
// A stored text's object; an undecodable text is an empty object.
json parseObject(const std::string& text) {
  json obj = json::parse(text, nullptr, false);
  if (!obj.is_object()) return json::object();
  return obj;
}

json decodeText(const std::string& text, int64_t revision) {
  json obj = parseObject(text);
  obj["metadata"]["resourceVersion"] = std::to_string(revision);
  return obj;
}

std::shared_ptr<const ObjectAttributes::Values> attributesOf(const std::string& text,
                                                             const std::string& kind) {
  const json obj = parseObject(text);
  auto values = std::make_shared<ObjectAttributes::Values>();
  if (auto meta = obj.find("metadata"); meta != obj.end() && meta->is_object()) {
    if (auto labels = meta->find("labels"); labels != meta->end()) values->labels = *labels;
  }
  values->fields = api::FieldSelector::fieldSet(kind, obj);
  return values;
}
}  // namespace

const std::string* EncodedObject::get(const std::string& storedText, int64_t revision,
                                      const std::string& apiVersion, const std::string& kind) {
  std::call_once(once_, [&] {
    apiVersion_ = apiVersion;
    kind_ = kind;
    if (appendServedText(text_, storedText, revision, apiVersion, kind)) return;
    json labelled = decodeText(storedText, revision);
    labelled["apiVersion"] = apiVersion;
    labelled["kind"] = kind;
    text_ = labelled.dump(-1, ' ', false, json::error_handler_t::replace);
  });
  return apiVersion_ == apiVersion && kind_ == kind ? &text_ : nullptr;
}

std::shared_ptr<const ObjectAttributes::Values> ObjectAttributes::get(const std::string& kind) {
  std::call_once(once_, [&] {
    kind_ = kind;
    values_ = attributesOf(*text_, kind);
  });
  return kind_ == kind ? values_ : attributesOf(*text_, kind);
}

CachedEvent toCachedEvent(const storage::WatchEvent& ev, const SharedVersion& previous) {
  CachedEvent out;
  out.encoded = std::make_shared<EncodedObject>();
  out.revision = ev.kv.modRevision;
  out.key = ev.kv.key;
  const bool deleted = ev.type == storage::WatchEvent::Type::kDelete;
  if (deleted || !ev.prevValue.empty()) {
    if (previous.text && *previous.text == ev.prevValue) {
      out.prevText = previous.text;
      out.prevAttributes = previous.attributes;
    } else {
      out.prevText = std::make_shared<const std::string>(ev.prevValue);
    }
    if (!out.prevAttributes) out.prevAttributes = std::make_shared<ObjectAttributes>(out.prevText);
  }
  if (deleted) {
    out.type = CachedEvent::Type::kDeleted;
    out.text = out.prevText;  // a deletion's object is its last version
    out.attributes = out.prevAttributes;
  } else {
    out.type = ev.isCreate() || ev.prevValue.empty() ? CachedEvent::Type::kAdded
                                                     : CachedEvent::Type::kModified;
    out.text = std::make_shared<const std::string>(ev.kv.value);
    out.attributes = std::make_shared<ObjectAttributes>(out.text);
  }
  return out;
}

json eventObject(const CachedEvent& ev) {
  return ev.text ? decodeText(*ev.text, ev.revision) : decodeText("{}", ev.revision);
}

Watcher::~Watcher() { stop(); }

void Watcher::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    sink_ = nullptr;  // a sink running now holds mu_: it has finished here
  }
  cv_.notify_all();
  if (direct_) direct_->close();
  if (cache_) cache_->unregister(this);
}

Status Watcher::next(std::vector<CachedEvent>& out, std::chrono::milliseconds timeout) {
  if (direct_) {
    std::vector<storage::WatchEvent> raw;
    Status s = direct_->next(raw, timeout);
    if (!s.ok()) return s;
    for (const auto& ev : raw) {
      if (ev.kv.modRevision > afterRevision_) out.push_back(toCachedEvent(ev));
    }
    return Status::Ok();
  }
  std::unique_lock lock(mu_);
  // A zero timeout only polls (the admission lister's reads): no condition-variable round trip.
  if (timeout.count() > 0) {
    parked_ = true;
    cv_.wait_for(lock, timeout, [&] { return stopped_ || !queue_.empty() || !failure_.ok(); });
    parked_ = false;
    if (delivering_) {  // the cache's thread took events for the sink while we waited
      awaitingSink_ = true;
      cv_.wait(lock, [&] { return !delivering_; });
      awaitingSink_ = false;
    }
  }
  while (!queue_.empty()) {
    out.push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
  if (!out.empty()) return Status::Ok();
  if (!failure_.ok()) return failure_;
  if (stopped_) return Status::Gone("watch stopped");
  return Status::Ok();
}

void Watcher::setSink(WatchSink sink) {
  std::lock_guard lock(mu_);
  sink_ = std::move(sink);
}

WatchCache::WatchCache(storage::Store& store, size_t capacity, size_t maxQueue, size_t maxTextBytes)
    : store_(store), capacity_(capacity), maxQueue_(maxQueue), maxTextBytes_(maxTextBytes) {}

WatchCache::~WatchCache() { stop(); }

Status WatchCache::start() {
  auto rev = store_.currentRevision();
  if (!rev.ok()) return rev.status();
  auto stream = store_.watch("/registry/", *rev);
  if (!stream.ok()) return stream.status();
  {
    std::lock_guard lock(mu_);
    horizon_ = latest_ = *rev;
    stream_ = std::move(stream.value());
  }
  thread_ = std::thread([this] { run(); });
  return Status::Ok();
}

void WatchCache::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    if (stream_) stream_->close();
  }
  if (thread_.joinable()) thread_.join();
  {
    std::lock_guard lock(helperMu_);
    helperStop_ = true;
  }
  helperCv_.notify_all();
  if (sinkHelper_.joinable()) sinkHelper_.join();
  std::lock_guard lock(mu_);
  for (Watcher* w : watchers_) {
    std::lock_guard wl(w->mu_);
    w->failure_ = Status::Unavailable("the API server is shutting down");
    w->cache_ = nullptr;
    w->cv_.notify_all();
  }
  watchers_.clear();
}

int64_t WatchCache::latestRevision() const {
  std::lock_guard lock(mu_);
  return latest_;
}

void WatchCache::run() {
  std::vector<storage::WatchEvent> batch;
  while (true) {
    storage::WatchStream* stream;
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      stream = stream_.get();
    }
    batch.clear();
    Status s = stream->next(batch, std::chrono::milliseconds(500));
    if (!s.ok()) {
      {
        std::lock_guard lock(mu_);
        if (stopping_) return;
      }
      // Lost the store stream: re-watch from where we are; if history is gone, every watcher
      // must re-list.
      LOG_WARN("watch cache: store watch failed: {}; re-watching", s.toString());
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      int64_t from;
      {
        std::lock_guard lock(mu_);
        from = latest_;
      }
      auto again = store_.watch("/registry/", from);
      if (!again.ok()) {
        auto rev = store_.currentRevision();
        if (!rev.ok()) continue;
        again = store_.watch("/registry/", *rev);
        if (!again.ok()) continue;
        std::lock_guard lock(mu_);
        for (Watcher* w : watchers_) {
          std::lock_guard wl(w->mu_);
          w->failure_ = Status::Expired("watch cache lost history; re-list");
          w->cv_.notify_all();
        }
        ring_.clear();
        ringTextBytes_ = 0;
        latestByKey_.clear();
        horizon_ = latest_ = *rev;
      }
      std::lock_guard lock(mu_);
      stream_ = std::move(again.value());
      continue;
    }
    std::vector<CachedEvent> events;
    events.reserve(batch.size());
    for (const auto& ev : batch) {
      events.push_back(toCachedEvent(ev, latestVersion(ev.kv.key)));
      rememberLatest(events.back());
    }
    std::vector<HandOff> handOff;
    std::unique_lock lock(mu_);
    std::erase_if(events, [&](const CachedEvent& ce) {
      if (ce.revision <= latest_) return true;
      latest_ = ce.revision;
      return false;
    });
    deliver(events, handOff);
    for (auto& ce : events) {
      ringTextBytes_ += ce.text->size();
      ring_.push_back(std::move(ce));
      // Only recent events keep their shared text: the watchers they go to encode them now, and
      // the ring's 20,000 events would otherwise hold a second copy of every object (the
      // watchers' queued copies keep theirs until sent).
      if (ring_.size() > kEncodedWindow) ring_[ring_.size() - 1 - kEncodedWindow].encoded.reset();
      while (ring_.size() > capacity_ ||
             (ringTextBytes_ > maxTextBytes_ && ring_.size() > kEncodedWindow)) {
        horizon_ = ring_.front().revision;
        ringTextBytes_ -= ring_.front().text->size();
        forgetIfLatest(ring_.front());
        ring_.pop_front();
      }
    }
    lock.unlock();  // sockets are written without the cache's lock
    runSinks(handOff);
  }
}

SharedVersion WatchCache::latestVersion(const std::string& key) const {
  auto it = latestByKey_.find(key);
  if (it == latestByKey_.end()) return {};
  return {it->second.text.lock(), it->second.attributes.lock()};
}

void WatchCache::rememberLatest(const CachedEvent& ev) {
  if (ev.type == CachedEvent::Type::kDeleted) {
    latestByKey_.erase(ev.key);
    return;
  }
  Latest& latest = latestByKey_[ev.key];
  latest.text = ev.text;
  latest.attributes = ev.attributes;
}

void WatchCache::forgetIfLatest(const CachedEvent& ev) {
  auto it = latestByKey_.find(ev.key);
  if (it != latestByKey_.end() && it->second.text.lock() == ev.text) latestByKey_.erase(it);
}

// A store batch goes to each watcher under one lock and with one wake-up: a watcher thread then
// takes the whole batch in one next() and writes it at once. A watcher with a sink, waiting with
// nothing queued, gets the batch through its sink instead (runSinks, after the cache's lock is
// let go): its thread is not woken at all; until then it cannot leave next().
void WatchCache::deliver(const std::vector<CachedEvent>& events, std::vector<HandOff>& handOff) {
  if (events.empty()) return;
  for (Watcher* w : watchers_) {
    bool woken = false;
    std::vector<CachedEvent>* sinkEvents = nullptr;
    std::unique_lock<std::mutex> wl;
    for (const auto& ev : events) {
      if (ev.revision <= w->afterRevision_ ||
          ev.key.compare(0, w->prefix_.size(), w->prefix_) != 0) {
        continue;
      }
      if (!wl.owns_lock()) {
        wl = std::unique_lock(w->mu_);
        if (w->sink_ && w->parked_ && !w->stopped_ && w->queue_.empty() && w->failure_.ok()) {
          w->delivering_ = true;
          sinkEvents = &handOff.emplace_back(HandOff{w, {}}).events;
        }
      }
      if (sinkEvents) {
        sinkEvents->push_back(ev);
        continue;
      }
      if (!w->failure_.ok()) break;
      enqueue(*w, ev);
      woken = true;
    }
    if (!woken) continue;
    wl.unlock();  // the woken thread's first step is to take this lock
    w->cv_.notify_all();
  }
}

void WatchCache::enqueue(Watcher& w, CachedEvent ev) {
  if (w.queue_.size() >= maxQueue_) {
    w.failure_ = Status::Expired("watcher fell too far behind; re-list");
    w.queue_.clear();
  } else {
    w.queue_.push_back(std::move(ev));
  }
}

// Below this many sinks one thread writes them all: a helper's wake-up would cost more.
constexpr size_t kSplitSinks = 16;

void WatchCache::runSinks(std::vector<HandOff>& handOff) {
  HandOff* begin = handOff.data();
  HandOff* end = begin + handOff.size();
  if (handOff.size() < kSplitSinks) return runSinks(begin, end);
  HandOff* middle = begin + handOff.size() / 2;
  {
    std::lock_guard lock(helperMu_);
    if (!sinkHelper_.joinable()) sinkHelper_ = std::thread([this] { sinkHelperLoop(); });
    helperBegin_ = middle;
    helperEnd_ = end;
  }
  helperCv_.notify_all();
  runSinks(begin, middle);
  // The next batch's hand-offs may be for the same watchers: the helper's must be done first.
  std::unique_lock lock(helperMu_);
  helperCv_.wait(lock, [&] { return helperBegin_ == nullptr; });
}

void WatchCache::sinkHelperLoop() {
  std::unique_lock lock(helperMu_);
  while (true) {
    helperCv_.wait(lock, [&] { return helperStop_ || helperBegin_ != nullptr; });
    if (helperBegin_ == nullptr) return;  // stopping, and no work left
    HandOff *begin = helperBegin_, *end = helperEnd_;
    lock.unlock();
    runSinks(begin, end);
    lock.lock();
    helperBegin_ = helperEnd_ = nullptr;
    helperCv_.notify_all();
  }
}

void WatchCache::runSinks(HandOff* begin, HandOff* end) {
  for (HandOff* it = begin; it != end; ++it) {
    HandOff& h = *it;
    Watcher* w = h.watcher;  // alive: its thread waits in next() while delivering_
    std::unique_lock wl(w->mu_);
    const bool sent = w->sink_ && !w->stopped_ && w->sink_(h.events);
    w->delivering_ = false;
    bool wake = w->awaitingSink_;
    if (!sent && !w->stopped_ && w->failure_.ok()) {
      // Nothing was queued since deliver() (the queue was empty then, and only deliver() queues,
      // on the cache's thread, which waits for every sink first), so these stay ahead of every
      // later event.
      for (auto& ev : h.events) {
        if (!w->failure_.ok()) break;
        enqueue(*w, std::move(ev));
      }
      wake = true;
    }
    wl.unlock();
    if (wake) w->cv_.notify_all();
  }
}

Result<std::shared_ptr<Watcher>> WatchCache::watch(const std::string& prefix,
                                                   int64_t afterRevision) {
  auto w = std::make_shared<Watcher>();
  w->prefix_ = prefix;
  w->afterRevision_ = afterRevision;
  std::unique_lock lock(mu_);
  if (stopping_) return Status::Unavailable("the API server is shutting down");
  if (afterRevision < horizon_) {
    lock.unlock();
    auto direct = store_.watch(prefix, afterRevision);
    if (!direct.ok()) {
      if (direct.status().code() == 410) {
        return Status::Expired("too old resource version: " + std::to_string(afterRevision) + " (" +
                               std::to_string(horizon_) + ")");
      }
      return direct.status();
    }
    w->direct_ = std::move(direct.value());
    return w;
  }
  // The ring is in revision order: start at the first event after afterRevision instead of
  // comparing all of its 20,000 (a watch from now copies nothing).
  auto first =
      std::upper_bound(ring_.begin(), ring_.end(), afterRevision,
                       [](int64_t rev, const CachedEvent& ev) { return rev < ev.revision; });
  for (auto it = first; it != ring_.end(); ++it) {
    if (it->key.compare(0, prefix.size(), prefix) == 0) w->queue_.push_back(*it);
  }
  w->cache_ = this;
  watchers_.push_back(w.get());
  return w;
}

void WatchCache::unregister(Watcher* w) {
  std::lock_guard lock(mu_);
  watchers_.remove(w);
  w->cache_ = nullptr;
}

}  // namespace minik8s::apiserver
