// ProxyBackend: what one mode of the service proxy writes into the kernel. ServiceProxy's sync loop
// (informers, coalescing, full or partial syncs) drives it; IptablesBackend (iptables_backend.h)
// and NftablesBackend (nftables_backend.h) implement it. Each sync is a transaction: prepareFull()
// or preparePartial() builds a document and holds the new rules pending, apply() writes it, then
// commit() (it is in the kernel) or recover() (it failed: the kernel's state is read again and the
// next sync must be full).
//
// Not thread-safe: owned by the proxy's sync thread (start() and cleanup() by its owner).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "proxy/service_rules_cache.h"

namespace minik8s::proxy {

class ProxyBackend {
 public:
  virtual ~ProxyBackend() = default;
  // "iptables" or "nftables", for messages.
  virtual const char* mode() const = 0;
  // Writes the fixed rules (and jumps), removes what the other mode left, reads which of its own
  // objects a previous run left (the first full sync deletes those no longer used).
  virtual Status start() = 0;
  // Every service's rules; the document also deletes what is stale.
  virtual std::string prepareFull(const std::vector<json>& services,
                                  const std::vector<json>& slices) = 0;
  // Only the services of `changed`; "" when nothing differs.
  virtual std::string preparePartial(const std::map<std::string, ServiceInput>& changed) = 0;
  virtual Status apply(const std::string& document) = 0;
  virtual void commit() = 0;
  virtual void recover() = 0;
  // Removes every rule, chain and table of this mode.
  virtual Status cleanup() = 0;

  // Of the rules in the kernel.
  virtual int servicePorts() const = 0;
  virtual int endpoints() const = 0;
  // Services whose rules the last prepare built (every one for a full sync).
  virtual int lastRegenerated() const = 0;
};

}  // namespace minik8s::proxy
