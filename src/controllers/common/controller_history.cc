#include "controllers/common/controller_history.h"

#include <algorithm>

#include "api/object_meta.h"
#include "common/json_pointer.h"
#include "controllers/common/controller_utils.h"
#include "controllers/deployment/rolling_update.h"

namespace minik8s::controllers {

using api::labelValue;
using api::nameOf;
using api::stringAt;
using api::uidOf;

const client::Resource kControllerRevisions{"apps", "v1", "controllerrevisions", true};

std::string revisionHashOf(const json& obj) {
  return labelValue(obj, kControllerRevisionHashLabel);
}

json revisionTemplate(const json& revision) {
  json t = valueAt(revision, "/data/spec/template", json::object());
  if (t.is_object()) t.erase("$patch");
  return t;
}

Result<OwnerRevisions> syncControllerRevisions(client::RestClient& rest,
                                               client::Informer& revisions, const json& owner,
                                               const client::Resource& ownerResource,
                                               const std::set<std::string>& inUse) {
  const std::string ns = stringAt(owner, "/metadata/namespace");
  const std::string uid = uidOf(owner);
  const json templ = valueAt(owner, "/spec/template", json::object());
  json patchTemplate = templ;
  patchTemplate["$patch"] = "replace";
  const json wantData = {{"spec", {{"template", patchTemplate}}}};
  OwnerRevisions out;
  for (const auto& r : revisions.byIndexShared("namespace", ns)) {
    auto ref = controllerRef(*r);
    if (ref && ref->value("uid", "") == uid) out.all.push_back(*r);
  }
  std::sort(out.all.begin(), out.all.end(), [](const json& a, const json& b) {
    return a.value("revision", int64_t{0}) < b.value("revision", int64_t{0});
  });
  const int64_t maxRevision = out.all.empty() ? 0 : out.all.back().value("revision", int64_t{0});
  const json* current = nullptr;
  for (const auto& r : out.all) {
    if (r.value("data", json()) == wantData) current = &r;
  }
  if (current) {
    out.current = *current;
    if (current->value("revision", int64_t{0}) < maxRevision) {
      // A rollback made an old template current again: it becomes the newest revision.
      json renumbered = *current;
      renumbered["revision"] = maxRevision + 1;
      auto u = rest.update(kControllerRevisions, renumbered);
      if (!u.ok()) return u.status();
      out.current = *u;
    }
  } else {
    const int64_t collisions = valueAt(owner, "/status/collisionCount", int64_t{0});
    const std::string hash = podTemplateHash(templ, collisions);
    json labels = valueAt(templ, "/metadata/labels", json::object());
    labels[kControllerRevisionHashLabel] = hash;
    json revision = {{"apiVersion", "apps/v1"},
                     {"kind", "ControllerRevision"},
                     {"metadata",
                      {{"name", nameOf(owner) + "-" + hash},
                       {"namespace", ns},
                       {"labels", labels},
                       {"ownerReferences", json::array({makeControllerRef(owner)})}}},
                     {"data", wantData},
                     {"revision", maxRevision + 1}};
    const json annotations = valueAt(owner, "/metadata/annotations", json::object());
    if (annotations.is_object() && annotations.contains("kubernetes.io/change-cause")) {
      revision["metadata"]["annotations"] = {
          {"kubernetes.io/change-cause", annotations["kubernetes.io/change-cause"]}};
    }
    auto created = rest.create(kControllerRevisions, ns, revision);
    if (created.ok()) {
      out.current = *created;
    } else {
      if (created.status().reason() != "AlreadyExists") return created.status();
      auto existing = rest.get(kControllerRevisions, ns, nameOf(owner) + "-" + hash);
      if (!existing.ok()) return existing.status();
      if (existing->value("data", json()) != wantData) {
        json updated = owner;
        updated["status"]["collisionCount"] = collisions + 1;
        auto u = rest.update(ownerResource, updated, "status");
        if (!u.ok()) return u.status();
        return Status::ConflictMessage("controller revision hash collision for " + nameOf(owner));
      }
      out.current = *existing;  // the cache had not seen it yet
    }
  }
  // History: keep revisionHistoryLimit old revisions besides the current one and those in use.
  const int64_t limit = valueAt(owner, "/spec/revisionHistoryLimit", int64_t{10});
  const std::string currentName = nameOf(out.current);
  int64_t old = 0;
  for (const auto& r : out.all) old += nameOf(r) != currentName;
  for (const auto& r : out.all) {
    if (old <= limit) break;
    if (nameOf(r) == currentName || inUse.count(revisionHashOf(r)) || inUse.count(nameOf(r)))
      continue;
    auto d = rest.remove(kControllerRevisions, ns, nameOf(r));
    if (!d.ok() && d.status().code() != 404) return d.status();
    --old;
  }
  return out;
}

}  // namespace minik8s::controllers
