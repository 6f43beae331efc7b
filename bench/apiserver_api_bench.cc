// API server benchmark: for each backend (SQLite, etcd), creates/s and p50/p99 latency with 8
// concurrent clients, gets/s, listing 10,000 pods, the delivery latency of one event to 100
// concurrent watchers, and the server's resident memory idle and with 10,000 pods stored. The
// baseline of the creates, measured in the same run with the same concurrency and the same bytes
// (the pod as the server stores it, from a dry-run create): for SQLite, the store alone
// (sqlite::SqliteStore in this process, on its own file: SQLite with its group commit, no HTTP,
// no API semantics); for etcd, raw Put over gRPC to the same etcd. The creates also report the
// CPU time they cost per create (the server's, which includes its own scheduler and controllers
// reacting to the new pods; the store's alone for the baseline): on a loaded machine that is the
// steadier figure. The creates are measured twice: pods the server's own scheduler marks
// unschedulable (each create then costs it a status PATCH and an Event too, three writes), and
// first, pods for a scheduler the cluster does not run, which nothing writes back to (the API
// path over the store, one write). It reports figures and never fails on a time.
//
//   build/bin/apiserver_api_bench [--pods N] [--backend sqlite|etcd|all] [--server PATH]
//                                 [--settle SECONDS]
//
// --server runs another minik8s binary (default: the one beside the bench), so that two builds
// can be compared in turns under the same load. --settle waits before the watch figure: the
// server's own scheduler and controllers are still working through the N new pods after the
// list, and a faster list otherwise moves the watch figure into that backlog; the server's RSS
// is read again then (the server gives freed pages back every 10 s). --perf records the
// server with `perf record --call-graph dwarf` during the lists and during the 100-watcher events
// (DIR/<backend>-list.data, DIR/<backend>-watch.data).
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.h"
#include "common/http.h"
#include "common/http_client.h"
#include "common/pki.h"
#include "etcd/rpc.grpc.pb.h"
#include "storage/sqlite/sqlite_store.h"

using namespace std::chrono;
using minik8s::json;
using minik8s::bench::cpuSeconds;
using minik8s::bench::freePort;
using minik8s::bench::loadAverage;
using minik8s::bench::percentile;
using minik8s::bench::removeStaleRunDirs;
using minik8s::bench::rssKiB;
using minik8s::bench::spawn;
using minik8s::http::Client;

namespace {

std::string selfDir;
std::string serverBinary;  // the minik8s under test
int settleSeconds = 0;     // wait before the watch figure
int watchEvents = 5;       // measured creates per watch phase
std::string perfDir;       // set: perf record the server's list and watch phases here

void stopProcess(pid_t pid) {
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

// `tls`: the admin credential of the server under test; {} for etcd (plain http://).
bool waitReady(const std::string& url, const std::string& path,
               const minik8s::http::TlsClientConfig& tls = {}) {
  for (int i = 0; i < 200; ++i) {
    Client c(url, tls);
    auto r = c.get(path);
    if (r.ok() && r->status == 200) return true;
    std::this_thread::sleep_for(milliseconds(50));
  }
  return false;
}

// `schedulerName`: a scheduler this cluster does not run, for pods nothing writes back to.
std::string podBody(const std::string& name, const std::string& schedulerName = "") {
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"labels", {{"app", "bench"}, {"tier", "x"}}}}},
              {"spec",
               {{"containers",
                 {{{"name", "c"},
                   {"image", "minik8s/busybox:1.35"},
                   {"command", {"sleep", "3600"}},
                   {"resources", {{"requests", {{"cpu", "10m"}, {"memory", "16Mi"}}}}}}}}}}};
  if (!schedulerName.empty()) pod["spec"]["schedulerName"] = schedulerName;
  return pod.dump();
}

struct RunResult {
  double perSecond = 0, p50 = 0, p99 = 0;
  int errors = 0;
  double cpuMsPerOp = 0;  // filled in by the caller that knows whose CPU counts
};

