// Iptables: the seam between the service proxy and the kernel's packet filter. ExecIptables runs
// the iptables-restore / iptables-save / iptables programs of the current network namespace (the
// agent runs inside its node's namespace); tests inject a fake.
//
// Programs run through common/command.h. Implementations must be safe to call from one thread at a
// time (the proxy's sync thread, or cleanup() after stop()).
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace minik8s::proxy {

class Iptables {
 public:
  virtual ~Iptables() = default;
  // Applies an iptables-restore document with --noflush: one atomic transaction per table, chains
  // it declares are flushed, other chains are left alone.
  virtual Status restore(const std::string& rules) = 0;
  // iptables-save output of one table ("nat", "filter").
  virtual Result<std::string> save(const std::string& table) = 0;
  // Makes sure `chain` of `table` holds a rule with exactly these arguments; if missing it is
  // inserted first in the chain. The arguments are the rule spec without -A/-I/-C.
  virtual Status ensureRule(const std::string& table, const std::string& chain,
                            const std::vector<std::string>& rule) = 0;
  // Deletes every copy of that rule; OK when there is none.
  virtual Status deleteRule(const std::string& table, const std::string& chain,
                            const std::vector<std::string>& rule) = 0;
};

// A jump from a built-in chain into an owner's chain: {table, chain, rule spec}.
struct JumpRule {
  std::string table;
  std::string chain;
  std::vector<std::string> rule;
};

// Makes sure every jump exists (inserted first in its chain when missing).
Status ensureJumps(Iptables& iptables, const std::vector<JumpRule>& jumps);

// Removes `jumps`, then applies the document `deleteChains` builds from the current iptables
// (one that flushes and deletes the owner's chains; "" when none is left). A chain still
// referenced cannot go (EBUSY, seen right after a restart), so the whole is retried a few times.
// `who` names the owner in the log.
Status removeJumpsAndChains(Iptables& iptables, const std::vector<JumpRule>& jumps,
                            const std::function<Result<std::string>()>& deleteChains,
                            std::string_view who);

// After a failed iptables-restore the kernel's state is unknown (someone may have removed the
// owner's jumps or chains): puts the jumps back and returns which of the owner's chains exist now,
// read from `table`'s iptables-save by `ownChains`; nullopt when they cannot be read. Failures are
// logged under `who`; the caller's next sync rewrites everything.
std::optional<std::set<std::string>> recoverAfterFailedRestore(
    Iptables& iptables, const std::vector<JumpRule>& jumps, const std::string& table,
    const std::function<std::set<std::string>(const std::string&)>& ownChains,
    std::string_view who);

struct IptablesPaths {
  std::string iptables = "iptables";
  std::string iptablesRestore = "iptables-restore";
  std::string iptablesSave = "iptables-save";
};

class ExecIptables : public Iptables {
 public:
  explicit ExecIptables(IptablesPaths paths = {}) : paths_(std::move(paths)) {}
  Status restore(const std::string& rules) override;
  Result<std::string> save(const std::string& table) override;
  Status ensureRule(const std::string& table, const std::string& chain,
                    const std::vector<std::string>& rule) override;
  Status deleteRule(const std::string& table, const std::string& chain,
                    const std::vector<std::string>& rule) override;

 private:
  IptablesPaths paths_;
};

}  // namespace minik8s::proxy
