// IptablesBackend: the proxy's iptables mode (kube-proxy's default), one `iptables-restore
// --noflush` per sync of the documents ServiceRulesCache builds (proxy_rules.h has the chains).
// On start it makes its chains and the jumps into them and reads which per-service chains a
// previous run left, so the first full sync rewrites them and deletes the stale ones. After a
// failed restore it puts the jumps back and reads the chains again.
//
// Not thread-safe (see proxy_backend.h).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "proxy/iptables.h"
#include "proxy/proxy_backend.h"

namespace minik8s::proxy {

class IptablesBackend : public ProxyBackend {
 public:
  // `removeOtherMode`: removes what the nftables mode left (nullptr: nothing to do).
  IptablesBackend(std::unique_ptr<Iptables> iptables, RuleOptions options,
                  std::function<Status()> removeOtherMode = nullptr);

  const char* mode() const override { return "iptables"; }
  Status start() override;
  std::string prepareFull(const std::vector<json>& services,
                          const std::vector<json>& slices) override;
  std::string preparePartial(const std::map<std::string, ServiceInput>& changed) override;
  Status apply(const std::string& document) override { return iptables_->restore(document); }
  void commit() override;
  void recover() override;
  Status cleanup() override;
  int servicePorts() const override { return rules_.servicePorts(); }
  int endpoints() const override { return rules_.endpoints(); }
  int lastRegenerated() const override { return rules_.lastRegenerated(); }

 private:
  std::unique_ptr<Iptables> iptables_;
  RuleOptions options_;
  std::function<Status()> removeOtherMode_;
  ServiceRulesCache rules_;  // what the last restore that succeeded wrote
  // Per-service chains read from the kernel (at start, after a failure) for the next full sync to
  // delete the stale ones; nullopt: those the last restore that succeeded left.
  std::optional<std::set<std::string>> kernelChains_;
  bool pendingFull_ = false;
};

// Removes the iptables mode's rules and chains from the current network namespace, whoever added
// them.
Status cleanupProxyRules(Iptables& iptables);

}  // namespace minik8s::proxy