// Runs `total` operations from `threads` threads, each with its own context made by
// makeContext(); op(context, i) returns true on success.
template <typename Context>
RunResult runThreads(int threads, int total, const std::function<Context()>& makeContext,
                     const std::function<bool(Context&, int)>& op) {
  std::vector<std::vector<double>> lat(threads);
  std::atomic<int> next{0}, errors{0};
  auto start = steady_clock::now();
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&, t] {
      Context c = makeContext();
      for (int i = next++; i < total; i = next++) {
        auto s = steady_clock::now();
        if (!op(c, i)) ++errors;
        lat[t].push_back(duration<double, std::milli>(steady_clock::now() - s).count());
      }
    });
  }
  for (auto& t : ts) t.join();
  double secs = duration<double>(steady_clock::now() - start).count();
  std::vector<double> all;
  for (auto& l : lat) all.insert(all.end(), l.begin(), l.end());
  return {total / secs, percentile(all, 50), percentile(all, 99), errors.load()};
}

// Runs `total` operations over `threads` clients; op(client, i) returns true on success.
RunResult runConcurrent(const std::string& url, const minik8s::http::TlsClientConfig& tls,
                        int threads, int total, const std::function<bool(Client&, int)>& op) {
  return runThreads<std::unique_ptr<Client>>(
      threads, total, [&] { return std::make_unique<Client>(url, tls); },
      [&](std::unique_ptr<Client>& c, int i) { return op(*c, i); });
}

constexpr int kClients = 8;

// The baseline of the SQLite creates: the store alone, in this process, on its own file, the
// same bytes under the same kind of keys from as many threads as the API has clients.
RunResult storeAloneCreates(const std::string& dir, const std::string& value, int total) {
  auto store = minik8s::storage::sqlite::SqliteStore::open(dir + "/store-alone.db");
  if (!store.ok()) {
    std::cout << "store alone: " << store.status().message() << "\n";
    return {};
  }
  double cpu0 = 1000 * cpuSeconds(getpid());
  auto r = runThreads<int>(
      kClients, total, [] { return 0; },
      [&](int&, int i) {
        return (*store)->create("/registry/pods/default/pod-" + std::to_string(i), value).ok();
      });
  r.cpuMsPerOp = (1000 * cpuSeconds(getpid()) - cpu0) / total;
  return r;
}

// The baseline of the etcd creates: raw Put over gRPC to the same etcd (no Txn, no Store), the
// same bytes, as many threads as the API has clients.
RunResult rawEtcdPuts(const std::string& endpoint, const std::string& value, int total) {
  auto channel = grpc::CreateChannel(endpoint, grpc::InsecureChannelCredentials());
  auto kv = etcdserverpb::KV::NewStub(channel);
  return runThreads<int>(
      kClients, total, [] { return 0; },
      [&](int&, int i) {
        etcdserverpb::PutRequest req;
        req.set_key("/raw/pods/default/pod-" + std::to_string(i));
        req.set_value(value);
        etcdserverpb::PutResponse resp;
        grpc::ClientContext ctx;
        return kv->Put(&ctx, req, &resp).ok();
      });
}

// `perf record --call-graph dwarf` of the server for one phase, when --perf is given.
class PerfRecording {
 public:
  PerfRecording(pid_t server, const std::string& name) {
    if (perfDir.empty()) return;
    path_ = perfDir + "/" + name + ".data";
    std::filesystem::remove(path_);
    pid_ = spawn({"perf", "record", "--call-graph", "dwarf,16384", "-F", "999", "-p",
                  std::to_string(server), "-o", path_},
                 perfDir + "/" + name + ".log", {.deathSignal = SIGINT});
    // perf writes its header once it is attached to every thread.
    auto written = [&] {
      std::error_code ec;
      auto size = std::filesystem::file_size(path_, ec);
      return !ec && size > 0;
    };
    for (int i = 0; i < 200 && !written(); ++i) {
      std::this_thread::sleep_for(milliseconds(10));
    }
  }
  ~PerfRecording() {
    if (pid_ <= 0) return;
    kill(pid_, SIGINT);
    waitpid(pid_, nullptr, 0);
  }
  PerfRecording(const PerfRecording&) = delete;
  PerfRecording& operator=(const PerfRecording&) = delete;

 private:
  std::string path_;
  pid_t pid_ = -1;
};

struct WatchFigures {
  std::vector<double> delivery;  // ms from a create's send to one watcher's receipt of it
  std::vector<double> createMs;  // the creates' own round trips
  size_t expected = 0;           // watchers x measured events
  double serverCpuMsPerEvent = 0;
};

