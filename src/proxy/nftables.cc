#include "proxy/nftables.h"

#include "common/command.h"
#include "fmt/format.h"

namespace minik8s::proxy {

Status ExecNftables::apply(const std::string& document) {
  auto r = runChecked({nft_, "-f", "-"}, document);
  return r.ok() ? Status::Ok() : r.status();
}

Result<std::string> ExecNftables::listTable() {
  auto r = runProgram({nft_, "list", "table", "ip", "kube-proxy"});
  if (!r.ok()) return r.status();
  if (r->exitCode == 0) return std::move(r->output);
  if (r->output.find("No such file or directory") != std::string::npos) return std::string();
  return Status::Internal(fmt::format("nft list table ip kube-proxy: {}", r->output));
}

}  // namespace minik8s::proxy
