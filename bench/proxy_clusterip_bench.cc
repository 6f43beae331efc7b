// Requests through a ClusterIP versus straight to the pod: a bounded HTTP load generator with a
// latency histogram. Each request is a new TCP connection (HTTP/1.0 GET, read to EOF), so every
// request crosses the service proxy's DNAT (conntrack is per connection; a kept-alive connection
// would only pay it once). Run inside a node namespace by bench/proxy_clusterip_bench.sh:
//
//   proxy_clusterip_bench --requests 2000 --concurrency 8
//       clusterip=http://10.96.0.20/ pod=http://10.244.2.3:8080/
//
// Prints requests/s, p50 and p99 per target and each target's ratio to the last one (the
// baseline). The targets take turns in 10 rounds (requests/10 each per round), so that drift in
// the shared machine's load weighs on every target alike. Reports only; never fails on a time.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Target {
  std::string label;
  std::string host;
  int port = 80;
  std::string path = "/";
};

bool parseTarget(const std::string& arg, Target& t) {
  size_t eq = arg.find('=');
  std::string url = eq == std::string::npos ? arg : arg.substr(eq + 1);
  t.label = eq == std::string::npos ? arg : arg.substr(0, eq);
  if (url.rfind("http://", 0) != 0) return false;
  url = url.substr(7);
  size_t slash = url.find('/');
  std::string hostPort = url.substr(0, slash);
  t.path = slash == std::string::npos ? "/" : url.substr(slash);
  size_t colon = hostPort.find(':');
  t.host = hostPort.substr(0, colon);
  if (colon != std::string::npos) t.port = std::stoi(hostPort.substr(colon + 1));
  in_addr probe{};
  return inet_pton(AF_INET, t.host.c_str(), &probe) == 1;
}

// One request on a fresh connection; true on a "200" status line.
bool fetch(const Target& t) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(t.port));
  inet_pton(AF_INET, t.host.c_str(), &a.sin_addr);
  bool ok = false;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    std::string req = "GET " + t.path + " HTTP/1.0\r\nHost: " + t.host + "\r\n\r\n";
    if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size())) {
      std::string head;
      char buf[4096];
      ssize_t n;
      while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0)
        if (head.size() < 16) head.append(buf, static_cast<size_t>(n));
      ok = n == 0 && head.rfind("HTTP/1.", 0) == 0 && head.size() >= 12 &&
           head.compare(9, 3, "200") == 0;
    }
  }
  ::close(fd);
  return ok;
}

struct Result {
  double seconds = 0;
  int failures = 0;
  std::vector<double> latenciesMs;
  double rps() const { return latenciesMs.size() / seconds; }
  double percentile(double p) const {
    if (latenciesMs.empty()) return 0;
    std::vector<double> v = latenciesMs;
    std::sort(v.begin(), v.end());
    size_t i = std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5));
    return v[i];
  }
};

Result run(const Target& t, int requests, int concurrency) {
  std::atomic<int> next{0};
  std::vector<std::vector<double>> lat(concurrency);
  std::vector<int> failures(concurrency, 0);
  auto start = Clock::now();
  std::vector<std::thread> workers;
  for (int w = 0; w < concurrency; ++w) {
    workers.emplace_back([&, w] {
      while (next.fetch_add(1) < requests) {
        auto t0 = Clock::now();
        bool ok = fetch(t);
        double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        if (ok)
          lat[w].push_back(ms);
        else
          ++failures[w];
      }
    });
  }
  for (auto& th : workers) th.join();
  Result r;
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (int w = 0; w < concurrency; ++w) {
    r.latenciesMs.insert(r.latenciesMs.end(), lat[w].begin(), lat[w].end());
    r.failures += failures[w];
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int requests = 2000, concurrency = 8, warmup = 100;
  std::vector<Target> targets;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--requests" && i + 1 < argc) {
      requests = std::max(1, std::min(20000, std::atoi(argv[++i])));
    } else if (a == "--concurrency" && i + 1 < argc) {
      concurrency = std::max(1, std::min(64, std::atoi(argv[++i])));
    } else {
      Target t;
      if (!parseTarget(a, t)) {
        std::fprintf(stderr,
                     "usage: %s [--requests N] [--concurrency C] label=http://IP[:port]/path...\n",
                     argv[0]);
        return 2;
      }
      targets.push_back(t);
    }
  }
  if (targets.empty()) {
    std::fprintf(stderr, "no target\n");
    return 2;
  }
  std::printf("%d requests per target, concurrency %d, one connection per request\n", requests,
              concurrency);
  std::printf("%-12s %10s %9s %9s %9s\n", "target", "req/s", "p50 ms", "p99 ms", "failed");
  constexpr int kRounds = 10;
  std::vector<Result> results(targets.size());
  for (const auto& t : targets) (void)run(t, warmup, concurrency);  // ARP, conntrack, first forks
  for (int round = 0; round < kRounds; ++round) {
    const int n = requests / kRounds + (round < requests % kRounds ? 1 : 0);
    for (size_t i = 0; i < targets.size(); ++i) {
      Result r = run(targets[i], n, concurrency);
      results[i].seconds += r.seconds;
      results[i].failures += r.failures;
      results[i].latenciesMs.insert(results[i].latenciesMs.end(), r.latenciesMs.begin(),
                                    r.latenciesMs.end());
    }
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    const Result& r = results[i];
    std::printf("%-12s %10.0f %9.2f %9.2f %9d\n", targets[i].label.c_str(), r.rps(),
                r.percentile(0.5), r.percentile(0.99), r.failures);
  }
  const Result& base = results.back();
  for (size_t i = 0; i + 1 < results.size(); ++i) {
    const Result& r = results[i];
    std::printf("%s / %s: throughput x%.3f, p50 x%.3f, p99 x%.3f\n", targets[i].label.c_str(),
                targets.back().label.c_str(), r.rps() / base.rps(),
                r.percentile(0.5) / std::max(1e-9, base.percentile(0.5)),
                r.percentile(0.99) / std::max(1e-9, base.percentile(0.99)));
  }
  return 0;
}
