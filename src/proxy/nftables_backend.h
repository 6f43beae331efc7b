// NftablesBackend: the proxy's nftables mode (kube-proxy's `--proxy-mode=nftables`): one `nft -f`
// transaction per sync into the table `ip kube-proxy` (nft_rules.h has its layout). It keeps the
// rules of every service as the last transaction that succeeded wrote them, so a partial sync
// builds only the changed services and writes only their chains and elements; the hairpin set's
// addresses are counted across services (a pod behind two services stays until both let it go).
// On start, and after a failed transaction, it reads the table's chains and sets from the kernel
// so the next full sync deletes the stale ones.
//
// Not thread-safe (see proxy_backend.h).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "proxy/nft_rules.h"
#include "proxy/nftables.h"
#include "proxy/proxy_backend.h"

namespace minik8s::proxy {

class NftablesBackend : public ProxyBackend {
 public:
  // `removeOtherMode`: removes what the iptables mode left (nullptr: nothing to do).
  NftablesBackend(std::unique_ptr<Nftables> nft, RuleOptions options,
                  std::function<Status()> removeOtherMode = nullptr);

  const char* mode() const override { return "nftables"; }
  Status start() override;
  std::string prepareFull(const std::vector<json>& services,
                          const std::vector<json>& slices) override;
  std::string preparePartial(const std::map<std::string, ServiceInput>& changed) override;
  Status apply(const std::string& document) override { return nft_->apply(document); }
  void commit() override;
  void recover() override;
  Status cleanup() override;
  int servicePorts() const override { return servicePorts_; }
  int endpoints() const override { return endpoints_; }
  int lastRegenerated() const override { return lastRegenerated_; }

 private:
  // Reads the table's per-service chains and affinity sets; false when they cannot be read.
  bool readKernel();

  std::unique_ptr<Nftables> nft_;
  RuleOptions options_;
  std::function<Status()> removeOtherMode_;

  std::map<std::string, NftServiceRules, std::less<>> applied_;  // by serviceKey
  std::map<std::string, int, std::less<>> hairpin_;              // address -> services using it
  int servicePorts_ = 0, endpoints_ = 0;
  // What the kernel holds beyond applied_ (read at start, after a failure); nullopt: applied_.
  std::optional<NftObjects> kernel_;

  // The prepared sync: new rules of its services (empty ones: the service is gone).
  std::map<std::string, NftServiceRules, std::less<>> pending_;
  bool pendingFull_ = false;
  int lastRegenerated_ = 0;
};

}  // namespace minik8s::proxy
