#include "apiserver/auth/node_graph.h"

#include <chrono>

#include "api/object_meta.h"
#include "apiserver/registry.h"
#include "apiserver/watch_cache.h"
#include "common/logging.h"

namespace minik8s::apiserver::auth {

namespace {

const char* kindName(NodeGraph::Kind kind) {
  switch (kind) {
    case NodeGraph::Kind::kSecret:
      return "secret";
    case NodeGraph::Kind::kConfigMap:
      return "configmap";
    case NodeGraph::Kind::kClaim:
      return "claim";
    case NodeGraph::Kind::kServiceAccount:
      return "serviceaccount";
  }
  return "";
}

std::string edgeKey(const std::string& node, NodeGraph::Kind kind, const std::string& ns,
                    const std::string& name) {
  return node + '\x1f' + kindName(kind) + '\x1f' + ns + '\x1f' + name;
}

bool podReferences(const api::PodReferences& refs, NodeGraph::Kind kind, const std::string& name) {
  switch (kind) {
    case NodeGraph::Kind::kSecret:
      return refs.secrets.count(name) > 0;
    case NodeGraph::Kind::kConfigMap:
      return refs.configMaps.count(name) > 0;
    case NodeGraph::Kind::kClaim:
      return refs.claims.count(name) > 0;
    case NodeGraph::Kind::kServiceAccount:
      return refs.serviceAccount == name;
  }
  return false;
}

// A pod that has finished no longer needs what it references (Kubernetes drops its edges too).
bool holdsReferences(const json& pod) {
  const std::string phase = api::stringAt(pod, "/status/phase");
  return !api::nodeNameOf(pod).empty() && phase != "Succeeded" && phase != "Failed";
}

// A stored pod decoded for the graph; null (no edges) for one that is not bound to a node, found
// without decoding it: a pod's text without "nodeName" cannot have spec.nodeName. Every pod's
// first version is unbound, and a cluster out of nodes holds only unbound pods.
json decodeForGraph(const std::string& text) {
  if (text.find("\"nodeName\"") == std::string::npos) return json();
  return json::parse(text, nullptr, false);
}

}  // namespace

NodeGraph::NodeGraph(Registry& registry) : registry_(registry) {
  if (const auto* pods = registry.scheme().byResource("", "v1", "pods"))
    prefix_ = Registry::prefix(registry.storageInfo(*pods), "");
}

NodeGraph::~NodeGraph() { stop(); }

void NodeGraph::start(WatchCache* cache) {
  if (thread_.joinable() || prefix_.empty()) return;
  cache_ = cache;
  stop_ = false;
  thread_ = std::thread([this] { run(); });
}

void NodeGraph::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

bool NodeGraph::references(const std::string& node, Kind kind, const std::string& ns,
                           const std::string& name) const {
  std::lock_guard lock(mu_);
  return counts_.count(edgeKey(node, kind, ns, name)) > 0;
}

Result<bool> NodeGraph::referencesInRegistry(Registry& registry, const std::string& node, Kind kind,
                                             const std::string& ns, const std::string& name) {
  const auto* pods = registry.scheme().byResource("", "v1", "pods");
  if (!pods) return false;
  ListOptions opts;
  opts.fieldSelector = "spec.nodeName=" + node;
  auto list = registry.list(*pods, ns, opts);
  if (!list.ok()) return list.status();
  for (const auto& pod : list->items) {
    if (holdsReferences(pod) && podReferences(api::podReferences(pod), kind, name)) return true;
  }
  return false;
}

void NodeGraph::addEdges(const Edge& e, int delta) {
  auto add = [&](Kind kind, const std::string& name) {
    const std::string key = edgeKey(e.node, kind, e.ns, name);
    if ((counts_[key] += delta) <= 0) counts_.erase(key);
  };
  for (const auto& s : e.refs.secrets) add(Kind::kSecret, s);
  for (const auto& c : e.refs.configMaps) add(Kind::kConfigMap, c);
  for (const auto& c : e.refs.claims) add(Kind::kClaim, c);
  add(Kind::kServiceAccount, e.refs.serviceAccount);
}

void NodeGraph::setPod(const std::string& key, const json& pod) {
  std::lock_guard lock(mu_);
  if (auto it = pods_.find(key); it != pods_.end()) {
    addEdges(it->second, -1);
    pods_.erase(it);
  }
  if (!pod.is_object() || !holdsReferences(pod)) return;
  Edge e{api::nodeNameOf(pod), api::namespaceOf(pod), api::podReferences(pod)};
  addEdges(e, +1);
  pods_.emplace(key, std::move(e));
}

Status NodeGraph::listAll(int64_t& revision) {
  auto list = registry_.store().list(prefix_);
  if (!list.ok()) return list.status();
  {
    std::lock_guard lock(mu_);
    pods_.clear();
    counts_.clear();
  }
  for (const auto& kv : list->items) setPod(kv.key, decodeForGraph(kv.value));
  revision = list->revision;
  synced_ = true;
  return {};
}

void NodeGraph::run() {
  while (!stop_) {
    int64_t revision = 0;
    if (Status s = listAll(revision); !s.ok()) {
      LOG_WARN("node graph: cannot list pods: {}", s.message());
      std::this_thread::sleep_for(std::chrono::seconds(1));
      continue;
    }
    Status s = cache_ ? followCache(revision) : followStore(revision);
    if (stop_) break;
    LOG_INFO("node graph: pod watch ended ({}): listing again", s.message());
    if (s.code() == 503) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

Status NodeGraph::followStore(int64_t revision) {
  auto stream = registry_.store().watch(prefix_, revision);
  if (!stream.ok()) return Status::Unavailable(stream.status().message());
  std::vector<storage::WatchEvent> events;
  Status s;
  while (!stop_ && s.ok()) {
    events.clear();
    s = (*stream)->next(events, std::chrono::milliseconds(500));
    for (const auto& ev : events) {
      setPod(ev.kv.key,
             ev.type == storage::WatchEvent::Type::kDelete ? json() : decodeForGraph(ev.kv.value));
    }
  }
  (*stream)->close();
  return s;
}

Status NodeGraph::followCache(int64_t revision) {
  auto watcher = cache_->watch(prefix_, revision);
  if (!watcher.ok()) return Status::Unavailable(watcher.status().message());
  std::vector<CachedEvent> events;
  Status s;
  while (!stop_ && s.ok()) {
    events.clear();
    s = (*watcher)->next(events, std::chrono::milliseconds(500));
    for (const auto& ev : events) {
      setPod(ev.key, ev.type == CachedEvent::Type::kDeleted || !ev.text ? json()
                                                                        : decodeForGraph(*ev.text));
    }
  }
  (*watcher)->stop();
  return s;
}

}  // namespace minik8s::apiserver::auth
