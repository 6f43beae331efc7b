#include "apiserver/registry.h"

#include "api/defaults.h"
#include "api/field_selector.h"
#include "api/selector.h"
#include "api/strategy.h"
#include "api/validation.h"
#include "apiserver/service_allocator.h"
#include "common/base64.h"
#include "common/json_pointer.h"
#include "common/random.h"
#include "common/time_util.h"

namespace minik8s::apiserver {

namespace {

constexpr int kMaxRetries = 16;

// The stored text of `obj`: without metadata.resourceVersion (the key's modRevision is) and
// selfLink, which are removed from `obj` itself rather than from a copy of the whole tree; every
// caller sets the resourceVersion again once the write has its revision.
std::string encodeForStorage(json& obj) {
  auto meta = obj.find("metadata");
  if (meta != obj.end() && meta->is_object()) {
    meta->erase("resourceVersion");
    meta->erase("selfLink");
  }
  return obj.dump();
}

std::string nowString() { return formatRfc3339(Clock::now()); }

bool isTerminalPod(const json& pod) {
  std::string phase = valueAt(pod, "/status/phase", std::string());
  return phase == "Succeeded" || phase == "Failed";
}

bool hasFinalizers(const json& obj) {
  const json& f = obj["metadata"].value("finalizers", json::array());
  if (f.is_array() && !f.empty()) return true;
  // A namespace waits for its content to be removed ("kubernetes" in spec.finalizers).
  if (obj.value("kind", "") == "Namespace") {
    const json sf = valueAt(obj, "/spec/finalizers", json::array());
    return sf.is_array() && !sf.empty();
  }
  return false;
}

Status invalidFromCauses(const api::ResourceInfo& r, const json& obj, std::vector<Cause> causes) {
  std::string name = valueAt(obj, "/metadata/name", std::string());
  Status s = Status::Invalid(r.kind, name, std::move(causes));
  s.withDetails(name, r.group, r.kind);
  return s;
}

}  // namespace

Result<json> decodeStored(const storage::KeyValue& kv) {
  json obj = json::parse(kv.value, nullptr, false);
  if (obj.is_discarded() || !obj.is_object()) {
    return Status::Internal("stored object at " + kv.key + " is not valid JSON");
  }
  obj["metadata"]["resourceVersion"] = std::to_string(kv.modRevision);
  return obj;
}

Registry::Registry(storage::Store& store, const api::Scheme& scheme)
    : store_(store), scheme_(scheme) {}

std::string Registry::prefix(const api::ResourceInfo& r, const std::string& ns) {
  std::string p =
      "/registry/" + (r.group.empty() ? std::string("core") : r.group) + "/" + r.plural + "/";
  if (r.namespaced && !ns.empty()) p += ns + "/";
  return p;
}

std::string Registry::key(const api::ResourceInfo& r, const std::string& ns,
                          const std::string& name) {
  return prefix(r, r.namespaced ? ns : "") + name;
}

const api::ResourceInfo& Registry::storageInfo(const api::ResourceInfo& r) const {
  if (r.storageVersion.empty() || r.storageVersion == r.version) return r;
  const auto* s = scheme_.byResource(r.group, r.storageVersion, r.plural);
  return s ? *s : r;
}

bool Registry::allocatesFor(const api::ResourceInfo& r) const {
  return services_ && r.group.empty() && r.kind == "Service";
}

Status Registry::checkNamespace(const api::ResourceInfo& r, const std::string& ns) {
  if (!r.namespaced) return Status::Ok();
  std::shared_ptr<const json> nsObj;
  if (namespaces_) {
    auto got = namespaces_(ns);
    if (!got.ok()) return got.status();
    nsObj = std::move(got.value());
  } else {
    auto got = store_.get("/registry/core/namespaces/" + ns);
    if (!got.ok()) {
      if (got.status().code() == 404) return Status::NotFound("namespaces", ns);
      return got.status();
    }
    nsObj = std::make_shared<const json>(json::parse(got->value, nullptr, false));
  }
  if (nsObj && nsObj->is_object() &&
      valueAt(*nsObj, "/status/phase", std::string()) == "Terminating") {
    return Status::Forbidden(r.plural + " \"" + valueAt(*nsObj, "/metadata/name", std::string()) +
                             "\" is forbidden: unable to create new content in namespace " + ns +
                             " because it is being terminated");
  }
  return Status::Ok();
}

Result<json> Registry::get(const api::ResourceInfo& r, const std::string& ns,
                           const std::string& name) {
  auto kv = getStored(r, ns, name);
  if (!kv.ok()) return kv.status();
  return decodeStored(*kv);
}

Result<storage::KeyValue> Registry::getStored(const api::ResourceInfo& r, const std::string& ns,
                                              const std::string& name) {
  auto kv = store_.get(key(r, ns, name));
  if (!kv.ok() && kv.status().code() == 404) {
    return Status::NotFound(r.qualifiedResource(), name);
  }
  return kv;
}

Result<ListPage> Registry::list(const api::ResourceInfo& r, const std::string& ns,
                                const ListOptions& opts) {
  ListPage page;
  auto scanned = scanList(r, ns, opts, [&](storage::KeyValue&& kv, json* decoded) {
    if (decoded) {
      page.items.push_back(std::move(*decoded));
      return true;
    }
    auto obj = decodeStored(kv);
    if (!obj.ok()) return false;
    page.items.push_back(std::move(obj.value()));
    return true;
  });
  if (!scanned.ok()) return scanned.status();
  page.revision = scanned->revision;
  page.continueToken = std::move(scanned->continueToken);
  return page;
}

Result<StoredListPage> Registry::listStored(const api::ResourceInfo& r, const std::string& ns,
                                            const ListOptions& opts) {
  StoredListPage page;
  auto scanned = scanList(r, ns, opts, [&](storage::KeyValue&& kv, json*) {
    page.items.push_back(std::move(kv));
    return true;
  });
  if (!scanned.ok()) return scanned.status();
  page.revision = scanned->revision;
  page.continueToken = std::move(scanned->continueToken);
  return page;
}

Result<Registry::ScanResult> Registry::scanList(const api::ResourceInfo& r, const std::string& ns,
                                                const ListOptions& opts, const ScanVisitor& take) {
  std::optional<api::LabelSelector> labels;
  if (!opts.labelSelector.empty()) {
    auto sel = api::LabelSelector::parse(opts.labelSelector);
    if (!sel.ok()) return Status::BadRequest(sel.status().message());
    labels = std::move(sel.value());
  }
  std::optional<api::FieldSelector> fields;
  if (!opts.fieldSelector.empty()) {
    auto sel = api::FieldSelector::parse(opts.fieldSelector);
    if (!sel.ok()) return Status::BadRequest(sel.status().message());
    Status v = api::FieldSelector::validate(r.kind, *sel);
    if (!v.ok()) return v;
    fields = std::move(sel.value());
  }
  const std::string pfx = prefix(r, ns);
  int64_t revision = 0;
  std::string start;
  if (!opts.continueToken.empty()) {
    auto raw = base64::decode(opts.continueToken);
    json tok = raw.ok() ? json::parse(*raw, nullptr, false) : json();
    if (!tok.is_object() || !tok.contains("rv") || !tok.contains("start")) {
      return Status::BadRequest(
          "continue key is not valid: incorrect encoded start resourceVersion (version "
          "meta.k8s.io/v1)");
    }
    revision = tok["rv"].get<int64_t>();
    start = tok["start"].get<std::string>();
  }
  ScanResult out;
  int64_t taken = 0;
  const int64_t chunk = opts.limit > 0 ? std::max<int64_t>(opts.limit, 100) : 0;
  while (true) {
    auto res = store_.list(pfx, revision, chunk, start);
    if (!res.ok()) {
      if (res.status().code() == 410 && !opts.continueToken.empty()) {
        return Status::Expired(
            "The provided continue parameter is too old to display a consistent list result. "
            "You can start a new list without the continue parameter.");
      }
      return res.status();
    }
    revision = res->revision;
    out.revision = revision;
    for (auto& kv : res->items) {
      // The next chunk, or the next page's continue token, starts after this key.
      start = kv.key;
      start.push_back('\0');
      // Selectors need the decoded object; without them the stored text is handed on as is.
      json decoded;
      if (labels || fields) {
        auto obj = decodeStored(kv);
        if (!obj.ok()) continue;
        if (labels && !labels->matches((*obj)["metadata"].value("labels", json()))) continue;
        if (fields) {
          auto m = fields->matches(r.kind, *obj);
          if (!m.ok()) return m.status();
          if (!*m) continue;
        }
        decoded = std::move(obj.value());
      }
      const bool last = (&kv == &res->items.back()) && !res->more;
      if (!take(std::move(kv), decoded.is_null() ? nullptr : &decoded)) continue;
      if (opts.limit > 0 && ++taken >= opts.limit) {
        if (!last) {
          const json token = {{"rv", revision}, {"start", start}};
          out.continueToken = base64::encode(token.dump());
        }
        return out;
      }
    }
    if (!res->more || res->items.empty()) break;
  }
  return out;
}

Result<json> Registry::create(const api::ResourceInfo& r, const std::string& ns, json obj,
                              bool dryRun, std::string* storedText) {
  if (!obj.is_object()) return Status::BadRequest("the object must be a JSON object");
  json& meta = obj["metadata"];
  if (!meta.is_object()) meta = json::object();
  std::string name = meta.value("name", "");
  if (name.empty() && meta.contains("generateName") && meta["generateName"].is_string()) {
    name = meta["generateName"].get<std::string>() + randomSuffix();
    meta["name"] = name;
  }
  if (name.empty()) {
    return invalidFromCauses(r, obj,
                             {{"FieldValueRequired", "metadata.name",
                               "Required value: name or generateName is required"}});
  }
  if (r.namespaced) {
    meta["namespace"] = ns;
  } else {
    meta.erase("namespace");
  }
  meta["uid"] = newUid();
  meta["creationTimestamp"] = nowString();
  meta.erase("resourceVersion");
  meta.erase("deletionTimestamp");
  meta.erase("deletionGracePeriodSeconds");
  meta.erase("selfLink");
  if (obj.contains("spec")) {
    meta["generation"] = 1;
  } else {
    meta.erase("generation");
  }
  api::strategy::prepareForCreate(r, obj);
  api::applyDefaults(r, obj);
  auto causes = api::validate(r, obj, nullptr);
  if (!causes.empty()) return invalidFromCauses(r, obj, std::move(causes));
  Status nsOk = checkNamespace(r, ns);
  if (!nsOk.ok()) return nsOk;
  if (dryRun) return obj;
  if (allocatesFor(r)) {
    if (Status s = services_->allocate(obj); !s.ok()) return s;
  }
  std::string text = encodeForStorage(obj);
  auto rev = store_.create(key(r, ns, name), text);
  if (!rev.ok()) {
    if (allocatesFor(r)) services_->release(obj);
    if (rev.status().code() == 409) {
      Status s = Status::AlreadyExists(r.qualifiedResource(), name);
      s.withDetails(name, r.group, r.plural);
      return s;
    }
    return rev.status();
  }
  obj["metadata"]["resourceVersion"] = std::to_string(*rev);
  if (storedText) *storedText = std::move(text);
  return obj;
}

Result<json> Registry::writeUpdate(const api::ResourceInfo& r, const std::string& ns,
                                   const std::string& name, json obj, const json& old,
                                   int64_t oldRevision, const std::string& subresource, bool dryRun,
                                   std::string* storedText) {
  if (!obj.is_object()) return Status::BadRequest("the object must be a JSON object");
  if (!obj["metadata"].is_object()) obj["metadata"] = json::object();
  json& meta = obj["metadata"];
  if (meta.value("name", name) != name) {
    return Status::BadRequest("the name of the object (" + meta.value("name", "") +
                              ") does not match the name on the URL (" + name + ")");
  }
  meta["name"] = name;
  if (r.namespaced) {
    meta["namespace"] = ns;
  } else {
    meta.erase("namespace");
  }
  obj["apiVersion"] = r.apiVersion();
  obj["kind"] = r.kind;
  api::strategy::prepareForUpdate(r, obj, old, subresource);
  api::applyDefaults(r, obj);
  auto causes = api::validate(r, obj, &old);
  if (!causes.empty()) return invalidFromCauses(r, obj, std::move(causes));

  // An object marked for deletion goes once its last finalizer is removed (pods wait for their
  // node to confirm with a zero grace period instead).
  const bool terminating = obj["metadata"].contains("deletionTimestamp");
  if (terminating && !hasFinalizers(obj) && r.kind != "Pod") {
    if (dryRun) return obj;
    auto del = store_.remove(key(r, ns, name), oldRevision);
    if (!del.ok()) {
      if (del.status().code() == 409) return Status::Conflict(r.qualifiedResource(), name);
      return del.status();
    }
    if (allocatesFor(r)) services_->release(old);
    obj["metadata"]["resourceVersion"] = std::to_string(del->modRevision);
    return obj;
  }
  if (dryRun) return obj;
  const bool allocates = allocatesFor(r) && subresource.empty();
  if (allocates) {
    if (Status s = services_->allocateForUpdate(obj, old); !s.ok()) return s;
  }
  std::string text = encodeForStorage(obj);
  auto rev = store_.update(key(r, ns, name), text, oldRevision);
  if (allocates) services_->releaseNotIn(rev.ok() ? old : obj, rev.ok() ? &obj : &old);
  if (!rev.ok()) {
    if (rev.status().code() == 409) return Status::Conflict(r.qualifiedResource(), name);
    if (rev.status().code() == 404) return Status::NotFound(r.qualifiedResource(), name);
    return rev.status();
  }
  obj["metadata"]["resourceVersion"] = std::to_string(*rev);
  if (storedText) *storedText = std::move(text);
  return obj;
}

Result<json> Registry::update(const api::ResourceInfo& r, const std::string& ns,
                              const std::string& name, json obj, const std::string& subresource,
                              bool dryRun, std::string* storedText) {
  auto kv = store_.get(key(r, ns, name));
  if (!kv.ok()) {
    if (kv.status().code() == 404) return Status::NotFound(r.qualifiedResource(), name);
    return kv.status();
  }
  auto old = decodeStored(*kv);
  if (!old.ok()) return old.status();
  std::string rv =
      obj.is_object() ? valueAt(obj, "/metadata/resourceVersion", std::string()) : std::string();
  if (!rv.empty() && rv != std::to_string(kv->modRevision)) {
    return Status::Conflict(r.qualifiedResource(), name);
  }
  return writeUpdate(r, ns, name, std::move(obj), *old, kv->modRevision, subresource, dryRun,
                     storedText);
}

Result<json> Registry::guaranteedUpdate(const api::ResourceInfo& r, const std::string& ns,
                                        const std::string& name, const UpdateFunc& mutate,
                                        const std::string& subresource, bool dryRun,
                                        std::string* storedText) {
  for (int attempt = 0; attempt < kMaxRetries; ++attempt) {
    auto kv = store_.get(key(r, ns, name));
    if (!kv.ok()) {
      if (kv.status().code() == 404) return Status::NotFound(r.qualifiedResource(), name);
      return kv.status();
    }
    auto old = decodeStored(*kv);
    if (!old.ok()) return old.status();
    auto desired = mutate(*old);
    if (!desired.ok()) return desired.status();
    // A resourceVersion the mutation asked for explicitly is a precondition, not retried.
    std::string rv = valueAt(*desired, "/metadata/resourceVersion", std::string());
    const bool explicitRv = !rv.empty() && rv != std::to_string(kv->modRevision);
    if (explicitRv) return Status::Conflict(r.qualifiedResource(), name);
    auto res = writeUpdate(r, ns, name, std::move(desired.value()), *old, kv->modRevision,
                           subresource, dryRun, storedText);
    if (res.ok() || res.status().reason() != "Conflict") return res;
  }
  return Status::Conflict(r.qualifiedResource(), name);
}

Result<DeleteResult> Registry::remove(const api::ResourceInfo& r, const std::string& ns,
                                      const std::string& name, const DeleteOptions& opts) {
  for (int attempt = 0; attempt < kMaxRetries; ++attempt) {
    auto kv = store_.get(key(r, ns, name));
    if (!kv.ok()) {
      if (kv.status().code() == 404) return Status::NotFound(r.qualifiedResource(), name);
      return kv.status();
    }
    auto decoded = decodeStored(*kv);
    if (!decoded.ok()) return decoded.status();
    json obj = std::move(decoded.value());
    json& meta = obj["metadata"];
    if (!opts.preconditionUid.empty() && meta.value("uid", "") != opts.preconditionUid) {
      return Status::ConflictMessage(
          "Precondition failed: UID in precondition: " + opts.preconditionUid +
          ", UID in object meta: " + meta.value("uid", ""));
    }
    if (!opts.preconditionResourceVersion.empty() &&
        opts.preconditionResourceVersion != std::to_string(kv->modRevision)) {
      return Status::ConflictMessage(
          "Precondition failed: ResourceVersion in precondition: " +
          opts.preconditionResourceVersion +
          ", ResourceVersion in object meta: " + std::to_string(kv->modRevision));
    }

    if (opts.propagationPolicy == "Foreground" || opts.propagationPolicy == "Orphan") {
      const std::string f =
          opts.propagationPolicy == "Foreground" ? "foregroundDeletion" : "orphan";
      json& fins = meta["finalizers"];
      if (!fins.is_array()) fins = json::array();
      bool present = false;
      for (const auto& x : fins) present = present || x == f;
      if (!present && !meta.contains("deletionTimestamp")) fins.push_back(f);
      if (fins.empty()) meta.erase("finalizers");
    }
    bool markOnly = hasFinalizers(obj);
    if (r.kind == "Pod" && !markOnly) {
      int64_t grace = opts.gracePeriodSeconds.value_or(
          valueAt(obj, "/spec/terminationGracePeriodSeconds", int64_t{30}));
      const bool scheduled = !valueAt(obj, "/spec/nodeName", std::string()).empty();
      markOnly = scheduled && grace > 0 && !isTerminalPod(obj);
      if (markOnly) {
        if (meta.contains("deletionTimestamp") &&
            meta.value("deletionGracePeriodSeconds", int64_t{0}) <= grace) {
          return DeleteResult{obj, false};  // already terminating, no shorter grace asked
        }
        meta["deletionTimestamp"] = formatRfc3339(Clock::now() + std::chrono::seconds(grace));
        meta["deletionGracePeriodSeconds"] = grace;
      }
    } else if (markOnly) {
      if (meta.contains("deletionTimestamp")) return DeleteResult{obj, false};
      meta["deletionTimestamp"] = nowString();
      meta["deletionGracePeriodSeconds"] = 0;
      if (r.kind == "Namespace") obj["status"]["phase"] = "Terminating";
    }
    if (markOnly) {
      if (opts.dryRun) return DeleteResult{obj, false};
      auto rev = store_.update(key(r, ns, name), encodeForStorage(obj), kv->modRevision);
      if (!rev.ok()) {
        if (rev.status().code() == 409 || rev.status().code() == 404) continue;
        return rev.status();
      }
      obj["metadata"]["resourceVersion"] = std::to_string(*rev);
      return DeleteResult{obj, false};
    }
    if (opts.dryRun) return DeleteResult{obj, true};
    auto del = store_.remove(key(r, ns, name), kv->modRevision);
    if (!del.ok()) {
      if (del.status().code() == 409) continue;
      if (del.status().code() == 404) return Status::NotFound(r.qualifiedResource(), name);
      return del.status();
    }
    if (allocatesFor(r)) services_->release(obj);
    obj["metadata"]["resourceVersion"] = std::to_string(del->modRevision);
    return DeleteResult{obj, true};
  }
  return Status::Conflict(r.qualifiedResource(), name);
}

}  // namespace minik8s::apiserver
