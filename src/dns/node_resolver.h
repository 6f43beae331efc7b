// The resolver of a node's network namespace. A node namespace shares /etc with the host, so its
// processes would use the host's /etc/resolv.conf and /etc/hosts, which know nothing of the
// cluster. `ip netns exec NS cmd` bind-mounts every file of /etc/netns/NS/ over /etc/ for cmd;
// writing /etc/netns/NS/resolv.conf that names the node's own cluster DNS server (dnsmasq on the
// node IP, which also serves the Dns objects' hosts) makes `ip netns exec NS curl
// http://example.com/` and `... nslookup web.default.svc.cluster.local` work from a node.
// (Processes entered with plain `nsenter --net` keep the host's files.)
//
// Stateless functions; safe from any thread.
#pragma once

#include <string>

#include "common/status.h"

namespace minik8s::dns {

// The text: `nameserver <ip>`, the cluster search path of the default namespace, ndots:5.
std::string nodeResolvConf(const std::string& nameserver, const std::string& domain);

// Writes <etcNetns>/<netns>/resolv.conf (atomically).
Status writeNodeResolvConf(const std::string& netns, const std::string& nameserver,
                           const std::string& domain = "cluster.local",
                           const std::string& etcNetns = "/etc/netns");
// Removes <etcNetns>/<netns>/resolv.conf and the directory when it is then empty.
void removeNodeResolvConf(const std::string& netns, const std::string& etcNetns = "/etc/netns");

}  // namespace minik8s::dns
