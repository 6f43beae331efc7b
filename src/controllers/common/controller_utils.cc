#include "controllers/common/controller_utils.h"

#include <algorithm>
#include <cmath>

#include "common/json_pointer.h"
#include "common/logging.h"
#include "common/time_util.h"

namespace minik8s::controllers {

std::optional<json> controllerRef(const json& obj) {
  const json* refs = findPointer(obj, "/metadata/ownerReferences");  // read in place
  if (!refs || !refs->is_array()) return std::nullopt;
  for (const auto& r : *refs) {
    if (r.is_object() && r.value("controller", false)) return r;
  }
  return std::nullopt;
}

json makeControllerRef(const json& owner) {
  return {{"apiVersion", owner.value("apiVersion", "")},
          {"kind", owner.value("kind", "")},
          {"name", valueAt(owner, "/metadata/name", std::string())},
          {"uid", valueAt(owner, "/metadata/uid", std::string())},
          {"controller", true},
          {"blockOwnerDeletion", true}};
}

json ownerRefsWithout(const json& obj, const std::string& uid) {
  json out = json::array();
  const json refs = valueAt(obj, "/metadata/ownerReferences", json::array());
  if (!refs.is_array()) return out;
  for (const auto& r : refs) {
    if (!r.is_object() || r.value("uid", "") != uid) out.push_back(r);
  }
  return out;
}

bool isTerminating(const json& obj) {
  return obj.contains("metadata") && obj["metadata"].contains("deletionTimestamp") &&
         !obj["metadata"]["deletionTimestamp"].is_null();
}

bool hasFinalizer(const json& obj, const std::string& finalizer) {
  const json fs = valueAt(obj, "/metadata/finalizers", json::array());
  return fs.is_array() && std::find(fs.begin(), fs.end(), json(finalizer)) != fs.end();
}

bool isPodActive(const json& pod) {
  const std::string phase = valueAt(pod, "/status/phase", std::string());
  return phase != "Succeeded" && phase != "Failed" && !isTerminating(pod);
}

namespace {
std::optional<json> readyCondition(const json& pod) {
  const json conds = valueAt(pod, "/status/conditions", json::array());
  if (!conds.is_array()) return std::nullopt;
  for (const auto& c : conds) {
    if (c.is_object() && c.value("type", "") == "Ready") return c;
  }
  return std::nullopt;
}
}  // namespace

bool isPodReady(const json& pod) {
  auto c = readyCondition(pod);
  return c && c->value("status", "") == "True";
}

bool isNodeReady(const json& node) { return isPodReady(node); }

std::optional<WallClock::time_point> podAvailableAt(const json& pod, int64_t minReadySeconds) {
  auto c = readyCondition(pod);
  if (!c || c->value("status", "") != "True") return std::nullopt;
  if (minReadySeconds <= 0) return WallClock::time_point::min();
  auto t = parseRfc3339(c->value("lastTransitionTime", ""));
  // A ready pod without a transition time has been ready for as long as we can tell.
  if (!t) return WallClock::time_point::min();
  return *t + std::chrono::seconds(minReadySeconds);
}

bool isPodAvailable(const json& pod, int64_t minReadySeconds, WallClock::time_point now) {
  auto at = podAvailableAt(pod, minReadySeconds);
  return at && *at <= now;
}

Result<int64_t> scaledValue(const json& v, int64_t total, bool roundUp) {
  if (v.is_null()) return int64_t{0};
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_string()) {
    std::string s = v.get<std::string>();
    if (!s.empty() && s.back() == '%') {
      try {
        size_t used = 0;
        int64_t pct = std::stoll(s.substr(0, s.size() - 1), &used);
        if (used == s.size() - 1) {
          // Integer arithmetic: ceil/floor of total*pct/100 without float error.
          int64_t num = total * pct;
          return roundUp ? (num + 99) / 100 : num / 100;
        }
      } catch (const std::exception&) {
      }
    } else {
      try {
        size_t used = 0;
        int64_t n = std::stoll(s, &used);
        if (used == s.size()) return n;
      } catch (const std::exception&) {
      }
    }
    return Status::BadRequest("invalid value for IntOrString: invalid value \"" + s +
                              "\": must be an integer or a percentage");
  }
  return Status::BadRequest("invalid type for IntOrString: " + v.dump());
}

json labelsOf(const json& obj) {
  json l = valueAt(obj, "/metadata/labels", json::object());
  return l.is_object() ? l : json::object();
}

WorkerPool::WorkerPool(client::WorkQueue& queue, std::function<Status(const std::string&)> sync,
                       std::string name)
    : queue_(queue), sync_(std::move(sync)), name_(std::move(name)) {
  queue_.enableMetrics(name_);
}

WorkerPool::~WorkerPool() { stop(); }

void WorkerPool::start(int workers) {
  for (int i = 0; i < workers; ++i) {
    threads_.emplace_back([this] {
      while (auto key = queue_.get()) {
        Status s = sync_(*key);
        if (s.ok()) {
          queue_.forget(*key);
        } else {
          // Conflicts are the normal cost of optimistic concurrency: retry quietly.
          if (s.code() == 409) {
            LOG_DEBUG("{}: sync {}: {}", name_, *key, s.toString());
          } else {
            LOG_WARN("{}: sync {}: {}", name_, *key, s.toString());
          }
          queue_.addRateLimited(*key);
        }
        queue_.done(*key);
      }
    });
  }
}

void WorkerPool::stop() {
  queue_.shutDown();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

}  // namespace minik8s::controllers