// Opens `watchers` watches on `ns` from the current revision, then creates 1 + watchEvents pods
// named <tag>-<k>, one after another: each once every watcher has the previous one (or 10 s
// passed), with a 100 ms gap for the server's own reaction to the new pod (the scheduler's
// write) so that it is not inside the next figure. Pod 0 only proves every watch is registered;
// the others are timed from the moment their POST is sent.
WatchFigures watchDelivery(const std::string& url, const minik8s::http::TlsClientConfig& tls,
                           const std::string& ns, pid_t server, int watchers,
                           const std::string& tag) {
  const int events = 1 + watchEvents;
  std::vector<std::atomic<int64_t>> sentAtNs(events);
  std::vector<int> receivedBy(events, 0);
  std::vector<std::vector<double>> delivery(watchers);
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < watchers; ++i) clients.push_back(std::make_unique<Client>(url, tls));
  Client creator(url, tls);
  auto rv = json::parse(creator.get(ns + "?limit=1")->body)["metadata"]["resourceVersion"]
                .get<std::string>();
  std::vector<std::thread> threads;
  for (int i = 0; i < watchers; ++i) {
    threads.emplace_back([&, i] {
      int next = 0;  // the event this watcher waits for
      std::string pending;
      clients[i]->stream("GET", ns + "?watch=1&resourceVersion=" + rv, [&](std::string_view chunk) {
        const int64_t now = steady_clock::now().time_since_epoch().count();
        pending.append(chunk);
        size_t start = 0;
        for (size_t nl; next < events && (nl = pending.find('\n', start)) != std::string::npos;
             start = nl + 1) {
          std::string_view line(pending.data() + start, nl - start);
          const std::string name = "\"name\":\"" + tag + "-" + std::to_string(next) + "\"";
          if (line.find(name) == std::string_view::npos) continue;
          delivery[i].push_back((now - sentAtNs[next].load()) / 1e6);
          std::lock_guard lock(mu);
          ++receivedBy[next++];
          cv.notify_all();
        }
        pending.erase(0, start);
        return next < events;
      });
    });
  }
  WatchFigures out;
  double cpu0 = 0;
  for (int k = 0; k < events; ++k) {
    if (k == 1) cpu0 = 1000 * cpuSeconds(server);
    sentAtNs[k] = steady_clock::now().time_since_epoch().count();
    auto s = steady_clock::now();
    auto r = creator.request("POST", ns, podBody(tag + "-" + std::to_string(k)));
    if (k > 0)
      out.createMs.push_back(duration<double, std::milli>(steady_clock::now() - s).count());
    if (!r.ok() || r->status != 201) std::cout << tag << ": create " << k << " failed\n";
    std::unique_lock lock(mu);
    cv.wait_for(lock, seconds(10), [&] { return receivedBy[k] == watchers; });
    lock.unlock();
    std::this_thread::sleep_for(milliseconds(100));
  }
  out.serverCpuMsPerEvent = (1000 * cpuSeconds(server) - cpu0) / watchEvents;
  for (auto& c : clients) c->close();
  for (auto& t : threads) t.join();
  // Event 0 was the registration check.
  for (auto& d : delivery) {
    if (d.size() > 1) out.delivery.insert(out.delivery.end(), d.begin() + 1, d.end());
  }
  out.expected = static_cast<size_t>(watchers) * watchEvents;
  return out;
}

struct ListBaselines {
  double serialiseMs = 0;  // dumping the parsed list again, in this process (median of 3)
  double sameBytesMs = 0;  // the same body from memory over TLS, minik8s's HTTP server (median)
};

