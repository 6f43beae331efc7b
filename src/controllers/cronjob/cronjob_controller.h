// CronJobController: creates Jobs from batch/v1 CronJobs on their schedule, as
// kube-controller-manager's cronjob controller (v2).
//
// sync(key) is level-triggered: it reconciles status.active with the Jobs the CronJob owns
// (SawCompletedJob, lastSuccessfulTime), deletes finished Jobs beyond the history limits, then,
// unless suspended, finds the most recent scheduled time since lastScheduleTime (or creation)
// that has not run: at most one catch-up run after an outage (TooManyMissedTimes when more than
// 100 were missed), none when startingDeadlineSeconds has passed (MissSchedule). The Job's name
// is NAME-<scheduled unix minutes>, so a restart between the create and the status write never
// runs a time twice. concurrencyPolicy Allow / Forbid (JobAlreadyActive) / Replace. Schedules are
// evaluated in spec.timeZone (default UTC). It requeues itself for the next scheduled time.
// Thread-safe: sync runs on several workers, one key at a time.
#pragma once

#include <chrono>
#include <string>

#include "client/event_recorder.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "client/work_queue.h"
#include "controllers/common/controller_utils.h"

namespace minik8s::controllers {

extern const client::Resource kCronJobs;  // batch/v1 cronjobs

struct CronJobControllerOptions {
  int workers = 1;
  const client::Clock* clock = &client::RealClock::instance();  // queue delays
  NowFn now = [] { return WallClock::now(); };                  // the schedule's clock
  client::EventRecorder* events = nullptr;                      // source cronjob-controller
};

class CronJobController {
 public:
  // Registers handlers on the informers: construct before they start.
  CronJobController(client::RestClient& rest, client::Informer& cronJobs, client::Informer& jobs,
                    CronJobControllerOptions options = {});
  ~CronJobController();
  void start();
  void stop();

  Status sync(const std::string& key);

 private:
  void recordEvent(const json& cronJob, const std::string& type, const std::string& reason,
                   const std::string& message);
  void requeueAt(const std::string& key, WallClock::time_point at);

  client::RestClient& rest_;
  client::Informer& cronJobs_;
  client::Informer& jobs_;
  CronJobControllerOptions options_;
  client::WorkQueue queue_;
  WorkerPool workers_;
};

}  // namespace minik8s::controllers
