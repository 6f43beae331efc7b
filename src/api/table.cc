#include "api/table.h"

#include "api/resource_type.h"
#include "api/resources/builders.h"

namespace minik8s::api {
namespace {

// The printer of `kind`: the first built-in resource of that kind with cells of its own.
const ResourceType* printerOf(const std::string& kind) {
  for (const auto& t : builtinResourceTypes()) {
    if (t.info.kind == kind && t.cells) return &t;
  }
  return nullptr;
}

}  // namespace

std::string humanDuration(std::chrono::seconds d) {
  int64_t seconds = d.count();
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 120) return std::to_string(seconds) + "s";
  int64_t minutes = seconds / 60;
  if (minutes < 10) {
    int64_t s = seconds % 60;
    return std::to_string(minutes) + "m" + (s == 0 ? "" : std::to_string(s) + "s");
  }
  if (minutes < 180) return std::to_string(minutes) + "m";
  int64_t hours = minutes / 60;
  if (hours < 8) {
    int64_t m = minutes % 60;
    return std::to_string(hours) + "h" + (m == 0 ? "" : std::to_string(m) + "m");
  }
  if (hours < 48) return std::to_string(hours) + "h";
  if (hours < 24 * 8) {
    int64_t h = hours % 24;
    return std::to_string(hours / 24) + "d" + (h == 0 ? "" : std::to_string(h) + "h");
  }
  if (hours < 24 * 365 * 2) return std::to_string(hours / 24) + "d";
  if (hours < 24 * 365 * 8) {
    int64_t days = (hours / 24) % 365;
    return std::to_string(hours / 24 / 365) + "y" + (days == 0 ? "" : std::to_string(days) + "d");
  }
  return std::to_string(hours / 24 / 365) + "y";
}

std::vector<TableColumn> tableColumns(const std::string& kind) {
  if (const ResourceType* t = printerOf(kind)) return t->columns;
  return {resources::nameColumn(), resources::ageColumn()};
}

json tableColumnDefinitions(const std::string& kind) {
  json out = json::array();
  for (const auto& c : tableColumns(kind)) {
    out.push_back({{"name", c.name},
                   {"type", c.type},
                   {"format", c.format},
                   {"description", c.description},
                   {"priority", c.priority}});
  }
  return out;
}

json tableCells(const std::string& kind, const json& input,
                std::chrono::system_clock::time_point now) {
  static const json kEmpty = json::object();
  const json& obj = input.is_object() ? input : kEmpty;  // printers may assume an object
  const json& meta = printers::object(obj, "metadata");
  if (const ResourceType* t = printerOf(kind)) return t->cells(obj, meta, now);
  return json::array({printers::str(meta, "name"), resources::age(meta, now)});
}

}  // namespace minik8s::api
