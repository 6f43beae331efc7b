// TriggerController: the control side of Triggers (serverless.minik8s.io/v1, src/serverless/
// trigger.h); the gateway's broker (trigger_broker.h) does the deliveries.
//   - schedule: at each activation of spec.schedule (cron fields in a time zone, or the
//     "@every 30s" extension) it sends a CloudEvent {type minik8s.schedule} for the Trigger to
//     the gateway's /trigger/NS/NAME (which delivers it with retries); a missed activation fires
//     once; concurrencyPolicy Forbid counts an activation the gateway refuses because the
//     previous one is still being delivered as skipped; status.lastScheduleTime;
//   - file: a watcher Deployment NAME-trigger-watch (the gateway image running
//     `minik8s serverless-file-watcher`, the claim or hostPath mounted read-only at /watch)
//     that posts minik8s.file.created|modified events to /trigger/NS/NAME;
//   - event: nothing to run (the broker matches it); the Ready condition says where to post;
//   - status: type, target, the Ready condition (reason Scheduled, Watching, WatcherStarting,
//     Listening, InvalidSpec, GatewayUnavailable, GatewayRefused); the watcher goes with a deleted Trigger.
// sync(key) is level-triggered and idempotent; the wall clock comes from options.now and the
// gateway through an EventSender, so tests drive the schedule exactly. Thread-safe.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "client/event_recorder.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "client/work_queue.h"
#include "common/time_util.h"
#include "controllers/common/controller_utils.h"
#include "serverless/cloud_event.h"
#include "serverless/trigger.h"

namespace minik8s::controllers {

// Sends one Trigger's event to the gateway (POST /trigger/NS/NAME).
class TriggerEventSender {
 public:
  virtual ~TriggerEventSender() = default;
  // OK when the gateway queued it; Conflict (409) when it refused it under Forbid.
  virtual Status send(const std::string& ns, const std::string& trigger,
                      const serverless::CloudEvent& event) = 0;
};
// The real one: the gateway's NodePort on a Ready node (serverless::gatewayNodeUrl).
std::unique_ptr<TriggerEventSender> gatewayEventSender(client::RestClient& rest);

struct TriggerControllerOptions {
  int workers = 2;
  const client::Clock* clock = &client::RealClock::instance();           // the work queue's
  std::function<Clock::time_point()> now = [] { return Clock::now(); };  // schedules
  client::EventRecorder* events = nullptr;  // source trigger-controller
  TriggerEventSender* sender = nullptr;     // null: gatewayEventSender
  std::string watcherImage = "minik8s/serverless-gateway:latest";
};

class TriggerController {
 public:
  // Registers handlers on the informers: construct before they start. `deployments`: the
  // watchers (any Deployment informer; those labelled serverless.minik8s.io/trigger count).
  TriggerController(client::RestClient& rest, client::Informer& triggers,
                    client::Informer& deployments, TriggerControllerOptions options = {});
  ~TriggerController();
  void start();
  void stop();

  Status sync(const std::string& key);

 private:
  Status syncDeleted(const std::string& ns, const std::string& name);
  // Fires a due activation; fills the status fields it owns; requeues for the next one.
  Status syncSchedule(const std::string& key, const json& trigger,
                      const serverless::ScheduleSource& schedule, json* status);
  Status syncFile(const json& trigger, const serverless::FileSource& file, json* status);

  client::RestClient& rest_;
  client::Informer& triggers_;
  client::Informer& deployments_;
  TriggerControllerOptions options_;
  std::unique_ptr<TriggerEventSender> ownSender_;
  TriggerEventSender* sender_;
  // The last activation this controller fired per Trigger ("ns/name"): the informer may not show
  // the lastScheduleTime just written yet, and a sync from that stale copy must not fire again.
  std::mutex firedMu_;
  std::map<std::string, serverless::SysSeconds> lastFired_;
  client::WorkQueue queue_;
  WorkerPool workers_;
};

// The watcher Deployment of a file Trigger (pure; exposed for tests): `gatewayUrl` is where the
// watcher posts (http://CLUSTER-IP:80).
json fileWatcherDeployment(const json& trigger, const serverless::FileSource& file,
                           const std::string& image, const std::string& gatewayUrl);
std::string fileWatcherName(const std::string& trigger);  // NAME-trigger-watch

}  // namespace minik8s::controllers
