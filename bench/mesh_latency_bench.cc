// Latency and throughput through the mesh's sidecars, against the same backend reached directly,
// in one run (issue 18's benchmark): requests at a fixed rate (open loop, --rate req/s spread over
// --open-connections kept-alive connections; each latency counts from when the request was due,
// so a stall is not hidden) and at saturation (closed loop, --connections connections sending as
// fast as answers come), for these paths:
//   direct        client -> backend
//   inbound only  client -> server sidecar's inbound listener -> backend
//   two sidecars  client -> client sidecar (outbound, HTTP routing) -> server sidecar (inbound)
//                 -> backend, plain text (PeerAuthentication DISABLE) and with mutual TLS
//                 (workload certificates from a CA made here)
//   two nginx     client -> nginx -> nginx -> backend: the same two hops through the proxy a
//                 user would otherwise pick (nginx 1.22 reverse proxies, one worker each, kept
//                 upstream connections, no access log), as the reference a sidecar compares to
// The sidecars are the real SidecarProxy on loopback, each with its own I/O thread, as in a pod;
// the original destinations are given to them as the pods' nat rules would (no root needed).
// Prints p50/p90/p99, req/s, the added latency per sidecar hop at p50 and the meshed/direct
// throughput ratio, with the load average; at saturation also the CPU time per request of the
// whole bench and of each sidecar's I/O thread (from /proc/self/task/TID/schedstat), which says
// where a ratio below 1 goes when the machine's cores are the limit. Never fails on a figure.
// --paths picks some of direct,inbound,plain,mtls (all by default), e.g. for a profile; each
// sidecar's thread id is printed for `perf record -t`.
//
//   build/bin/mesh_latency_bench [--rate 1000] [--open-connections 10] [--connections 50]
//                                [--seconds 5] [--paths direct,plain]
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.h"
#include "common/http.h"
#include "common/metrics.h"
#include "common/pki.h"
#include "mesh/identity.h"
#include "mesh/mesh_config.h"
#include "mesh/proxy/sidecar_proxy.h"
#include "spdlog/spdlog.h"

using namespace std::chrono;
using minik8s::json;
using minik8s::bench::loadAverage;
namespace mesh = minik8s::mesh;
namespace http = minik8s::http;
namespace pki = minik8s::pki;

namespace {

// One kept-alive HTTP/1.1 connection to 127.0.0.1:port, GET / with a Content-Length answer.
class Connection {
 public:
  explicit Connection(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) close();
  }
  ~Connection() { close(); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  bool ok() const { return fd_ >= 0; }

  // One request and its whole answer; false when the connection failed or the answer was not 200.
  bool get() {
    static const std::string kRequest = "GET / HTTP/1.1\r\nHost: web\r\n\r\n";
    if (fd_ < 0 || ::write(fd_, kRequest.data(), kRequest.size()) < 0) return fail();
    for (;;) {
      size_t end = buffer_.find("\r\n\r\n");
      if (end != std::string::npos) {
        bool ok = buffer_.compare(0, 12, "HTTP/1.1 200") == 0;
        size_t length = 0;
        size_t at = lowerFind(buffer_.substr(0, end), "content-length:");
        if (at != std::string::npos) length = std::stoul(buffer_.substr(at + 15));
        while (buffer_.size() < end + 4 + length) {
          if (!readMore()) return fail();
        }
        buffer_.erase(0, end + 4 + length);
        return ok;
      }
      if (!readMore()) return fail();
    }
  }

 private:
  static size_t lowerFind(std::string text, const std::string& what) {
    std::transform(text.begin(), text.end(), text.begin(), ::tolower);
    return text.find(what);
  }
  bool readMore() {
    char buf[4096];
    ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n <= 0) return false;
    buffer_.append(buf, static_cast<size_t>(n));
    return true;
  }
  bool fail() {
    close();
    return false;
  }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int fd_ = -1;
  std::string buffer_;
};

struct Figures {
  std::vector<double> latencyMs;
  long requests = 0, errors = 0;
  double seconds = 0;
  double percentile(double p) {
    if (latencyMs.empty()) return 0;
    std::sort(latencyMs.begin(), latencyMs.end());
    return latencyMs[std::min(latencyMs.size() - 1, static_cast<size_t>(p * latencyMs.size()))];
  }
  double rps() const { return seconds > 0 ? requests / seconds : 0; }

