#include "kubelet/prober.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/logging.h"

namespace minik8s::kubelet {

namespace {

using namespace std::chrono;

const char* probeField(ProbeType t) {
  switch (t) {
    case ProbeType::kLiveness:
      return "livenessProbe";
    case ProbeType::kReadiness:
      return "readinessProbe";
    case ProbeType::kStartup:
      return "startupProbe";
  }
  return "";
}

// Connects with a deadline; returns the socket or -1.
int connectWithTimeout(const std::string& host, int port, steady_clock::time_point deadline) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) return -1;
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) return fd;
  if (errno != EINPROGRESS) {
    ::close(fd);
    return -1;
  }
  pollfd p{fd, POLLOUT, 0};
  int ms = static_cast<int>(duration_cast<milliseconds>(deadline - steady_clock::now()).count());
  if (ms <= 0 || ::poll(&p, 1, ms) != 1) {
    ::close(fd);
    return -1;
  }
  int err = 0;
  socklen_t len = sizeof err;
  ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
  if (err != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// The port of a probe handler: a number, or the name of one of the container's ports.
int resolvePort(const json& port, const json& container) {
  if (port.is_number_integer()) return port.get<int>();
  if (port.is_string()) {
    std::string name = port.get<std::string>();
    for (const auto& p : container.value("ports", json::array()))
      if (p.value("name", "") == name) return p.value("containerPort", 0);
    try {
      return std::stoi(name);
    } catch (...) {
      return 0;
    }
  }
  return 0;
}

}  // namespace

const char* probeTypeName(ProbeType t) {
  switch (t) {
    case ProbeType::kLiveness:
      return "Liveness";
    case ProbeType::kReadiness:
      return "Readiness";
    case ProbeType::kStartup:
      return "Startup";
  }
  return "";
}