// The two floors of a list answer of `body`, measured like the list itself: a fresh client per
// request (so the TLS handshake is in both), three times, the median.
ListBaselines listBaselines(const std::string& body, const std::string& serverDir,
                            const minik8s::http::TlsClientConfig& clientTls) {
  ListBaselines out;
  json parsed = json::parse(body);
  std::vector<double> ms;
  for (int i = 0; i < 3; ++i) {
    auto s = steady_clock::now();
    std::string dumped = parsed.dump(-1, ' ', false, json::error_handler_t::replace);
    ms.push_back(duration<double, std::milli>(steady_clock::now() - s).count());
    if (dumped.size() < body.size() / 2) std::cout << "serialise baseline: short dump\n";
  }
  out.serialiseMs = percentile(ms, 50);

  minik8s::http::TlsServerConfig serving;
  for (auto [field, file] : {std::pair{&serving.certPem, "/pki/apiserver.crt"},
                             std::pair{&serving.keyPem, "/pki/apiserver.key"},
                             std::pair{&serving.clientCaPem, "/pki/ca.crt"}}) {
    if (auto pem = minik8s::pki::readPemFile(serverDir + file); pem.ok()) *field = *pem;
  }
  minik8s::http::Server memory(
      [&](const minik8s::http::Request&, minik8s::http::ResponseWriter& w) {
        minik8s::http::Response res;
        res.status = 200;
        res.headers.emplace_back("Content-Type", "application/json");
        res.body = body;  // a copy, as a server building its answer would make
        w.send(std::move(res));
      });
  if (!memory.enableTls(serving).ok() || !memory.start("127.0.0.1:0").ok()) {
    std::cout << "same-bytes baseline: cannot serve\n";
    return out;
  }
  const std::string url = "https://127.0.0.1:" + std::to_string(memory.port());
  ms.clear();
  for (int i = 0; i < 3; ++i) {
    Client c(url, clientTls);
    auto s = steady_clock::now();
    auto r = c.get("/");
    ms.push_back(duration<double, std::milli>(steady_clock::now() - s).count());
    if (!r.ok() || r->body.size() != body.size()) std::cout << "same-bytes baseline: short\n";
  }
  memory.stop();
  out.sameBytesMs = percentile(ms, 50);
  return out;
}

