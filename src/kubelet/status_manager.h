// StatusManager: writes pod statuses to the API server, only when they changed.
//
// setPodStatus() compares the computed status with the last one written (or, after an agent
// restart, with the status the API already holds) and when they differ PUTs pods/status on the
// freshest copy of the pod, retrying once on a conflict. It never writes the status of a pod
// whose UID differs (a pod deleted and re-created under the same name). Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "client/rest_client.h"

namespace minik8s::kubelet {

class StatusManager {
 public:
  explicit StatusManager(client::RestClient& client) : client_(client) {}

  // `pod` is the API object the status was computed for (its status is the one last seen).
  Status setPodStatus(const json& pod, const json& status);
  void forgetPod(const std::string& podUid);

  // Fields compared to decide whether a write is needed (exposed for tests).
  static bool sameStatus(const json& a, const json& b);

 private:
  client::RestClient& client_;
  std::mutex mu_;
  std::map<std::string, json> written_;  // by pod uid
};

}  // namespace minik8s::kubelet