  // One request on `conn` timed from `since`; a failed connection is replaced.
  void request(std::unique_ptr<Connection>& conn, int port, steady_clock::time_point since) {
    bool ok = conn->get();
    latencyMs.push_back(duration<double, std::milli>(steady_clock::now() - since).count());
    ++requests;
    if (!ok) {
      ++errors;
      conn = std::make_unique<Connection>(port);
    }
  }

  // The figures of every connection's thread, over the run that began at `start`.
  static Figures merged(const std::vector<Figures>& parts, steady_clock::time_point start) {
    Figures all;
    all.seconds = duration<double>(steady_clock::now() - start).count();
    for (const auto& p : parts) {
      all.latencyMs.insert(all.latencyMs.end(), p.latencyMs.begin(), p.latencyMs.end());
      all.requests += p.requests;
      all.errors += p.errors;
    }
    return all;
  }
};

// Open loop: `rate` requests/s over `connections` connections for `seconds`.
Figures fixedRate(int port, int rate, int connections, int seconds) {
  std::vector<Figures> parts(connections);
  std::vector<std::thread> threads;
  const auto start = steady_clock::now() + milliseconds(50);
  const auto interval = duration<double>(static_cast<double>(connections) / rate);
  const long perConnection = static_cast<long>(rate) * seconds / connections;
  for (int c = 0; c < connections; ++c) {
    threads.emplace_back([&, c] {
      auto conn = std::make_unique<Connection>(port);
      Figures& f = parts[c];
      // Connections start spread over one interval.
      const auto first = start + duration_cast<nanoseconds>(interval * c / connections);
      for (long i = 0; i < perConnection; ++i) {
        const auto due = first + duration_cast<nanoseconds>(interval * i);
        std::this_thread::sleep_until(due);
        f.request(conn, port, due);
      }
    });
  }
  for (auto& t : threads) t.join();
  return Figures::merged(parts, start);
}

// Closed loop: `connections` connections, each sending its next request when the answer came.
Figures saturation(int port, int connections, int seconds) {
  std::vector<Figures> parts(connections);
  std::vector<std::thread> threads;
  std::atomic<bool> stop{false};
  const auto start = steady_clock::now();
  for (int c = 0; c < connections; ++c) {
    threads.emplace_back([&, c] {
      auto conn = std::make_unique<Connection>(port);
      Figures& f = parts[c];
      while (!stop) f.request(conn, port, steady_clock::now());
    });
  }
  std::this_thread::sleep_for(seconds * 1s);
  stop = true;
  for (auto& t : threads) t.join();
  return Figures::merged(parts, start);
}

mesh::WorkloadCredentials credentialsFor(const pki::KeyAndCert& ca, const mesh::WorkloadId& id) {
  mesh::WorkloadCredentials c;
  c.keyPem = *pki::generateKey();
  c.spiffeId = mesh::spiffeId(id);
  auto csr = mesh::createWorkloadCsr(c.keyPem, c.spiffeId);
  c.certPem = *mesh::signWorkloadCsr(ca, *csr, hours(1));
  c.caPem = ca.certPem;
  c.notBefore = system_clock::now();
  c.notAfter = c.notBefore + hours(1);
  return c;
}