void benchBackend(const std::string& backend, int pods, const std::string& etcdUrl,
                  const std::string& dir) {
  int port = freePort();
  std::string url = "https://127.0.0.1:" + std::to_string(port);
  std::vector<std::string> args = {serverBinary,  "server",
                                   "--data-dir",  dir + "/server-" + backend,
                                   "--listen",    "127.0.0.1:" + std::to_string(port),
                                   "--log-level", "warn"};
  if (backend == "etcd") {
    args.push_back("--datastore");
    args.push_back("etcd://" + etcdUrl.substr(7));
  }
  pid_t server = spawn(args, dir + "/server-" + backend + ".log");
  const std::string serverDir = dir + "/server-" + backend;
  for (int i = 0; i < 300 && !std::filesystem::exists(serverDir + "/kubeconfig"); ++i)
    std::this_thread::sleep_for(milliseconds(50));
  // The admin's credential, as the server's kubeconfig carries it.
  minik8s::http::TlsClientConfig adminTls;
  for (auto [field, file] :
       {std::pair{&adminTls.caPem, "/pki/ca.crt"}, std::pair{&adminTls.certPem, "/pki/admin.crt"},
        std::pair{&adminTls.keyPem, "/pki/admin.key"}}) {
    if (auto pem = minik8s::pki::readPemFile(serverDir + file); pem.ok()) *field = *pem;
  }
  if (!waitReady(url, "/readyz", adminTls)) {
    std::cout << backend << ": server did not start\n";
    stopProcess(server);
    return;
  }
  std::this_thread::sleep_for(milliseconds(500));
  long idleRss = rssKiB(server);
  const std::string ns = "/api/v1/namespaces/default/pods";

  // Three phases of creates: `first` pods that nothing in the cluster reacts to (the API path and
  // the store alone: pods for a scheduler this cluster does not run), then `first` pods the
  // server's own scheduler marks unschedulable (a status PATCH and a FailedScheduling Event
  // each, as kube-scheduler writes), then the rest up to `pods`.
  int first = std::min(pods / 2, 2000);
  // The bytes the server stores for one bench pod (a dry run stores nothing).
  std::string stored;
  {
    Client c(url, adminTls);
    auto r = c.request("POST", ns + "?dryRun=All", podBody("pod-0"));
    if (r.ok() && r->status == 201) stored = json::parse(r->body).dump();
  }
  RunResult baseline = backend == "etcd" ? rawEtcdPuts(etcdUrl.substr(7), stored, first)
                                         : storeAloneCreates(dir, stored, first);
  std::atomic<long> rss1000{-1};  // read by the client that creates the 1,000th pod
  double serverCpu0 = 1000 * cpuSeconds(server);
  auto quiet = runConcurrent(url, adminTls, kClients, first, [&](Client& c, int i) {
    auto r = c.request("POST", ns, podBody("quiet-" + std::to_string(i), "bench-no-scheduler"));
    if (i == 999) rss1000 = rssKiB(server);
    return r.ok() && r->status == 201;
  });
  quiet.cpuMsPerOp = (1000 * cpuSeconds(server) - serverCpu0) / first;
  serverCpu0 = 1000 * cpuSeconds(server);
  auto creates = runConcurrent(url, adminTls, kClients, first, [&](Client& c, int i) {
    auto r = c.request("POST", ns, podBody("pod-" + std::to_string(i)));
    return r.ok() && r->status == 201;
  });
  creates.cpuMsPerOp = (1000 * cpuSeconds(server) - serverCpu0) / first;
  auto gets = runConcurrent(url, adminTls, kClients, 4000, [&](Client& c, int i) {
    auto r = c.get(ns + "/pod-" + std::to_string(i % first));
    return r.ok() && r->status == 200;
  });
  // Fill up to `pods` for the list and memory figures.
  runConcurrent(url, adminTls, kClients, pods - 2 * first, [&](Client& c, int i) {
    auto r = c.request("POST", ns, podBody("pod-" + std::to_string(first + i)));
    return r.ok() && r->status == 201;
  });
  std::vector<double> listMs;
  size_t listed = 0;
  std::string listBody;
  double listCpu0 = 1000 * cpuSeconds(server), listCpuMs = 0;
  {
    PerfRecording perf(server, backend + "-list");
    for (int i = 0; i < 3; ++i) {
      Client c(url, adminTls);
      auto s = steady_clock::now();
      auto r = c.get(ns);
      listMs.push_back(duration<double, std::milli>(steady_clock::now() - s).count());
      if (r.ok()) listBody = std::move(r->body);
    }
    listCpuMs = (1000 * cpuSeconds(server) - listCpu0) / 3;
  }
  if (!listBody.empty()) listed = json::parse(listBody)["items"].size();
  const ListBaselines listFloor =
      listBody.empty() ? ListBaselines{} : listBaselines(listBody, serverDir, adminTls);
  long fullRss = rssKiB(server);

  // One event to one watcher, then to 100: the same creates, the same timing.
  std::this_thread::sleep_for(seconds(settleSeconds));
  long settledRss = rssKiB(server);
  constexpr int kWatchers = 100;
  const WatchFigures one = watchDelivery(url, adminTls, ns, server, 1, "watched-alone");
  WatchFigures many;
  {
    PerfRecording perf(server, backend + "-watch");
    many = watchDelivery(url, adminTls, ns, server, kWatchers, "watched-pod");
  }

  auto printCreates = [&](const RunResult& r, const char* note) {
    std::printf(
        "%-7s creates/s %8.0f  p50 %6.2f ms  p99 %6.2f ms  (errors %d)  server CPU %.3f ms/create"
        "  [%s]\n",
        backend.c_str(), r.perSecond, r.p50, r.p99, r.errors, r.cpuMsPerOp, note);
  };
  printCreates(creates, "its scheduler marks each unschedulable: +1 PATCH, +1 Event");
  printCreates(quiet, "nothing reacts: schedulerName of no scheduler here");
  const char* baselineName = backend == "etcd" ? "raw etcd Put (gRPC)" : "SqliteStore alone";
  std::printf("%-7s %s/s %8.0f  p50 %6.2f ms  p99 %6.2f ms  (errors %d)", backend.c_str(),
              baselineName, baseline.perSecond, baseline.p50, baseline.p99, baseline.errors);
  if (backend != "etcd") std::printf("  CPU %.3f ms/create", baseline.cpuMsPerOp);
  std::printf("  [baseline, %zu bytes]\n", stored.size());
  std::printf("%-7s API creates / %s: %.2fx, nothing reacting %.2fx\n", backend.c_str(),
              baselineName, baseline.perSecond > 0 ? creates.perSecond / baseline.perSecond : 0.0,
              baseline.perSecond > 0 ? quiet.perSecond / baseline.perSecond : 0.0);
  std::printf("%-7s gets/s    %8.0f  p50 %6.2f ms  p99 %6.2f ms  (errors %d)\n", backend.c_str(),
              gets.perSecond, gets.p50, gets.p99, gets.errors);
  const double listMedian = percentile(listMs, 50);
  std::printf(
      "%-7s list %zu pods: median %.1f ms (%.1f MiB)  server CPU %.0f ms/list (with what else it "
      "does meanwhile)\n",
      backend.c_str(), listed, listMedian, listBody.size() / 1048576.0, listCpuMs);
  std::printf(
      "%-7s   serialising them alone %.1f ms [baseline]: %.2fx;  the same bytes from memory over "
      "TLS %.1f ms [floor]: %.2fx\n",
      backend.c_str(), listFloor.serialiseMs,
      listFloor.serialiseMs > 0 ? listMedian / listFloor.serialiseMs : 0.0, listFloor.sameBytesMs,
      listFloor.sameBytesMs > 0 ? listMedian / listFloor.sameBytesMs : 0.0);
  auto printWatch = [&](const WatchFigures& f, int watchers, const char* note) {
    std::printf(
        "%-7s watch event to %3d watcher%s (%zu/%zu): p50 %6.2f ms  p99 %6.2f ms  max %6.2f ms"
        "  server CPU %.2f ms/event  create p50 %.2f ms%s\n",
        backend.c_str(), watchers, watchers == 1 ? " " : "s", f.delivery.size(), f.expected,
        percentile(f.delivery, 50), percentile(f.delivery, 99), percentile(f.delivery, 100),
        f.serverCpuMsPerEvent, percentile(f.createMs, 50), note);
  };
  printWatch(one, 1, " [baseline]");
  printWatch(many, kWatchers, "");
  const double p50One = percentile(one.delivery, 50), p99One = percentile(one.delivery, 99);
  std::printf("%-7s   %d watchers / 1 watcher: p50 %.2fx  p99 %.2fx\n", backend.c_str(), kWatchers,
              p50One > 0 ? percentile(many.delivery, 50) / p50One : 0.0,
              p99One > 0 ? percentile(many.delivery, 99) / p99One : 0.0);
  std::printf("%-7s load average %s (%s)\n", backend.c_str(), loadAverage().c_str(),
              serverBinary.c_str());
  std::printf("%-7s server RSS idle %.1f MiB, with ~1,000 pods %.1f MiB, with %d pods %.1f MiB",
              backend.c_str(), idleRss / 1024.0, rss1000.load() / 1024.0, pods, fullRss / 1024.0);
  if (settleSeconds > 0) {
    std::printf(" (%d s later, before the watchers: %.1f MiB)", settleSeconds, settledRss / 1024.0);
  }
  std::printf("\n");
  stopProcess(server);
}

}  // namespace

