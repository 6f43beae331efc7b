// Registry: Kubernetes object semantics on top of a Store.
//
// Every object passes through here on its way to and from storage: keys derived from
// group/resource/namespace/name, metadata managed by the server (uid, creationTimestamp,
// generation, resourceVersion = the store's modRevision), optimistic concurrency, per-kind
// strategies (status reset on create, status kept on a main-resource update, generation bumped on
// spec changes), defaulting and validation, finalizers and graceful deletion. Objects handed in and
// out are in the resource's storage version; the HTTP layer converts. Thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <optional>

#include "api/scheme.h"
#include "common/status.h"
#include "storage/store.h"

namespace minik8s::apiserver {

class ServiceAllocator;

struct ListOptions {
  std::string labelSelector;
  std::string fieldSelector;
  int64_t limit = 0;
  std::string continueToken;
};

struct ListPage {
  std::vector<json> items;
  int64_t revision = 0;
  std::string continueToken;  // "" when complete
};

// A page of stored key-values, for answers written from the stored text (stored_json.h).
struct StoredListPage {
  std::vector<storage::KeyValue> items;
  int64_t revision = 0;
  std::string continueToken;  // "" when complete
};

struct DeleteOptions {
  std::optional<int64_t> gracePeriodSeconds;
  std::string preconditionUid;
  std::string preconditionResourceVersion;
  // Background (default): delete now, the garbage collector removes dependents later.
  // Foreground: keep the object (finalizer foregroundDeletion) until its dependents are gone.
  // Orphan: keep it (finalizer orphan) until the garbage collector has released dependents.
  std::string propagationPolicy;
  bool dryRun = false;
};

struct DeleteResult {
  json object;           // the object as deleted, or as marked for deletion
  bool deleted = false;  // false when only marked (finalizers, graceful pod deletion)
};

// Makes the desired object from the current one (as stored; a function that changes it takes its
// own copy); returning a failure aborts the update.
using UpdateFunc = std::function<Result<json>(const json& current)>;

class Registry {
 public:
  Registry(storage::Store& store, const api::Scheme& scheme);

  static std::string key(const api::ResourceInfo& r, const std::string& ns,
                         const std::string& name);
  // Prefix of every key of the resource in `ns` ("" = all namespaces).
  static std::string prefix(const api::ResourceInfo& r, const std::string& ns);
  // The ResourceInfo objects of `r` are stored as.
  const api::ResourceInfo& storageInfo(const api::ResourceInfo& r) const;

  Result<json> get(const api::ResourceInfo& r, const std::string& ns, const std::string& name);
  // The same object as its stored key-value (answers written from the text: stored_json.h).
  Result<storage::KeyValue> getStored(const api::ResourceInfo& r, const std::string& ns,
                                      const std::string& name);
  Result<ListPage> list(const api::ResourceInfo& r, const std::string& ns, const ListOptions& opts);
  // The same page as list(), as the stored key-values: only selectors decode an object.
  Result<StoredListPage> listStored(const api::ResourceInfo& r, const std::string& ns,
                                    const ListOptions& opts);
  // The writes below return the object as stored, with its resourceVersion. When `storedText`
  // is given and the object was stored, it receives the stored text, so that the answer can be
  // written from it (stored_json.h) instead of encoding the object a second time.
  Result<json> create(const api::ResourceInfo& r, const std::string& ns, json obj,
                      bool dryRun = false, std::string* storedText = nullptr);
  // A PUT: `obj` replaces the stored object (a main-resource PUT keeps the stored status; a
  // "status" subresource PUT changes only the status). `obj`'s resourceVersion, when set, must
  // match.
  Result<json> update(const api::ResourceInfo& r, const std::string& ns, const std::string& name,
                      json obj, const std::string& subresource = "", bool dryRun = false,
                      std::string* storedText = nullptr);
  // Read-modify-write with retries on conflict (patch, scale, binding). When `expectedRv` is not
  // empty the update fails with Conflict instead of retrying.
  Result<json> guaranteedUpdate(const api::ResourceInfo& r, const std::string& ns,
                                const std::string& name, const UpdateFunc& mutate,
                                const std::string& subresource = "", bool dryRun = false,
                                std::string* storedText = nullptr);
  Result<DeleteResult> remove(const api::ResourceInfo& r, const std::string& ns,
                              const std::string& name, const DeleteOptions& opts);

  // Services get their clusterIP and nodePorts from `allocator` on create and update, and give
  // them back on delete. Set once before serving; without one they are stored as given.
  void setServiceAllocator(ServiceAllocator* allocator) { services_ = allocator; }

  // Where create() reads the namespace it checks (it exists and is not Terminating), as
  // kube-apiserver's NamespaceLifecycle plugin reads its informer: the server gives the admission
  // plugins' AdmissionLister, which answers from memory, reads the store for a namespace it does
  // not hold and after this server's own namespace writes (admission_lister.h). Without one, the
  // store. Set once before serving.
  using NamespaceReader = std::function<Result<std::shared_ptr<const json>>(const std::string& ns)>;
  void setNamespaceReader(NamespaceReader reader) { namespaces_ = std::move(reader); }

  storage::Store& store() { return store_; }
  const api::Scheme& scheme() const { return scheme_; }

 private:
  struct ScanResult {
    int64_t revision = 0;
    std::string continueToken;
  };
  // Takes a key-value that passed the selectors (with its decoded object when the selectors
  // needed one, else null); false when it could not be used (not counted against the limit).
  using ScanVisitor = std::function<bool(storage::KeyValue&&, json* decoded)>;
  Result<ScanResult> scanList(const api::ResourceInfo& r, const std::string& ns,
                              const ListOptions& opts, const ScanVisitor& take);
  Result<json> writeUpdate(const api::ResourceInfo& r, const std::string& ns,
                           const std::string& name, json obj, const json& old, int64_t oldRevision,
                           const std::string& subresource, bool dryRun, std::string* storedText);
  Status checkNamespace(const api::ResourceInfo& r, const std::string& ns);

  bool allocatesFor(const api::ResourceInfo& r) const;

  storage::Store& store_;
  const api::Scheme& scheme_;
  ServiceAllocator* services_ = nullptr;
  NamespaceReader namespaces_;
};

// Sets metadata.resourceVersion from the store revision on a decoded value.
Result<json> decodeStored(const storage::KeyValue& kv);

}  // namespace minik8s::apiserver