// The service bench/web (10.96.0.10:80) whose endpoint is the server sidecar's inbound port
// (standing for the pod's port, which its nat rules would redirect there); both pods meshed.
std::shared_ptr<const mesh::MeshConfig> registry(int serverInbound, bool mtls, int64_t version) {
  json svc = {
      {"metadata", {{"name", "web"}, {"namespace", "bench"}}},
      {"spec", {{"clusterIP", "10.96.0.10"}, {"ports", {{{"name", "http"}, {"port", 80}}}}}}};
  json eps = {{"metadata", {{"name", "web"}, {"namespace", "bench"}}},
              {"subsets",
               {{{"addresses",
                  {{{"ip", "127.0.0.1"}, {"targetRef", {{"kind", "Pod"}, {"name", "web-1"}}}}}},
                 {"ports", {{{"name", "http"}, {"port", serverInbound}}}}}}}};
  auto pod = [](const std::string& name, const std::string& sa) {
    return json{{"metadata", {{"name", name}, {"namespace", "bench"}, {"labels", {{"app", sa}}}}},
                {"spec",
                 {{"serviceAccountName", sa},
                  {"containers", {{{"name", "app"}}, {{"name", "istio-proxy"}}}}}}};
  };
  std::vector<json> policies;
  if (!mtls) {
    policies.push_back({{"metadata", {{"name", "default"}, {"namespace", "bench"}}},
                        {"spec", {{"mtls", {{"mode", "DISABLE"}}}}}});
  }
  return mesh::buildMeshConfig({.services = {svc},
                                .endpoints = {eps},
                                .pods = {pod("web-1", "web"), pod("client-1", "client")},
                                .peerAuthentications = policies},
                               version);
}

// The ids of this process's threads.
std::set<int> threadIds() {
  std::set<int> ids;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
    ids.insert(std::stoi(e.path().filename().string()));
  }
  return ids;
}

// The one thread in `after` that is not in `before` (a sidecar's I/O thread); 0 when not one.
int newThread(const std::set<int>& before, const std::set<int>& after) {
  std::vector<int> added;
  std::set_difference(after.begin(), after.end(), before.begin(), before.end(),
                      std::back_inserter(added));
  return added.size() == 1 ? added[0] : 0;
}

// CPU time a thread of this process has run, in seconds (schedstat: nanoseconds on the CPU).
double threadCpuSeconds(int tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/schedstat");
  double ns = 0;
  in >> ns;
  return ns / 1e9;
}

double processCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

// CPU seconds of the whole bench and of each sidecar thread, to take differences of.
struct CpuSample {
  double process = 0, server = 0, client = 0;
  static CpuSample now(int serverTid, int clientTid) {
    return {processCpuSeconds(), threadCpuSeconds(serverTid), threadCpuSeconds(clientTid)};
  }
};

