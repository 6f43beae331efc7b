#include "network/node_namespace.h"

#include <dirent.h>

#include <fmt/format.h>

#include "common/logging.h"

namespace minik8s::network {

NodeNamespaces::NodeNamespaces(UnderlayOptions options, Runner runner)
    : options_(std::move(options)), runner_(std::move(runner)) {}

Result<std::string> NodeNamespaces::run(const std::vector<std::string>& argv) const {
  auto r = runner_(argv);
  if (!r.ok()) return r.status();
  if (r->exitCode != 0) {
    std::string out = r->output;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return Status::Internal(fmt::format("`{}` failed: {}", commandLine(argv), out));
  }
  return r->output;
}

bool NodeNamespaces::succeeded(const std::vector<std::string>& argv) const {
  auto r = runner_(argv);
  return r.ok() && r->exitCode == 0;
}

std::string NodeNamespaces::gatewayIp() const { return formatIpv4(options_.subnet.base + 1); }

std::string NodeNamespaces::nodeIp(int index) const {
  return formatIpv4(options_.subnet.base + 1 + static_cast<uint32_t>(index));
}

std::vector<std::string> NodeNamespaces::forwardRule() const {
  return {"-i", bridgeName(), "!",       "-o",
          bridgeName(), "-m", "comment", "--comment",
          "minik8s " + options_.prefix + ": cluster traffic stays on this machine", "-j", "DROP"};
}

Status NodeNamespaces::setUpUnderlay() {
  const std::string br = bridgeName();
  if (!succeeded({"ip", "link", "show", br})) {
    auto r = run({"ip", "link", "add", br, "type", "bridge"});
    if (!r.ok()) return r.status();
  }
  const std::string addr = gatewayIp() + "/" + std::to_string(options_.subnet.prefix);
  for (const auto& argv : std::vector<std::vector<std::string>>{
           {"ip", "addr", "replace", addr, "dev", br},
           {"ip", "link", "set", br, "alias", "minik8s underlay " + options_.prefix},
           {"ip", "link", "set", br, "up"},
           {"ip", "route", "replace", "blackhole", options_.podCidr},
           {"ip", "route", "replace", "blackhole", options_.serviceCidr}}) {
    auto r = run(argv);
    if (!r.ok()) return r.status();
  }
  std::vector<std::string> check = {"iptables", "-w", "-C", "FORWARD"};
  auto rule = forwardRule();
  check.insert(check.end(), rule.begin(), rule.end());
  if (!succeeded(check)) {
    std::vector<std::string> insert = {"iptables", "-w", "-I", "FORWARD", "1"};
    insert.insert(insert.end(), rule.begin(), rule.end());
    auto r = run(insert);
    if (!r.ok()) return r.status();
  }
  return Status::Ok();
}

Status NodeNamespaces::addNode(const std::string& node, const std::string& ip) {
  const std::string ns = netnsName(node);
  const std::string hostVeth = ns;  // host side, attached to the bridge
  const std::string tmpVeth = ns.substr(0, 13) + "-p";
  if (ns.size() > 15) return Status::BadRequest("node namespace name too long for a link: " + ns);
  bool exists = false;
  for (const auto& n : existingNodeNamespaces()) exists = exists || n == ns;
  if (!exists) {
    auto r = run({"ip", "netns", "add", ns});
    if (!r.ok()) return r.status();
  }
  if (!succeeded({"ip", "link", "show", hostVeth})) {
    (void)runner_({"ip", "link", "del", tmpVeth});
    (void)runner_({"ip", "-n", ns, "link", "del", "eth0"});
    for (const auto& argv : std::vector<std::vector<std::string>>{
             {"ip", "link", "add", hostVeth, "type", "veth", "peer", "name", tmpVeth},
             {"ip", "link", "set", tmpVeth, "netns", ns},
             {"ip", "-n", ns, "link", "set", tmpVeth, "name", "eth0"}}) {
      auto r = run(argv);
      if (!r.ok()) return r.status();
    }
  }
  const std::string addr = ip + "/" + std::to_string(options_.subnet.prefix);
  for (const auto& argv : std::vector<std::vector<std::string>>{
           {"ip", "link", "set", hostVeth, "master", bridgeName(), "up"},
           {"ip", "-n", ns, "link", "set", "lo", "up"},
           {"ip", "-n", ns, "addr", "replace", addr, "dev", "eth0"},
           {"ip", "-n", ns, "link", "set", "eth0", "up"},
           // ClusterIPs must have a route for the node's own OUTPUT DNAT to run.
           {"ip", "-n", ns, "route", "replace", options_.serviceCidr, "dev", "eth0"}}) {
    auto r = run(argv);
    if (!r.ok()) return r.status();
  }
  return Status::Ok();
}

Status NodeNamespaces::removeNode(const std::string& node) {
  const std::string ns = netnsName(node);
  (void)runner_({"ip", "netns", "del", ns});
  (void)runner_({"ip", "link", "del", ns});
  return Status::Ok();
}

Status NodeNamespaces::tearDownUnderlay() {
  (void)runner_({"ip", "link", "del", bridgeName()});
  std::vector<std::string> del = {"iptables", "-w", "-D", "FORWARD"};
  auto rule = forwardRule();
  del.insert(del.end(), rule.begin(), rule.end());
  while (succeeded(del)) {
  }
  // The blackhole routes are shared by every cluster on this host: drop them with the last one.
  auto links = runner_({"ip", "-j", "link", "show", "type", "bridge"});
  bool otherCluster = false;
  if (links.ok() && links->exitCode == 0) {
    auto list = json::parse(links->output, nullptr, false);
    if (list.is_array())
      for (const auto& l : list) {
        auto altnames = l.value("ifalias", "");
        otherCluster = otherCluster || altnames.rfind("minik8s underlay", 0) == 0;
      }
  }
  if (!otherCluster) {
    (void)runner_({"ip", "route", "del", "blackhole", options_.podCidr});
    (void)runner_({"ip", "route", "del", "blackhole", options_.serviceCidr});
  }
  return Status::Ok();
}

std::vector<std::string> NodeNamespaces::existingNodeNamespaces() const {
  std::vector<std::string> names;
  DIR* d = ::opendir("/var/run/netns");
  if (!d) return names;
  const std::string want = options_.prefix + "-";
  while (dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n.rfind(want, 0) == 0) names.push_back(n);
  }
  ::closedir(d);
  return names;
}

}  // namespace minik8s::network
