#include "apiserver/flow_control.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "common/metrics.h"
#include "common/status.h"

namespace minik8s::apiserver {

namespace {

struct FlowControlMetrics {
  metrics::CounterVec& dropped;
  metrics::CounterVec& rejected;
  metrics::GaugeVec& inQueue;
  metrics::GaugeVec& executing;
};

FlowControlMetrics& flowControlMetrics() {
  static FlowControlMetrics m = [] {
    metrics::Registry& r = metrics::defaultRegistry();
    return FlowControlMetrics{
        r.counterVec("apiserver_dropped_requests_total",
                     "Number of requests dropped with 'Try again later' response",
                     {"request_kind"}),
        r.counterVec("apiserver_flowcontrol_rejected_requests_total",
                     "Number of requests rejected by API Priority and Fairness subsystem",
                     {"flow_schema", "priority_level", "reason"}),
        r.gaugeVec("apiserver_flowcontrol_current_inqueue_requests",
                   "Number of requests currently pending in queues of the API Priority and "
                   "Fairness subsystem",
                   {"flow_schema", "priority_level"}),
        r.gaugeVec("apiserver_flowcontrol_current_executing_requests",
                   "Number of requests in initial (for a WATCH) or any (for a non-WATCH) "
                   "execution stage in the API Priority and Fairness subsystem",
                   {"flow_schema", "priority_level"}),
    };
  }();
  return m;
}

const char* kindName(RequestKind kind) {
  return kind == RequestKind::kReadOnly ? "readOnly" : "mutating";
}

bool hasPrefix(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

Classification classify(const auth::UserInfo& user) {
  if (user.inGroup(auth::kSystemMasters)) return {PriorityLevel::kExempt, "exempt"};
  if (user.name == "system:kube-controller-manager") {
    return {PriorityLevel::kSystem, "kube-controller-manager"};
  }
  if (user.name == "system:kube-scheduler") return {PriorityLevel::kSystem, "kube-scheduler"};
  if (user.name == "system:kube-proxy") return {PriorityLevel::kSystem, "kube-proxy"};
  if (user.inGroup(auth::kNodesGroup)) return {PriorityLevel::kSystem, "system-nodes"};
  if (hasPrefix(user.name, std::string(auth::kServiceAccountUserPrefix) + "kube-system:")) {
    return {PriorityLevel::kSystem, "kube-system-service-accounts"};
  }
  // The server's own in-process clients other than the scheduler and controllers (monitoring).
  if (hasPrefix(user.name, "system:minik8s-")) return {PriorityLevel::kSystem, "minik8s-system"};
  if (hasPrefix(user.name, auth::kServiceAccountUserPrefix)) {
    return {PriorityLevel::kWorkload, "service-accounts"};
  }
  return {PriorityLevel::kWorkload, "global-default"};
}

RequestKind requestKind(const http::Request& req) {
  return req.method == "GET" || req.method == "HEAD" ? RequestKind::kReadOnly
                                                     : RequestKind::kMutating;
}

const char* priorityLevelName(PriorityLevel level) {
  switch (level) {
    case PriorityLevel::kExempt:
      return "exempt";
    case PriorityLevel::kSystem:
      return "system";
    case PriorityLevel::kWorkload:
      return "workload";
  }
  return "workload";
}

http::Response tooManyRequestsResponse() {
  json body = Status::TooManyRequests("Too many requests, please try again later.").toJson();
  body["details"]["retryAfterSeconds"] = 1;
  http::Response r = http::Response::json(429, body);
  r.headers.emplace_back("Retry-After", "1");
  return r;
}

FlowControl::Seat::Seat(Seat&& other) noexcept { *this = std::move(other); }

FlowControl::Seat& FlowControl::Seat::operator=(Seat&& other) noexcept {
  if (this == &other) return *this;
  if (owner_) owner_->release(*this);
  owner_ = std::exchange(other.owner_, nullptr);
  kind_ = other.kind_;
  class_ = std::move(other.class_);
  user_ = std::move(other.user_);
  counted_ = other.counted_;
  return *this;
}

FlowControl::Seat::~Seat() {
  if (owner_) owner_->release(*this);
}

FlowControl::FlowControl(FlowControlOptions options) : options_(options) {
  for (auto [b, limit] : {std::pair{&readOnly_, options_.maxRequestsInflight},
                          std::pair{&mutating_, options_.maxMutatingRequestsInflight}}) {
    b->limit = std::max(0, limit);
    // Half for the control plane, but at least one seat for everyone else.
    b->systemReserve = b->limit <= 1 ? 0 : std::min((b->limit + 1) / 2, b->limit - 1);
  }
}

FlowControl::~FlowControl() = default;

bool FlowControl::canSeat(const Budget& b, PriorityLevel level) {
  if (b.system.executing + b.workload.executing >= b.limit) return false;
  return level == PriorityLevel::kSystem || b.workload.executing < b.limit - b.systemReserve;
}

FlowControl::Seat FlowControl::admit(RequestKind kind, const auth::UserInfo& user) {
  return admit(kind, classify(user), user.name);
}

FlowControl::Seat FlowControl::admit(RequestKind kind, const Classification& c,
                                     const std::string& user) {
  FlowControlMetrics& m = flowControlMetrics();
  const char* levelName = priorityLevelName(c.level);
  Seat seat;
  seat.kind_ = kind;
  seat.class_ = c;
  seat.user_ = user;
  std::unique_lock lock(mu_);
  Budget& b = budget(kind);
  if (c.level == PriorityLevel::kExempt || b.limit == 0) {
    seat.owner_ = this;
    m.executing.with({c.flowSchema, levelName}).inc();
    return seat;
  }
  Level& level = b.level(c.level);
  auto seatNow = [&] {
    ++level.executing;
    ++level.flows[user].executing;
    seat.owner_ = this;
    seat.counted_ = true;
    m.executing.with({c.flowSchema, levelName}).inc();
  };
  if (level.queued == 0 && canSeat(b, c.level)) {
    seatNow();
    return seat;
  }
  Flow& flow = level.flows[user];
  if (static_cast<int>(flow.queue.size()) >= options_.queueLengthPerFlow) {
    if (flow.executing == 0 && flow.queue.empty()) level.flows.erase(user);
    lock.unlock();
    reject(kind, c, options_.queueLengthPerFlow > 0 ? "queue-full" : "concurrency-limit");
    return seat;
  }
  Waiter waiter;
  flow.queue.push_back(&waiter);
  ++level.queued;
  m.inQueue.with({c.flowSchema, levelName}).inc();
  dispatchLocked(b);
  waiter.cv.wait_for(lock, options_.maxQueueWait, [&] { return waiter.seated; });
  m.inQueue.with({c.flowSchema, levelName}).dec();
  if (waiter.seated) {
    // dispatchLocked() counted the seat in the level and the flow.
    seat.owner_ = this;
    seat.counted_ = true;
    m.executing.with({c.flowSchema, levelName}).inc();
    return seat;
  }
  Flow& mine = level.flows[user];  // the map may have been rebalanced, not this entry
  std::erase(mine.queue, &waiter);
  --level.queued;
  if (mine.executing == 0 && mine.queue.empty()) level.flows.erase(user);
  lock.unlock();
  reject(kind, c, "time-out");
  return seat;
}

void FlowControl::dispatchLocked(Budget& b) {
  for (PriorityLevel l : {PriorityLevel::kSystem, PriorityLevel::kWorkload}) {
    Level& level = b.level(l);
    while (level.queued > 0 && canSeat(b, l)) {
      Flow* next = nullptr;
      for (auto& [user, flow] : level.flows) {
        if (!flow.queue.empty() && (!next || flow.executing < next->executing)) next = &flow;
      }
      if (!next) break;
      Waiter* w = next->queue.front();
      next->queue.pop_front();
      --level.queued;
      ++level.executing;
      ++next->executing;
      w->seated = true;
      w->cv.notify_one();
    }
  }
}

void FlowControl::release(Seat& seat) {
  flowControlMetrics()
      .executing.with({seat.class_.flowSchema, priorityLevelName(seat.class_.level)})
      .dec();
  seat.owner_ = nullptr;
  if (!seat.counted_) return;
  std::lock_guard lock(mu_);
  Budget& b = budget(seat.kind_);
  Level& level = b.level(seat.class_.level);
  --level.executing;
  auto it = level.flows.find(seat.user_);
  if (it != level.flows.end() && --it->second.executing <= 0 && it->second.queue.empty()) {
    level.flows.erase(it);
  }
  dispatchLocked(b);
}

void FlowControl::reject(RequestKind kind, const Classification& c, const char* reason) {
  FlowControlMetrics& m = flowControlMetrics();
  m.dropped.with({kindName(kind)}).inc();
  m.rejected.with({c.flowSchema, priorityLevelName(c.level), reason}).inc();
}

int FlowControl::executing(RequestKind kind, PriorityLevel level) const {
  std::lock_guard lock(mu_);
  if (level == PriorityLevel::kExempt) return 0;
  return budget(kind).level(level).executing;
}

int FlowControl::queued(RequestKind kind, PriorityLevel level) const {
  std::lock_guard lock(mu_);
  if (level == PriorityLevel::kExempt) return 0;
  return budget(kind).level(level).queued;
}

int FlowControl::limit(RequestKind kind, PriorityLevel level) const {
  const Budget& b = budget(kind);
  if (level == PriorityLevel::kExempt || b.limit == 0) return 0;
  return level == PriorityLevel::kSystem ? b.limit : b.limit - b.systemReserve;
}

}  // namespace minik8s::apiserver
