#include "network/overlay.h"

#include <fmt/format.h>

#include <fstream>
#include <initializer_list>
#include <map>

#include "common/logging.h"

namespace minik8s::network {

namespace {

const char* kMasqComment = "minik8s: pod to pod traffic keeps its source address";
const char* kPodMasqChain = "MINIK8S-POD-MASQ";
const char* kPodMasqComment = "minik8s: pods leaving the node take its address";

std::string netAddress(const Ipv4Cidr& c) { return formatIpv4(c.base); }

// `iptables -w -t nat ARGS... RULE...`
std::vector<std::string> natArgv(std::initializer_list<std::string> args,
                                 const std::vector<std::string>& rule = {}) {
  std::vector<std::string> argv = {"iptables", "-w", "-t", "nat"};
  argv.insert(argv.end(), args);
  argv.insert(argv.end(), rule.begin(), rule.end());
  return argv;
}

// The POSTROUTING rule that keeps pod-to-pod traffic across nodes out of any masquerade.
std::vector<std::string> masqueradeExceptionRule(const Ipv4Cidr& clusterCidr) {
  const std::string cidr = clusterCidr.toString();
  return {"-s", cidr, "-d", cidr, "-m", "comment", "--comment", kMasqComment, "-j", "RETURN"};
}

// The POSTROUTING jump of the node's pods to their masquerade chain. Routed packets only: frames
// a bridge of this namespace merely passes on (with bridge-nf-call-iptables they traverse nat
// POSTROUTING too) are not leaving the node's pods, even when their source is in the same range
// (other machines' or namespaces' pods).
std::vector<std::string> podMasqueradeJump(const Ipv4Cidr& podCidr) {
  return {"-s", podCidr.toString(), "-m",        "physdev",       "!",  "--physdev-is-bridged",
          "-m", "comment",          "--comment", kPodMasqComment, "-j", kPodMasqChain};
}

}  // namespace

Result<OverlayBackend> parseOverlayBackend(const std::string& name) {
  if (name == "vxlan") return OverlayBackend::kVxlan;
  if (name == "host-gw") return OverlayBackend::kHostGw;
  if (name == "none") return OverlayBackend::kNone;
  return Status::BadRequest("unknown network backend \"" + name + "\" (vxlan, host-gw or none)");
}

Runner realRunner() {
  return [](const std::vector<std::string>& argv) { return runProgram(argv); };
}

Overlay::Overlay(OverlayOptions options, Runner runner)
    : options_(std::move(options)), runner_(std::move(runner)) {}

Result<std::string> Overlay::run(const std::vector<std::string>& argv) {
  auto r = runner_(argv);
  if (!r.ok()) return r.status();
  if (r->exitCode != 0) {
    std::string out = r->output;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return Status::Internal(fmt::format("`{}` failed: {}", commandLine(argv), out));
  }
  return r->output;
}

Status Overlay::setUp(const Ipv4Cidr& ownPodCidr) {
  if (Status s = ensurePodMasquerade(ownPodCidr); !s.ok()) return s;
  if (options_.backend == OverlayBackend::kNone) return Status::Ok();
  // Forwarding between cni0, the overlay and the underlay (per network namespace).
  std::ofstream("/proc/sys/net/ipv4/ip_forward") << "1";
  if (options_.backend == OverlayBackend::kVxlan) {
    Status s = ensureVxlanDevice(ownPodCidr);
    if (!s.ok()) return s;
  }
  return ensureMasqueradeException();
}

Status Overlay::ensureVxlanDevice(const Ipv4Cidr& ownPodCidr) {
  const std::string& dev = options_.vxlanDevice;
  const std::string mac = vtepMacFor(ownPodCidr);
  // Keep a device that already has the right identity (an agent restart must not cut traffic).
  auto shown = run({"ip", "-j", "-d", "link", "show", dev});
  bool keep = false;
  if (shown.ok()) {
    auto links = json::parse(*shown, nullptr, false);
    if (links.is_array() && !links.empty()) {
      const json& l = links[0];
      const json info = l.value("linkinfo", json::object()).value("info_data", json::object());
      keep = l.value("address", "") == mac && info.value("local", "") == options_.underlayIp &&
             info.value("id", -1) == options_.vni && info.value("port", -1) == options_.vxlanPort;
    }
    if (!keep) {
      LOG_INFO("network: recreating {} (identity changed)", dev);
      auto del = run({"ip", "link", "del", dev});
      if (!del.ok()) return del.status();
    }
  }
  if (!keep) {
    auto add =
        run({"ip", "link", "add", dev, "type", "vxlan", "id", std::to_string(options_.vni), "local",
             options_.underlayIp, "dstport", std::to_string(options_.vxlanPort), "nolearning"});
    if (!add.ok()) return add.status();
  }
  for (const auto& argv : std::vector<std::vector<std::string>>{
           {"ip", "link", "set", dev, "address", mac, "mtu", std::to_string(options_.mtu), "up"},
           {"ip", "addr", "replace", netAddress(ownPodCidr) + "/32", "dev", dev}}) {
    auto r = run(argv);
    if (!r.ok()) return r.status();
  }
  return Status::Ok();
}

// Adds `rule` to nat POSTROUTING, first or last, unless it is there already.
Status Overlay::ensurePostroutingRule(const std::vector<std::string>& rule, bool first) {
  auto present = runner_(natArgv({"-C", "POSTROUTING"}, rule));
  if (!present.ok()) return present.status();
  if (present->exitCode == 0) return Status::Ok();
  auto r =
      run(first ? natArgv({"-I", "POSTROUTING", "1"}, rule) : natArgv({"-A", "POSTROUTING"}, rule));
  return r.ok() ? Status::Ok() : r.status();
}

Status Overlay::ensureMasqueradeException() {
  return ensurePostroutingRule(masqueradeExceptionRule(options_.clusterCidr), true);
}

// One chain for the whole node, as the CNI bridge plugin's ipMasq makes one per pod: traffic
// from the node's pods to anything but their own subnet (and multicast) takes the node's address.
// Pod-to-pod traffic across nodes returns earlier (ensureMasqueradeException). Made once at
// start, not on every pod start and stop under the xtables lock.
Status Overlay::ensurePodMasquerade(const Ipv4Cidr& ownPodCidr) {
  const std::string cidr = ownPodCidr.toString();
  auto created = runner_(natArgv({"-N", kPodMasqChain}));  // may exist
  if (!created.ok()) return created.status();
  for (const auto& argv :
       {natArgv({"-F", kPodMasqChain}), natArgv({"-A", kPodMasqChain, "-d", cidr, "-j", "RETURN"}),
        natArgv({"-A", kPodMasqChain, "!", "-d", "224.0.0.0/4", "-j", "MASQUERADE"})}) {
    auto r = run(argv);
    if (!r.ok()) return r.status();
  }
  ownPodCidr_ = ownPodCidr;
  return ensurePostroutingRule(podMasqueradeJump(ownPodCidr), false);
}

Result<std::set<std::string>> Overlay::ownedRoutes() {
  auto out = run({"ip", "-j", "route", "show", "proto", std::to_string(kRouteProto)});
  if (!out.ok()) return out.status();
  std::set<std::string> dsts;
  auto routes = json::parse(*out, nullptr, false);
  if (routes.is_array())
    for (const auto& r : routes) dsts.insert(r.value("dst", ""));
  return dsts;
}

Status Overlay::sync(const std::vector<PeerNode>& peers) {
  if (options_.backend == OverlayBackend::kNone) return Status::Ok();
  const bool vxlan = options_.backend == OverlayBackend::kVxlan;
  const std::string& dev = options_.vxlanDevice;
  const std::string proto = std::to_string(kRouteProto);
  std::set<std::string> wanted;
  Status firstError;
  auto note = [&](const Result<std::string>& r) {
    if (!r.ok() && firstError.ok()) firstError = r.status();
  };
  for (const auto& p : peers) {
    const std::string cidr = p.podCidr.toString();
    wanted.insert(cidr);
    if (vxlan) {
      const std::string mac = vtepMacFor(p.podCidr);
      const std::string gw = netAddress(p.podCidr);
      note(run({"ip", "neigh", "replace", gw, "lladdr", mac, "dev", dev, "nud", "permanent"}));
      note(run(
          {"bridge", "fdb", "replace", mac, "dev", dev, "dst", p.underlayIp, "self", "permanent"}));
      note(run({"ip", "route", "replace", cidr, "via", gw, "dev", dev, "onlink", "proto", proto}));
    } else {
      note(run({"ip", "route", "replace", cidr, "via", p.underlayIp, "proto", proto}));
    }
  }
  // Stale routes (nodes deleted, also while the agent was down).
  auto owned = ownedRoutes();
  if (!owned.ok()) return owned.status();
  for (const auto& dst : *owned) {
    if (wanted.count(dst)) continue;
    LOG_INFO("network: removing route to {} (node gone)", dst);
    note(run({"ip", "route", "del", dst, "proto", proto}));
  }
  if (vxlan) {
    // Neighbour and FDB entries of peers that are gone.
    std::set<std::string> macs, gws;
    for (const auto& p : peers) {
      macs.insert(vtepMacFor(p.podCidr));
      gws.insert(netAddress(p.podCidr));
    }
    auto neigh = run({"ip", "-j", "neigh", "show", "dev", dev});
    if (neigh.ok()) {
      auto list = json::parse(*neigh, nullptr, false);
      if (list.is_array())
        for (const auto& n : list)
          if (!gws.count(n.value("dst", "")))
            note(run({"ip", "neigh", "del", n.value("dst", ""), "dev", dev}));
    }
    auto fdb = run({"bridge", "-j", "fdb", "show", "dev", dev});
    if (fdb.ok()) {
      auto list = json::parse(*fdb, nullptr, false);
      if (list.is_array())
        for (const auto& f : list) {
          const std::string mac = f.value("mac", "");
          if (!f.contains("dst") || macs.count(mac)) continue;
          note(run({"bridge", "fdb", "del", mac, "dev", dev, "dst", f.value("dst", ""), "self"}));
        }
    }
  }
  return firstError;
}

Status Overlay::tearDown() {
  if (ownPodCidr_) {
    (void)runner_(natArgv({"-D", "POSTROUTING"}, podMasqueradeJump(*ownPodCidr_)));
    (void)runner_(natArgv({"-F", kPodMasqChain}));
    (void)runner_(natArgv({"-X", kPodMasqChain}));
  }
  if (options_.backend == OverlayBackend::kNone) return Status::Ok();
  auto owned = ownedRoutes();
  if (owned.ok())
    for (const auto& dst : *owned)
      (void)run({"ip", "route", "del", dst, "proto", std::to_string(kRouteProto)});
  if (options_.backend == OverlayBackend::kVxlan)
    (void)runner_({"ip", "link", "del", options_.vxlanDevice});
  (void)runner_(natArgv({"-D", "POSTROUTING"}, masqueradeExceptionRule(options_.clusterCidr)));
  return Status::Ok();
}

std::vector<PeerNode> peersFromNodes(const std::vector<json>& nodes, const std::string& self) {
  std::vector<PeerNode> peers;
  for (const auto& n : nodes) {
    const json& meta = n.value("metadata", json::object());
    const std::string name = meta.value("name", "");
    if (name == self || name.empty() || meta.contains("deletionTimestamp")) continue;
    auto cidr = parseCidr(n.value("spec", json::object()).value("podCIDR", ""));
    if (!cidr) continue;
    std::string ip;
    for (const auto& a : n.value("status", json::object()).value("addresses", json::array()))
      if (a.value("type", "") == "InternalIP") {
        ip = a.value("address", "");
        break;
      }
    if (ip.empty() || !parseIpv4(ip)) continue;
    peers.push_back({name, *cidr, ip});
  }
  std::sort(peers.begin(), peers.end(),
            [](const PeerNode& a, const PeerNode& b) { return a.name < b.name; });
  return peers;
}

}  // namespace minik8s::network
