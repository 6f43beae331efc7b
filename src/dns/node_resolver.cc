#include "dns/node_resolver.h"

#include <filesystem>
#include <fstream>

#include "fmt/format.h"

namespace minik8s::dns {

namespace fs = std::filesystem;

std::string nodeResolvConf(const std::string& nameserver, const std::string& domain) {
  return fmt::format(
      "# Written by minik8s for `ip netns exec`: the node's cluster DNS server.\n"
      "nameserver {}\nsearch default.svc.{} svc.{} {}\noptions ndots:5\n",
      nameserver, domain, domain, domain);
}

Status writeNodeResolvConf(const std::string& netns, const std::string& nameserver,
                           const std::string& domain, const std::string& etcNetns) {
  if (netns.empty() || netns.find('/') != std::string::npos || netns == "." || netns == "..")
    return Status::BadRequest(fmt::format("invalid network namespace name '{}'", netns));
  const fs::path dir = fs::path(etcNetns) / netns;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::Internal(fmt::format("cannot create {}: {}", dir.string(), ec.message()));
  const fs::path tmp = dir / "resolv.conf.tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << nodeResolvConf(nameserver, domain);
    out.flush();
    if (!out) return Status::Internal(fmt::format("cannot write {}", tmp.string()));
  }
  fs::rename(tmp, dir / "resolv.conf", ec);
  if (ec) return Status::Internal(fmt::format("cannot rename {}: {}", tmp.string(), ec.message()));
  return Status::Ok();
}

void removeNodeResolvConf(const std::string& netns, const std::string& etcNetns) {
  if (netns.empty() || netns.find('/') != std::string::npos || netns == "." || netns == "..")
    return;
  const fs::path dir = fs::path(etcNetns) / netns;
  std::error_code ec;
  fs::remove(dir / "resolv.conf", ec);
  fs::remove(dir, ec);  // only when empty
}

}  // namespace minik8s::dns
