// Gateway configuration: the pure half of the Dns gateway. From the Dns objects (minik8s.io/v1,
// spec.host + spec.paths[{path, serviceName, servicePort}]) and the Services (JSON as the API
// returns them) it decides which host/path goes to which ClusterIP:port, what each Dns object's
// status should say, and renders the nginx configuration that does the forwarding:
//
//   server { listen 172.29.103.2:80; server_name example.com;
//     location = /a { proxy_pass http://10.96.0.21:80/; }    /a    -> /
//     location /a/  { proxy_pass http://10.96.0.21:80/; }    /a/x  -> /x  (prefix stripped)
//     location /    { return 404; }                          nothing else on this host
//   }
//
// Services are looked up in the Dns object's own namespace. When two Dns objects claim the same
// host and path, the first by namespace/name wins and the other reports PathConflict.
// Pure and thread-safe; outputs are sorted, so equal inputs give byte-equal configurations.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace minik8s::dns {

// One forwarded path of a host.
struct GatewayLocation {
  std::string path;      // normalised: starts with '/', no trailing '/' unless it is "/"
  std::string upstream;  // "10.96.0.21:80": the service's ClusterIP and port
  std::string source;    // "namespace/name" of the Dns object it comes from
};

struct GatewayServer {
  std::string host;
  std::vector<GatewayLocation> locations;  // sorted by path
};

// What one Dns object's status should say.
struct DnsForwardingStatus {
  std::string key;  // "namespace/name"
  bool ready = true;
  std::string reason;   // Forwarding, ServiceNotFound, ServicePortNotFound, ServiceHeadless,
                        // PathConflict, InvalidPath
  std::string message;  // every problem, "; "-separated; or what is forwarded
};

struct GatewayPlan {
  std::vector<GatewayServer> servers;         // sorted by host
  std::vector<DnsForwardingStatus> statuses;  // sorted by key
  std::vector<std::string> hosts;             // every host named by a Dns object, sorted
};

GatewayPlan planGateway(const std::vector<json>& dnses, const std::vector<json>& services);

struct NginxSettings {
  std::string listenAddress;  // the node's IP
  int port = 80;
  std::string runDir;  // pid file, logs and temp files
  std::string user;    // `user` directive; empty = leave it out (nginx's default)
};

// The whole nginx.conf: a default server answering 404 for unknown hosts, then one server per
// host with two locations per path (the exact path and everything below it).
std::string renderNginxConfig(const GatewayPlan& plan, const NginxSettings& settings);

// "/a/" -> "/a", "/" -> "/"; "" when the path is invalid: not starting with '/', or holding a
// character other than letters, digits and -._~/%+@:!$&()*,= (nginx would need it quoted).
std::string normaliseGatewayPath(const std::string& path);

// obj[key] when it is an object, else {} (a stored status may be null).
json objectField(const json& obj, const char* key);

}  // namespace minik8s::dns
