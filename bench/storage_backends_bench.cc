// Store backends side by side: creates/s with p50/p99 latency from 8 threads, gets/s, listing
// 10,000 keys of ~1 KiB, for SQLite and etcd; plus, as the baseline measured in the same run,
// raw etcd Put/s over gRPC with the same concurrency (no Txn, no Store). It starts its own etcd
// on loopback like the tests do. It reports; it never asserts a time.
//
// Usage: storage_backends_bench [seconds per phase, default 2] [sqlite]  ("sqlite": SQLite only)
#include <benchmark/benchmark.h>
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "etcd/rpc.grpc.pb.h"
#include "storage/etcd/etcd_process.h"
#include "storage/store.h"

namespace minik8s::storage {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kThreads = 8;
constexpr int kListKeys = 10000;
const std::string kValue(1024, 'x');

struct Throughput {
  double perSecond = 0;
  double p50Ms = 0;
  double p99Ms = 0;
  int64_t errors = 0;
};

// Runs `op(thread, i)` from kThreads threads for `seconds`; op returns false on failure.
Throughput runConcurrently(double seconds, const std::function<bool(int, int64_t)>& op) {
  std::vector<std::vector<double>> latencies(kThreads);
  std::atomic<int64_t> errors{0};
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  const auto start = Clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int64_t i = 0; Clock::now() < end; ++i) {
        auto t0 = Clock::now();
        bool ok = op(t, i);
        latencies[t].push_back(
            std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        if (!ok) ++errors;
      }
    });
  }
  for (auto& th : threads) th.join();
  double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  std::vector<double> all;
  for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  Throughput r;
  r.errors = errors;
  if (all.empty()) return r;
  r.perSecond = static_cast<double>(all.size()) / elapsed;
  r.p50Ms = all[all.size() / 2];
  r.p99Ms = all[std::min(all.size() - 1, all.size() * 99 / 100)];
  return r;
}

struct BackendFigures {
  std::string name;
  Throughput creates;
  Throughput gets;
  double listMs = 0;
};

BackendFigures measure(const std::string& name, Store& store, double seconds) {
  BackendFigures f;
  f.name = name;
  std::fprintf(stderr, "[%s] creates...\n", name.c_str());
  std::vector<std::atomic<int64_t>> created(kThreads);
  f.creates = runConcurrently(seconds, [&](int t, int64_t i) {
    bool ok =
        store.create("/bench/create/t" + std::to_string(t) + "/" + std::to_string(i), kValue).ok();
    if (ok) created[t] = i + 1;
    return ok;
  });

  std::fprintf(stderr, "[%s] gets...\n", name.c_str());
  f.gets = runConcurrently(seconds, [&](int t, int64_t i) {
    int64_t n = std::max<int64_t>(created[t], 1);
    auto kv = store.get("/bench/create/t" + std::to_string(t) + "/" + std::to_string(i % n));
    benchmark::DoNotOptimize(kv);
    return kv.ok();
  });

  std::fprintf(stderr, "[%s] filling %d keys for the list...\n", name.c_str(), kListKeys);
  std::atomic<int> nextKey{0};
  std::vector<std::thread> fillers;
  for (int t = 0; t < kThreads; ++t) {
    fillers.emplace_back([&] {
      char buf[32];
      for (int k; (k = nextKey++) < kListKeys;) {
        std::snprintf(buf, sizeof buf, "%06d", k);
        store.create(std::string("/bench/list/") + buf, kValue);
      }
    });
  }
  for (auto& th : fillers) th.join();
  double best = 1e9;
  for (int rep = 0; rep < 3; ++rep) {
    auto t0 = Clock::now();
    auto list = store.list("/bench/list/");
    double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (!list.ok() || list->items.size() != kListKeys) {
      std::fprintf(stderr, "[%s] list failed: %s\n", name.c_str(),
                   list.ok() ? "wrong count" : list.status().toString().c_str());
    }
    best = std::min(best, ms);
  }
  f.listMs = best;
  return f;
}

Throughput measureRawEtcdPut(const std::string& endpoint, double seconds) {
  std::fprintf(stderr, "[raw etcd] puts...\n");
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  auto channel = grpc::CreateCustomChannel(endpoint, grpc::InsecureChannelCredentials(), args);
  auto kv = etcdserverpb::KV::NewStub(channel);
  return runConcurrently(seconds, [&](int t, int64_t i) {
    etcdserverpb::PutRequest req;
    req.set_key("/bench/raw/t" + std::to_string(t) + "/" + std::to_string(i));
    req.set_value(kValue);
    etcdserverpb::PutResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    return kv->Put(&ctx, req, &resp).ok();
  });
}

void printRow(const BackendFigures& f, double rawPerSecond) {
  std::printf("%-16s %10.0f %8.2f %8.2f %10.0f %12.1f %10.2f\n", f.name.c_str(),
              f.creates.perSecond, f.creates.p50Ms, f.creates.p99Ms, f.gets.perSecond, f.listMs,
              f.creates.perSecond / rawPerSecond);
}

int run(double seconds, bool sqliteOnly) {
  char tmpl[] = "/tmp/minik8s-storage-bench-XXXXXX";
  if (!::mkdtemp(tmpl)) return 1;
  const std::string dir = tmpl;

  BackendFigures sqliteFigures;
  {
    auto store = openStore("sqlite://" + dir + "/state.db");
    if (!store.ok()) {
      std::fprintf(stderr, "sqlite: %s\n", store.status().toString().c_str());
      return 1;
    }
    sqliteFigures = measure("sqlite", **store, seconds);
  }
  std::filesystem::remove_all(dir);
  if (sqliteOnly) {
    printRow(sqliteFigures, sqliteFigures.creates.perSecond);
    return 0;
  }

  auto etcd = etcd::EtcdProcess::start();
  if (!etcd.ok()) {
    std::fprintf(stderr, "etcd: %s\n", etcd.status().toString().c_str());
    return 1;
  }
  Throughput raw = measureRawEtcdPut((*etcd)->endpoint(), seconds);
  BackendFigures etcdFigures;
  {
    auto store = openStore("etcd://" + (*etcd)->endpoint());
    if (!store.ok()) return 1;
    etcdFigures = measure("etcd", **store, seconds);
  }

  std::printf("\n%d threads, %zu-byte values, %.1fs per phase\n", kThreads, kValue.size(), seconds);
  std::printf("%-16s %10s %8s %8s %10s %12s %10s\n", "backend", "creates/s", "p50 ms", "p99 ms",
              "gets/s", "list 10k ms", "vs raw put");
  printRow(sqliteFigures, raw.perSecond);
  printRow(etcdFigures, raw.perSecond);
  std::printf("%-16s %10.0f %8.2f %8.2f %10s %12s %10.2f\n", "raw etcd Put", raw.perSecond,
              raw.p50Ms, raw.p99Ms, "-", "-", 1.0);
  int64_t errors = sqliteFigures.creates.errors + sqliteFigures.gets.errors +
                   etcdFigures.creates.errors + etcdFigures.gets.errors + raw.errors;
  if (errors) std::printf("(%lld operations failed)\n", static_cast<long long>(errors));
  return 0;
}

}  // namespace
}  // namespace minik8s::storage

int main(int argc, char** argv) {
  double seconds = argc > 1 ? std::atof(argv[1]) : 2.0;
  if (seconds <= 0) seconds = 2.0;
  bool sqliteOnly = argc > 2 && std::string(argv[2]) == "sqlite";
  return minik8s::storage::run(seconds, sqliteOnly);
}
