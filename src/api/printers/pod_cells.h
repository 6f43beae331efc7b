// The Pod row of `kubectl get pods`: Ready, the aggregate Status (ContainerCreating,
// CrashLoopBackOff, Init:0/1, Terminating, ...) and Restarts, as upstream's printPod computes
// them. Internal to src/api; thread-safe.
#pragma once

#include "api/printers/print_format.h"

namespace minik8s::api::printers {

// Name, Ready, Status, Restarts, Age, IP, Node, Nominated Node, Readiness Gates.
json podCells(const json& pod, TimePoint now);

}  // namespace minik8s::api::printers