bool tcpProbe(const std::string& host, int port, milliseconds timeout) {
  int fd = connectWithTimeout(host, port, steady_clock::now() + timeout);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

int httpGetProbe(const std::string& host, int port, const std::string& path,
                 const std::vector<std::pair<std::string, std::string>>& headers,
                 milliseconds timeout) {
  auto deadline = steady_clock::now() + timeout;
  int fd = connectWithTimeout(host, port, deadline);
  if (fd < 0) return -1;
  std::string req = "GET " + (path.empty() ? std::string("/") : path) +
                    " HTTP/1.1\r\nHost: " + host + ":" + std::to_string(port) +
                    "\r\nUser-Agent: kube-probe/1.32\r\nAccept: */*\r\nConnection: close\r\n";
  for (const auto& [k, v] : headers) req += k + ": " + v + "\r\n";
  req += "\r\n";
  size_t sent = 0;
  std::string answer;
  int code = -1;
  while (steady_clock::now() < deadline) {
    short events = sent < req.size() ? POLLOUT : POLLIN;
    pollfd p{fd, events, 0};
    int ms = static_cast<int>(duration_cast<milliseconds>(deadline - steady_clock::now()).count());
    if (ms <= 0 || ::poll(&p, 1, ms) != 1) break;
    if (sent < req.size()) {
      ssize_t n = ::send(fd, req.data() + sent, req.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
      continue;
    }
    char buf[1024];
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    answer.append(buf, static_cast<size_t>(n));
    auto eol = answer.find("\r\n");
    if (eol != std::string::npos) {  // "HTTP/1.1 200 OK"
      auto sp = answer.find(' ');
      if (sp != std::string::npos && sp < eol) {
        try {
          code = std::stoi(answer.substr(sp + 1, 3));
        } catch (...) {
        }
      }
      break;
    }
  }
  ::close(fd);
  return code;
}

ProbeManager::ProbeManager(cri::RuntimeService& runtime, const client::Clock& clock)
    : runtime_(runtime), clock_(clock) {}

bool ProbeManager::runProbe(const json& probe, const json& container,
                            const std::string& containerId, const std::string& podIP,
                            std::string* output) {
  std::string ignored;
  std::string& out = output ? *output : ignored;
  auto timeout = seconds(std::max(1, probe.value("timeoutSeconds", 1)));
  if (probe.contains("exec")) {
    std::vector<std::string> cmd;
    for (const auto& c : probe["exec"].value("command", json::array()))
      if (c.is_string()) cmd.push_back(c.get<std::string>());
    auto r = runtime_.execSync(containerId, cmd, timeout);
    if (!r.ok()) {
      out = r.status().message();
      return false;
    }
    out = r->stdout() + r->stderr();
    if (r->exit_code() != 0 && out.empty())
      out = "command exited with code " + std::to_string(r->exit_code());
    return r->exit_code() == 0;
  }
  if (probe.contains("httpGet")) {
    const json& h = probe["httpGet"];
    std::string host = h.value("host", "");
    if (host.empty()) host = podIP;
    std::vector<std::pair<std::string, std::string>> headers;
    for (const auto& hh : h.value("httpHeaders", json::array()))
      headers.emplace_back(hh.value("name", ""), hh.value("value", ""));
    int port = resolvePort(h.value("port", json()), container);
    std::string path = h.value("path", "/");
    int code = httpGetProbe(host, port, path, headers, timeout);
    if (code < 0) {
      out = "Get \"http://" + host + ":" + std::to_string(port) + path +
            "\": connection refused or no answer within " + std::to_string(timeout.count()) + "s";
    } else if (code < 200 || code >= 400) {
      out = "HTTP probe failed with statuscode: " + std::to_string(code);
    }
    return code >= 200 && code < 400;
  }
  if (probe.contains("tcpSocket")) {
    const json& t = probe["tcpSocket"];
    std::string host = t.value("host", "");
    if (host.empty()) host = podIP;
    int port = resolvePort(t.value("port", json()), container);
    bool ok = tcpProbe(host, port, timeout);
    if (!ok) out = "dial tcp " + host + ":" + std::to_string(port) + ": connection failed";
    return ok;
  }
  return true;  // grpc and unknown handlers: not supported, treated as passing
}

std::vector<ProbeManager::Failure> ProbeManager::probeContainer(const json& container,
                                                                const std::string& containerId,
                                                                const std::string& podIP) {
  auto now = clock_.now();
  std::vector<ProbeType> due;
  {
    std::lock_guard lock(mu_);
    auto [it, fresh] = containers_.try_emplace(containerId);
    ContainerProbes& cp = it->second;
    if (fresh) {
      cp.firstSeen = now;
      cp.hasStartup = container.contains("startupProbe");
      cp.hasReadiness = container.contains("readinessProbe");
      // Liveness starts as success; readiness and startup as failure, like Kubernetes.
      cp.states[ProbeType::kLiveness].result = true;
    }
    bool startupDone = !cp.hasStartup || cp.states[ProbeType::kStartup].result;
    for (ProbeType t : {ProbeType::kStartup, ProbeType::kLiveness, ProbeType::kReadiness}) {
      if (!container.contains(probeField(t))) continue;
      if (t == ProbeType::kStartup && startupDone) continue;  // never runs again once passed
      if (t != ProbeType::kStartup && !startupDone) continue;
      const json& probe = container[probeField(t)];
      ProbeState& st = cp.states[t];
      auto initialDelay = seconds(probe.value("initialDelaySeconds", 0));
      auto period = seconds(std::max(1, probe.value("periodSeconds", 10)));
      if (now - cp.firstSeen < initialDelay) continue;
      if (st.ran && now - st.lastRun < period) continue;
      due.push_back(t);
    }
  }
  std::vector<Failure> failures;
  for (ProbeType t : due) {
    const json& probe = container[probeField(t)];
    std::string output;
    bool ok = runProbe(probe, container, containerId, podIP, &output);
    if (!ok) failures.push_back({t, output});
    std::lock_guard lock(mu_);
    auto it = containers_.find(containerId);
    if (it == containers_.end()) return failures;
    ProbeState& st = it->second.states[t];
    st.ran = true;
    st.lastRun = now;
    int successThreshold = t == ProbeType::kReadiness ? probe.value("successThreshold", 1) : 1;
    int failureThreshold = probe.value("failureThreshold", 3);
    if (ok) {
      st.failures = 0;
      if (++st.successes >= successThreshold) st.result = true;
    } else {
      st.successes = 0;
      if (++st.failures >= failureThreshold) {
        st.result = false;
        st.thresholdReached = true;
      }
    }
    LOG_DEBUG("probe {} of {}: {} ({} ok, {} failed)", probeField(t), containerId,
              ok ? "success" : "failure", st.successes, st.failures);
  }
  return failures;
}

bool ProbeManager::started(const std::string& containerId) {
  std::lock_guard lock(mu_);
  auto it = containers_.find(containerId);
  if (it == containers_.end()) return false;
  return !it->second.hasStartup || it->second.states[ProbeType::kStartup].result;
}

bool ProbeManager::ready(const std::string& containerId) {
  std::lock_guard lock(mu_);
  auto it = containers_.find(containerId);
  if (it == containers_.end()) return false;
  auto& cp = it->second;
  bool started = !cp.hasStartup || cp.states[ProbeType::kStartup].result;
  return started && (!cp.hasReadiness || cp.states[ProbeType::kReadiness].result);
}

bool ProbeManager::needsRestart(const std::string& containerId) {
  std::lock_guard lock(mu_);
  auto it = containers_.find(containerId);
  if (it == containers_.end()) return false;
  for (ProbeType t : {ProbeType::kLiveness, ProbeType::kStartup}) {
    auto st = it->second.states.find(t);
    if (st != it->second.states.end() && st->second.thresholdReached) return true;
  }
  return false;
}

void ProbeManager::forget(const std::string& containerId) {
  std::lock_guard lock(mu_);
  containers_.erase(containerId);
}

}  // namespace minik8s::kubelet
