#include "api/printers/quota_cells.h"

#include "api/quantity.h"

namespace minik8s::api::printers {

namespace {

std::string canonical(const json& value) {
  auto q = Quantity::fromJson(value);
  return q.ok() ? q->toString() : (value.is_string() ? value.get<std::string>() : value.dump());
}

}  // namespace

json resourceQuotaCells(const json& quota, TimePoint now) {
  const json& meta = object(quota, "metadata");
  const json& status = object(quota, "status");
  const json& hard = object(status, "hard");
  const json& used = object(status, "used");
  std::string request, limit;
  for (const auto& [name, h] : hard.items()) {  // sorted by name
    std::string& column = name.rfind("limits.", 0) == 0 ? limit : request;
    const std::string u = used.contains(name) ? canonical(used[name]) : "0";
    column += (column.empty() ? "" : ", ") + name + ": " + u + "/" + canonical(h);
  }
  return json::array(
      {str(meta, "name"), since(meta.value("creationTimestamp", json()), now), request, limit});
}

json limitRangeCells(const json& limitRange) {
  const json& meta = object(limitRange, "metadata");
  return json::array({str(meta, "name"), str(meta, "creationTimestamp")});
}

}  // namespace minik8s::api::printers
