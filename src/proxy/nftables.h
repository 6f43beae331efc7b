// Nftables: the seam between the proxy's nftables mode and the kernel. ExecNftables runs the `nft`
// program of the current network namespace (the agent runs inside its node's namespace); tests
// inject a fake. Implementations are called from one thread at a time.
#pragma once

#include <string>

#include "common/status.h"

namespace minik8s::proxy {

class Nftables {
 public:
  virtual ~Nftables() = default;
  // Applies a document of nft commands (`nft -f -`) as one transaction: all or nothing.
  virtual Status apply(const std::string& document) = 0;
  // `nft list table ip kube-proxy`; "" when the table does not exist.
  virtual Result<std::string> listTable() = 0;
};

class ExecNftables : public Nftables {
 public:
  explicit ExecNftables(std::string nft = "nft") : nft_(std::move(nft)) {}
  Status apply(const std::string& document) override;
  Result<std::string> listTable() override;

 private:
  std::string nft_;
};

}  // namespace minik8s::proxy