// One nginx reverse proxy in front of 127.0.0.1:upstreamPort, listening on 127.0.0.1:port, run
// in one process (no master) so that its CPU time is one /proc entry. -1 when it did not start.
pid_t startNginx(const std::string& dir, int port, int upstreamPort) {
  std::filesystem::create_directories(dir + "/tmp");
  std::ofstream(dir + "/nginx.conf")
      << "daemon off;\nmaster_process off;\nworker_processes 1;\n"
      << "error_log " << dir << "/error.log warn;\npid " << dir << "/nginx.pid;\n"
      << "events { worker_connections 1024; }\n"
      << "http {\n  access_log off;\n  keepalive_requests 1000000;\n"
      << "  client_body_temp_path " << dir << "/tmp/body;\n  proxy_temp_path " << dir
      << "/tmp/proxy;\n  fastcgi_temp_path " << dir << "/tmp/fastcgi;\n  uwsgi_temp_path " << dir
      << "/tmp/uwsgi;\n  scgi_temp_path " << dir << "/tmp/scgi;\n"
      << "  upstream up { server 127.0.0.1:" << upstreamPort
      << "; keepalive 64; keepalive_requests 1000000; }\n"
      << "  server {\n    listen 127.0.0.1:" << port << ";\n    location / {\n"
      << "      proxy_pass http://up;\n      proxy_http_version 1.1;\n"
      << "      proxy_set_header Connection \"\";\n    }\n  }\n}\n";
  pid_t pid = minik8s::bench::spawn({"nginx", "-p", dir, "-c", dir + "/nginx.conf"},
                                    dir + "/stdout.log", {.deathSignal = SIGTERM});
  if (pid < 0) return -1;
  for (int i = 0; i < 200; ++i) {  // until it answers (or is gone)
    Connection c(port);
    if (c.ok() && c.get()) return pid;
    if (::waitpid(pid, nullptr, WNOHANG) == pid) return -1;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return pid;
}

void report(const char* path, const char* mode, Figures f) {
  std::printf("%-26s %-22s p50 %7.3f  p90 %7.3f  p99 %7.3f ms  %8.0f req/s  errors %ld  load %s\n",
              path, mode, f.percentile(0.5), f.percentile(0.9), f.percentile(0.99), f.rps(),
              f.errors, loadAverage().c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int rate = 1000, openConnections = 10, connections = 50, seconds = 5;
  std::string only = "direct,inbound,plain,mtls,nginx";
  for (int i = 1; i + 1 < argc; ++i) {
    std::string a = argv[i];
    if (a == "--rate") rate = std::stoi(argv[++i]);
    if (a == "--open-connections") openConnections = std::stoi(argv[++i]);
    if (a == "--connections") connections = std::stoi(argv[++i]);
    if (a == "--seconds") seconds = std::stoi(argv[++i]);
    if (a == "--paths") only = argv[++i];
  }
  spdlog::set_level(spdlog::level::warn);
  http::Server backend([](const http::Request&, http::ResponseWriter& w) {
    w.send(http::Response::text(200, "ok\n"));
  });
  if (!backend.start("127.0.0.1:0").ok()) return 1;
  const int backendPort = backend.port();

  minik8s::metrics::Registry serverMetrics, clientMetrics;
  mesh::ProxyOptions so;  // the sidecar of bench/web-1
  so.bindAddress = "127.0.0.1";
  so.outboundPort = so.inboundPort = so.metricsPort = 0;
  so.registry = &serverMetrics;
  so.podNamespace = "bench";
  so.podName = "web-1";
  so.originalDestination = [backendPort](int) -> std::optional<std::pair<std::string, int>> {
    return std::make_pair(std::string("127.0.0.1"), backendPort);
  };
  mesh::SidecarProxy server(so);
  mesh::ProxyOptions co;  // the sidecar of bench/client-1
  co.bindAddress = "127.0.0.1";
  co.outboundPort = co.inboundPort = co.metricsPort = 0;
  co.registry = &clientMetrics;
  co.podNamespace = "bench";
  co.podName = "client-1";
  co.seed = 1;
  co.originalDestination = [](int) -> std::optional<std::pair<std::string, int>> {
    return std::make_pair(std::string("10.96.0.10"), 80);
  };
  mesh::SidecarProxy client(co);
  const auto before = threadIds();
  if (!server.start().ok()) return 1;
  const auto withServer = threadIds();
  if (!client.start().ok()) return 1;
  const int serverTid = newThread(before, withServer);
  const int clientTid = newThread(withServer, threadIds());
  auto ca = pki::createCA("mesh-bench-ca");
  if (!ca.ok() || !server.setCredentials(credentialsFor(*ca, {"bench", "web"})).ok() ||
      !client.setCredentials(credentialsFor(*ca, {"bench", "client"})).ok()) {
    std::printf("cannot set up the workload certificates\n");
    return 1;
  }
  int64_t version = 0;
  auto configure = [&](bool mtls) {
    auto config = registry(server.inboundPort(), mtls, ++version);
    server.setConfig(config);
    client.setConfig(config);
  };

  std::printf(
      "mesh latency bench: %d req/s over %d connections and saturation with %d "
      "connections, %d s each\n",
      rate, openConnections, connections, seconds);
  std::printf("sidecar I/O threads: server (inbound) %d, client (outbound) %d\n", serverTid,
              clientTid);
  // The reference: the same two hops through nginx (client side -> server side -> backend).
  const bool wantNginx = ("," + only + ",").find(",nginx,") != std::string::npos;
  std::vector<pid_t> nginxPids;
  int nginxPort = 0;
  const std::string nginxDir =
      (std::filesystem::temp_directory_path() / ("mesh-latency-bench-" + std::to_string(getpid())))
          .string();
  if (wantNginx) {
    minik8s::bench::removeStaleRunDirs("mesh-latency-bench-");
    const int serverSide = minik8s::bench::freePort();
    nginxPort = minik8s::bench::freePort();
    pid_t s = startNginx(nginxDir + "/server", serverSide, backendPort);
    pid_t c = s < 0 ? -1 : startNginx(nginxDir + "/client", nginxPort, serverSide);
    for (pid_t pid : {s, c}) {
      if (pid > 0) nginxPids.push_back(pid);
    }
    if (nginxPids.size() != 2) {
      std::printf("SKIPPED: two nginx (nginx did not start; see %s)\n", nginxDir.c_str());
      nginxPort = 0;
    }
  }
  auto nginxCpuSeconds = [&nginxPids] {
    double total = 0;
    for (pid_t pid : nginxPids) total += minik8s::bench::cpuSeconds(pid);
    return total;
  };
  struct Path {
    const char* key;
    const char* name;
    int port;
    bool mtls;
  };
  std::vector<Path> paths = {{"direct", "direct", backendPort, false},
                             {"inbound", "inbound sidecar only", server.inboundPort(), false},
                             {"plain", "two sidecars, plain text", client.outboundPort(), false},
                             {"mtls", "two sidecars, mTLS", client.outboundPort(), true}};
  if (nginxPort != 0) paths.push_back({"nginx", "two nginx (reference)", nginxPort, false});
  double directP50 = 0, directRps = 0, directCpu = 0;
  for (const auto& p : paths) {
    if (("," + only + ",").find(std::string(",") + p.key + ",") == std::string::npos) continue;
    configure(p.mtls);
    Connection warm(p.port);  // the first connection's handshake is not what is measured
    for (int i = 0; i < 100 && warm.get(); ++i) {
    }
    std::string mode = std::to_string(rate) + " req/s";
    Figures open = fixedRate(p.port, rate, openConnections, seconds);
    report(p.name, mode.c_str(), open);
    const CpuSample cpuBefore = CpuSample::now(serverTid, clientTid);
    const double nginxBefore = nginxCpuSeconds();
    Figures closed = saturation(p.port, connections, seconds);
    const CpuSample cpuAfter = CpuSample::now(serverTid, clientTid);
    const double nginxAfter = nginxCpuSeconds();
    mode = "saturation, " + std::to_string(connections) + " conns";
    report(p.name, mode.c_str(), closed);
    double cpuPerRequest = 0;
    if (closed.requests > 0) {
      auto perRequest = [&](double before, double after) {
        return (after - before) * 1e6 / static_cast<double>(closed.requests);
      };
      if (p.port == nginxPort) {
        // nginx runs in its own two processes: their CPU added to the bench's (client, backend).
        cpuPerRequest = perRequest(cpuBefore.process + nginxBefore, cpuAfter.process + nginxAfter);
        std::printf(
            "  CPU per request: %.1f us in all (%.2f cores busy), the two nginx %.1f us\n",
            cpuPerRequest,
            (cpuAfter.process + nginxAfter - cpuBefore.process - nginxBefore) / closed.seconds,
            perRequest(nginxBefore, nginxAfter));
      } else {
        cpuPerRequest = perRequest(cpuBefore.process, cpuAfter.process);
        std::printf(
            "  CPU per request: %.1f us in all (%.2f cores busy), server sidecar %.1f us, client "
            "sidecar %.1f us\n",
            cpuPerRequest, (cpuAfter.process - cpuBefore.process) / closed.seconds,
            perRequest(cpuBefore.server, cpuAfter.server),
            perRequest(cpuBefore.client, cpuAfter.client));
      }
    }
    if (p.port == backendPort) {
      directP50 = open.percentile(0.5);
      directRps = closed.rps();
      directCpu = cpuPerRequest;
    } else if (directRps > 0) {
      // With the cores the limit, throughput goes as 1 / CPU per request: the CPU ratio is the
      // most the throughput ratio can be on this machine.
      const int hops = p.port == client.outboundPort() || p.port == nginxPort ? 2 : 1;
      std::printf(
          "  %s: +%.3f ms per hop at p50 (%d req/s), throughput %.2fx of direct (CPU per request "
          "%.2fx: the ceiling when the cores are the limit)\n",
          p.name, (open.percentile(0.5) - directP50) / hops, rate, closed.rps() / directRps,
          cpuPerRequest > 0 ? directCpu / cpuPerRequest : 0);
    }
  }
  for (pid_t pid : nginxPids) {
    ::kill(pid, SIGTERM);
    ::waitpid(pid, nullptr, 0);
  }
  if (wantNginx) std::filesystem::remove_all(nginxDir);
  client.stop();
  server.stop();
  backend.stop();
  return 0;
}