int main(int argc, char** argv) {
  selfDir = std::filesystem::canonical("/proc/self/exe").parent_path().string();
  int pods = 10000;
  std::string which = "all";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--pods") pods = std::stoi(argv[i + 1]);
    if (a == "--backend") which = argv[i + 1];
    if (a == "--server") serverBinary = argv[i + 1];
    if (a == "--settle") settleSeconds = std::stoi(argv[i + 1]);
    if (a == "--watch-events") watchEvents = std::max(1, std::stoi(argv[i + 1]));
    if (a == "--perf") perfDir = argv[i + 1];
  }
  if (serverBinary.empty()) serverBinary = selfDir + "/minik8s";
  signal(SIGPIPE, SIG_IGN);
  std::string dir =
      std::filesystem::temp_directory_path() / ("minik8s-bench-" + std::to_string(getpid()));
  removeStaleRunDirs("minik8s-bench-");
  std::filesystem::create_directories(dir);
  if (which == "all" || which == "sqlite") benchBackend("sqlite", pods, "", dir);
  if (which == "all" || which == "etcd") {
    int cport = freePort(), pport = freePort();
    std::string curl = "http://127.0.0.1:" + std::to_string(cport);
    std::string purl = "http://127.0.0.1:" + std::to_string(pport);
    pid_t etcd =
        spawn({"etcd", "--name", "bench", "--data-dir", dir + "/etcd", "--listen-client-urls", curl,
               "--advertise-client-urls", curl, "--listen-peer-urls", purl,
               "--initial-advertise-peer-urls", purl, "--initial-cluster", "bench=" + purl},
              dir + "/etcd.log");
    if (waitReady(curl, "/health")) {
      benchBackend("etcd", pods, curl, dir);
    } else {
      std::cout << "etcd did not start\n";
    }
    stopProcess(etcd);
  }
  std::filesystem::remove_all(dir);
  return 0;
}
