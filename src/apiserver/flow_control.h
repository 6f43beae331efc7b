// FlowControl: the API server's overload protection, kube-apiserver's max-in-flight filter with
// a simplified API Priority and Fairness (APF) inside it.
//
// Two budgets of seats, as kube-apiserver's flags set them: --max-requests-inflight for read-only
// requests (GET, HEAD; default 400) and --max-mutating-requests-inflight for the rest (default
// 200); 0 turns a budget's limit off. Long-running requests (isLongRunning: watches, log, exec,
// attach, portforward, proxy) take no seat. Each request's caller is classified (classify()):
//
//   exempt    group system:masters (kube-apiserver exempts it too): never limited or queued
//   system    the control plane: system:kube-controller-manager, system:kube-scheduler,
//             system:kube-proxy, the nodes (group system:nodes), kube-system's service accounts
//             and this server's other in-process clients (system:minik8s-*)
//   workload  everyone else (users, other service accounts, bootstrap tokens, anonymous)
//
// Of each budget, half the seats (rounded up, leaving workload at least one) are reserved for
// system, which may also use the seats workload leaves free; workload never gets the reserve.
// Within a level each user is a flow with a queue of its own: a request takes a free seat at once
// or waits in its user's queue (at most queueLengthPerFlow requests for at most maxQueueWait);
// a freed seat goes to the queued flow that holds the fewest seats, so one user's flood fills its
// own queue and gets 429s while the control plane and other users keep being served. A waiting
// request blocks only its own connection's thread, and never longer than maxQueueWait.
// A rejected request is answered with tooManyRequestsResponse(): 429 TooManyRequests with
// details.retryAfterSeconds and `Retry-After: 1`, as kube-apiserver answers.
//
// Metrics (metrics::defaultRegistry()): apiserver_dropped_requests_total{request_kind},
// apiserver_flowcontrol_rejected_requests_total{flow_schema,priority_level,reason},
// apiserver_flowcontrol_current_inqueue_requests and
// apiserver_flowcontrol_current_executing_requests{flow_schema,priority_level}.
// Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <string>

#include "apiserver/auth/auth.h"
#include "apiserver/request_info.h"
#include "common/http.h"

namespace minik8s::apiserver {

struct FlowControlOptions {
  int maxRequestsInflight = 400;          // read-only seats; 0: no limit
  int maxMutatingRequestsInflight = 200;  // mutating seats; 0: no limit
  int queueLengthPerFlow = 16;            // requests of one user waiting for a seat; 0: no queue
  std::chrono::milliseconds maxQueueWait{5000};
};

enum class RequestKind { kReadOnly, kMutating };
enum class PriorityLevel { kExempt, kSystem, kWorkload };

// Which level a caller's requests belong to, and the flow schema (metrics label) that matched.
struct Classification {
  PriorityLevel level = PriorityLevel::kWorkload;
  std::string flowSchema;  // exempt, kube-controller-manager, system-nodes, global-default, ...
};
Classification classify(const auth::UserInfo& user);

// GET and HEAD read; every other method mutates.
RequestKind requestKind(const http::Request& req);
const char* priorityLevelName(PriorityLevel level);

// 429 with a TooManyRequests Status (details.retryAfterSeconds 1) and `Retry-After: 1`.
http::Response tooManyRequestsResponse();

class FlowControl {
 public:
  // A request's right to execute; gives its seat back when destroyed. Empty (admitted() false)
  // when the request was rejected.
  class Seat {
   public:
    Seat() = default;
    Seat(Seat&& other) noexcept;
    Seat& operator=(Seat&& other) noexcept;
    Seat(const Seat&) = delete;
    Seat& operator=(const Seat&) = delete;
    ~Seat();

    bool admitted() const { return owner_ != nullptr; }

   private:
    friend class FlowControl;
    FlowControl* owner_ = nullptr;
    RequestKind kind_ = RequestKind::kReadOnly;
    Classification class_;
    std::string user_;
    bool counted_ = false;  // holds a seat of a budget (not exempt, the budget has a limit)
  };

  explicit FlowControl(FlowControlOptions options = {});
  ~FlowControl();
  FlowControl(const FlowControl&) = delete;
  FlowControl& operator=(const FlowControl&) = delete;

  // A seat for one non-long-running request of `user`, possibly after waiting in its queue; an
  // empty Seat when it is rejected (the caller answers tooManyRequestsResponse()).
  Seat admit(RequestKind kind, const auth::UserInfo& user);
  Seat admit(RequestKind kind, const Classification& classification, const std::string& user);

  // Seats in use / requests waiting, for tests and the limits' introspection.
  int executing(RequestKind kind, PriorityLevel level) const;
  int queued(RequestKind kind, PriorityLevel level) const;
  // The seats `level` may use at most in `kind`'s budget (0: unlimited).
  int limit(RequestKind kind, PriorityLevel level) const;

 private:
  struct Waiter {
    std::condition_variable cv;
    bool seated = false;
  };
  struct Flow {
    int executing = 0;
    std::deque<Waiter*> queue;
  };
  struct Level {
    int executing = 0;
    int queued = 0;
    std::map<std::string, Flow> flows;  // by user name
  };
  struct Budget {
    int limit = 0;          // 0: unlimited
    int systemReserve = 0;  // seats only the system level may use
    Level system, workload;
    Level& level(PriorityLevel l) { return l == PriorityLevel::kSystem ? system : workload; }
    const Level& level(PriorityLevel l) const {
      return l == PriorityLevel::kSystem ? system : workload;
    }
  };

  Budget& budget(RequestKind kind) {
    return kind == RequestKind::kReadOnly ? readOnly_ : mutating_;
  }
  const Budget& budget(RequestKind kind) const {
    return kind == RequestKind::kReadOnly ? readOnly_ : mutating_;
  }
  static bool canSeat(const Budget& b, PriorityLevel level);
  // Seats queued requests while seats are free: system first, then workload; within a level the
  // flow holding the fewest seats first.
  void dispatchLocked(Budget& b);
  void release(Seat& seat);
  void reject(RequestKind kind, const Classification& c, const char* reason);

  FlowControlOptions options_;
  mutable std::mutex mu_;
  Budget readOnly_, mutating_;
};

}  // namespace minik8s::apiserver
