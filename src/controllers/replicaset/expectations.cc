#include "controllers/replicaset/expectations.h"

namespace minik8s::controllers {

bool ControllerExpectations::satisfied(const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return true;
  const Entry& e = it->second;
  if (e.adds <= 0 && e.deletes.empty()) return true;
  return clock_.now() - e.setAt > ttl_;
}

void ControllerExpectations::expectCreations(const std::string& key, int count) {
  std::lock_guard lock(mu_);
  Entry& e = entries_[key];
  e.adds = count;
  e.setAt = clock_.now();
}

void ControllerExpectations::expectDeletions(const std::string& key,
                                             const std::set<std::string>& podUids) {
  std::lock_guard lock(mu_);
  Entry& e = entries_[key];
  e.deletes = podUids;
  e.setAt = clock_.now();
}

void ControllerExpectations::creationObserved(const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  if (it != entries_.end() && it->second.adds > 0) --it->second.adds;
}

void ControllerExpectations::deletionObserved(const std::string& key, const std::string& uid) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  if (it != entries_.end()) it->second.deletes.erase(uid);
}

void ControllerExpectations::erase(const std::string& key) {
  std::lock_guard lock(mu_);
  entries_.erase(key);
}

int ControllerExpectations::pendingCreations(const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  return it == entries_.end() ? 0 : it->second.adds;
}

size_t ControllerExpectations::pendingDeletions(const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  return it == entries_.end() ? 0 : it->second.deletes.size();
}

}  // namespace minik8s::controllers
