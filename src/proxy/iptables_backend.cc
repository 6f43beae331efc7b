#include "proxy/iptables_backend.h"

#include "common/logging.h"

namespace minik8s::proxy {

IptablesBackend::IptablesBackend(std::unique_ptr<Iptables> iptables, RuleOptions options,
                                 std::function<Status()> removeOtherMode)
    : iptables_(std::move(iptables)),
      options_(options),
      removeOtherMode_(std::move(removeOtherMode)),
      rules_(std::move(options)) {}

Status IptablesBackend::start() {
  if (removeOtherMode_) {
    if (Status s = removeOtherMode_(); !s.ok()) LOG_WARN("proxy: {}", s.message());
  }
  // The chains must exist before a jump to them can be added.
  if (Status s = iptables_->restore(buildProxyRules({}, {}, {}, {}).restoreText); !s.ok()) {
    return s;
  }
  if (Status s = ensureJumps(*iptables_, jumpRules()); !s.ok()) return s;
  auto nat = iptables_->save("nat");
  if (!nat.ok()) return nat.status();
  kernelChains_ = perServiceChains(*nat);
  return Status::Ok();
}

std::string IptablesBackend::prepareFull(const std::vector<json>& services,
                                         const std::vector<json>& slices) {
  pendingFull_ = true;
  // The chains to delete when unused: those read from the kernel, else those last written.
  return rules_.prepareFull(services, slices, kernelChains_ ? *kernelChains_ : rules_.chainNames())
      .restoreText;
}

std::string IptablesBackend::preparePartial(const std::map<std::string, ServiceInput>& changed) {
  pendingFull_ = false;
  return rules_.preparePartial(changed);
}

void IptablesBackend::commit() {
  rules_.commit();
  if (pendingFull_) kernelChains_.reset();
}

void IptablesBackend::recover() {
  rules_.discard();
  if (auto chains =
          recoverAfterFailedRestore(*iptables_, jumpRules(), "nat", perServiceChains, "proxy")) {
    kernelChains_ = std::move(*chains);
  }
}

Status IptablesBackend::cleanup() {
  rules_ = ServiceRulesCache(options_);
  kernelChains_ = std::set<std::string>();
  return cleanupProxyRules(*iptables_);
}

Status cleanupProxyRules(Iptables& iptables) {
  return removeJumpsAndChains(
      iptables, jumpRules(),
      [&]() -> Result<std::string> {
        auto nat = iptables.save("nat");
        if (!nat.ok()) return nat.status();
        auto filter = iptables.save("filter");
        if (!filter.ok()) return filter.status();
        return deleteChainsText(ownedChains(*nat, "nat"), ownedChains(*filter, "filter"));
      },
      "proxy");
}

}  // namespace minik8s::proxy
