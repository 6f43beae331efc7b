// CustomResourceManager: serves what the stored CustomResourceDefinitions define.
//
// reconcile() reads every CRD and brings the API server in line with them, as kube-apiserver's
// apiextensions controllers do: an accepted CRD's served versions become resources of the
// server's scheme (discovery, OpenAPI, routing, validation and printing follow from there), its
// status gets acceptedNames, the NamesAccepted and Established conditions and storedVersions; a
// CRD whose names clash with a served resource gets NamesAccepted=False and is not served. A
// deleted CRD (it carries the customresourcecleanup finalizer from its creation) is marked
// Terminating, all its objects are deleted, then the finalizer is removed and its resources go.
// The API server calls reconcile() after each CRD write it serves (so a created CRD is served
// when the response arrives) and a background thread follows CRD changes made through other
// servers sharing the store, and retries the clean-up of terminating CRDs. Thread-safe;
// reconciles are serialised.
#pragma once

#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "api/scheme.h"
#include "apiserver/registry.h"
#include "apiserver/watch_cache.h"

namespace minik8s::apiserver {

class CustomResourceManager {
 public:
  CustomResourceManager(Registry& registry, api::Scheme& scheme, WatchCache& watchCache);
  ~CustomResourceManager();
  CustomResourceManager(const CustomResourceManager&) = delete;
  CustomResourceManager& operator=(const CustomResourceManager&) = delete;

  // The first reconcile (the CRDs stored before a restart are served at once), then the thread.
  Status start();
  void stop();

  void reconcile();

  // Whether `r` is the CustomResourceDefinition resource itself.
  static bool isCrdResource(const api::ResourceInfo& r);

 private:
  struct Installed {
    std::string group, plural;
    std::string version;  // uid + generation of the CRD the resources were built from
  };

  void run();
  // Returns true while objects of a terminating CRD remain.
  bool reconcileLocked();
  bool cleanUp(const json& crd, const api::ResourceInfo& crdInfo);
  void writeStatus(const api::ResourceInfo& crdInfo, const json& crd, json status);
  // "" when the CRD's names are free, else why not.
  std::string nameConflict(const json& crd) const;

  Registry& registry_;
  api::Scheme& scheme_;
  WatchCache& watchCache_;
  std::mutex reconcileMu_;
  std::map<std::string, Installed> installed_;  // by CRD name
  bool terminating_ = false;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace minik8s::apiserver
