// FunctionController: gives each Function (serverless.minik8s.io/v1) its Deployment NAME-fn
// (instances of the Python runtime with the code ConfigMap at /code) and its ClusterIP Service
// NAME, and writes the Function's status. The gateway (src/serverless/gateway.h) routes requests
// to the instances and owns spec.replicas through the scale subresource; the controller sets
// replicas only when it creates the Deployment (minScale) and afterwards changes only the pod
// template (handler, env, code revision: a rolling update to a new revision).
//   - status: url, replicas/readyReplicas from the Deployment, the Ready condition with a
//     reason (ScaledToZero, Starting, Ready, InvalidSpec, CodeMissing, ImportFailed: read from
//     the log of an instance that runs but never gets ready);
//   - deletes the Deployment and Service of a deleted Function (the garbage collector does not
//     follow owner references to custom resources).
// sync(key) is level-triggered and idempotent. Thread-safe: workers sync one key at a time.
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "client/event_recorder.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "client/work_queue.h"
#include "controllers/common/controller_utils.h"
#include "serverless/function.h"

namespace minik8s::controllers {

struct FunctionControllerOptions {
  int workers = 2;
  const client::Clock* clock = &client::RealClock::instance();
  client::EventRecorder* events = nullptr;  // source function-controller
  std::string runtimeImage = serverless::kDefaultRuntimeImage;
  // An instance running this long without getting ready has its log read for an import error.
  std::chrono::milliseconds importCheckAfter{2000};
};

class FunctionController {
 public:
  // Registers handlers on the informers: construct before they start. `pods` needs the
  // "namespace" index (ControllerManager::Context::indexed).
  FunctionController(client::RestClient& rest, client::Informer& functions,
                     client::Informer& deployments, client::Informer& services,
                     client::Informer& pods, FunctionControllerOptions options = {});
  ~FunctionController();
  void start();
  void stop();

  Status sync(const std::string& key);

 private:
  Status syncDeleted(const std::string& ns, const std::string& name);
  // The import error an instance of the Function logged, "" when none is known.
  std::string importError(const std::string& ns, const std::string& name, bool* recheck);
  void recordEvent(const json& fn, const std::string& type, const std::string& reason,
                   const std::string& message);

  client::RestClient& rest_;
  client::Informer& functions_;
  client::Informer& deployments_;
  client::Informer& services_;
  client::Informer& pods_;
  FunctionControllerOptions options_;
  client::WorkQueue queue_;
  WorkerPool workers_;
  std::mutex mu_;
  std::map<std::string, std::string> importErrors_;  // pod uid -> error ("" = log had none)
};

}  // namespace minik8s::controllers
