#include "proxy/nftables.h"

#include "common/command.h"
#include "fmt/format.h"

namespace minik8s::proxy {

Status ExecNftables::apply(const std::string& document) {
  auto r = runProgram({nft_, "-f", "-"}, document);
  if (!r.ok()) return r.status();
  if (r->exitCode == 127) {
    return Status::Internal(fmt::format(
        "the nftables mode needs the nft program (Debian package nftables): {}", r->output));
  }
  if (r->exitCode != 0) {
    return Status::Internal(fmt::format("`nft -f -` failed (exit {}): {}", r->exitCode, r->output));
  }
  return Status::Ok();
}

Result<std::string> ExecNftables::listTable() {
  auto r = runProgram({nft_, "list", "table", "ip", "kube-proxy"});
  if (!r.ok()) return r.status();
  if (r->exitCode == 0) return std::move(r->output);
  if (r->output.find("No such file or directory") != std::string::npos) return std::string();
  return Status::Internal(fmt::format("nft list table ip kube-proxy: {}", r->output));
}

}  // namespace minik8s::proxy
