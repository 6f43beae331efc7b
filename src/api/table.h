// Server-side Table printing for `kubectl get` (meta.k8s.io/v1 Table).
//
// kubectl asks for `as=Table` and prints the cells verbatim, so the columns and their contents
// must match upstream's printers (pkg/printers/internalversion/printers.go): "1/1", "Running",
// "2 (5m ago)", "80:30080/TCP", "cpu: 30%/50%", ages as "5m" or "2d3h"... Every column is
// computed, including the priority-1 ones kubectl only shows with `-o wide`, as the real API
// server does. Kinds without a dedicated printer get Name and Age. Pure functions, thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/status.h"

namespace minik8s::api {

struct TableColumn {
  std::string name;    // "Name", "Ready", "Port(s)"
  std::string type;    // "string", "integer", "boolean"
  std::string format;  // "name" for the Name column, else ""
  std::string description;
  int priority = 0;  // 0: always shown; 1: only with -o wide
};

// Columns for a kind ("Pod", "Deployment", ...); unknown kinds get Name and Age.
std::vector<TableColumn> tableColumns(const std::string& kind);

// The columnDefinitions array of a Table: [{"name","type","format","description","priority"}].
json tableColumnDefinitions(const std::string& kind);

// One row's cells for `obj`, aligned with tableColumns(kind): strings, integers or booleans.
// `now` is the reference for ages ("5m") and relative times ("2 (5m ago)").
json tableCells(const std::string& kind, const json& obj,
                std::chrono::system_clock::time_point now);

// kubectl's HumanDuration: "45s", "3m20s", "15m", "4h5m", "20h", "3d4h", "30d", "3y20d", "9y".
// Below -1s it is "<invalid>", between -1s and 0 "0s".
std::string humanDuration(std::chrono::seconds d);

}  // namespace minik8s::api
