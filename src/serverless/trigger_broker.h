// TriggerBroker: the event side of the serverless gateway (Knative Eventing's Broker and
// Trigger model, in the gateway's process):
//
//   POST /broker/<ns>/<broker>    a CloudEvent (binary or structured mode) -> 202; delivered to
//                                 every Trigger of <ns> with spec.event.broker <broker> whose
//                                 filter matches its attributes
//   POST /trigger/<ns>/<trigger>  a CloudEvent for one Trigger (what the file watchers and the
//                                 schedule controller send) -> 202; 409 when its schedule is
//                                 Forbid and the previous event is still being delivered
//
// The answer never waits for the delivery: a TriggerDispatcher delivers in the background with
// the Trigger's retry policy, a Function through the gateway's own /function/ route (so the
// activator starts it from zero), a Workflow by creating a WorkflowExecution; each outcome is
// written to the Trigger's status (delivered/failed, lastFired, deadLetters) and a dead letter
// is also a Warning Event DeliveryFailed on the Trigger (kubectl describe trigger).
// Thread-safe.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "client/event_recorder.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "common/http.h"
#include "common/http_client.h"
#include "serverless/trigger_dispatcher.h"

namespace minik8s::serverless {

// The real target: Functions through a gateway's URL (pooled keep-alive connections; a request
// may take as long as a Function's longest timeout), Workflows through the API.
class GatewayDeliveryTarget : public DeliveryTarget {
 public:
  GatewayDeliveryTarget(client::RestClient& rest, std::string gatewayUrl)
      : rest_(rest), gatewayUrl_(std::move(gatewayUrl)) {}
  void setGatewayUrl(const std::string& url);
  Status deliver(const std::string& ns, const TriggerTarget& target,
                 const CloudEvent& event) override;

 private:
  client::RestClient& rest_;
  std::mutex mu_;
  std::string gatewayUrl_;
  std::vector<std::unique_ptr<http::Client>> idle_;  // to gatewayUrl_
};

// The real recorder: the Trigger's status (read-modify-write, retried on conflicts) and a
// DeliveryFailed Event per dead letter. Outcomes are gathered per Trigger and written by a
// flusher thread every `interval`, so a burst of events costs one status write per Trigger,
// not one per event.
class StatusDeliveryRecorder : public DeliveryRecorder {
 public:
  StatusDeliveryRecorder(client::RestClient& rest, client::EventRecorder* events,
                         std::chrono::milliseconds interval = std::chrono::milliseconds(250));
  ~StatusDeliveryRecorder() override;
  void record(const std::string& ns, const std::string& trigger, const DeliveryOutcome& outcome,
              bool deadLetter) override;
  void start();
  void stop();   // writes what is pending first
  void flush();  // writes what is pending now

 private:
  void write(const std::string& key, const DeliverySummary& summary);
  void flushLoop();

  client::RestClient& rest_;
  client::EventRecorder* events_;
  const std::chrono::milliseconds interval_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::map<std::string, DeliverySummary> pending_;  // "ns/name"
  bool stopping_ = false;
  std::thread flusher_;
  std::mutex writeMu_;  // one flush at a time
};

class TriggerBroker {
 public:
  // `gatewayUrl`: where Functions are reached (the gateway's own listener).
  TriggerBroker(client::RestClient& rest, std::string gatewayUrl, int workers = 4);
  ~TriggerBroker();

  // Starts the Triggers informer (not waited for: until it syncs, or while the Trigger CRD is
  // missing, the routes answer 503) and the delivery workers.
  void start();
  void stop();
  void setGatewayUrl(const std::string& url) { target_.setGatewayUrl(url); }

  static bool handles(const std::string& path);
  void serve(const http::Request& req, http::ResponseWriter& w);

 private:
  client::RestClient& rest_;
  GatewayDeliveryTarget target_;
  std::unique_ptr<client::ApiEventRecorder> events_;
  StatusDeliveryRecorder recorder_;
  TriggerDispatcher dispatcher_;
  client::Informer triggers_;
  int workers_;
};

}  // namespace minik8s::serverless
