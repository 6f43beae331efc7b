#include "dns/cluster_dns.h"

#include <filesystem>
#include <fstream>
#include <thread>

#include "common/child_process.h"
#include "common/logging.h"
#include "fmt/format.h"

namespace minik8s::dns {

namespace fs = std::filesystem;

namespace {

DnsmasqConfig dnsmasqConfig(const DnsOptions& o) {
  DnsmasqConfig c;
  c.binary = o.dnsmasqPath;
  c.listenAddress = o.listenAddress;
  c.port = o.port;
  c.domain = o.domain;
  c.hostsFile = o.dataDir + "/hosts";
  c.pidFile = o.dataDir + "/dnsmasq.pid";
  c.logFile = o.dataDir + "/dnsmasq.log";
  c.ttlSeconds = o.ttlSeconds;
  return c;
}

}  // namespace

ClusterDns::ClusterDns(client::RestClient& client, DnsOptions options)
    : client_(client),
      options_(std::move(options)),
      services_(client::SharedInformers::informerOf(options_.informers, client_,
                                                    client::resources::kServices)),
      slices_(client::SharedInformers::informerOf(options_.informers, client_,
                                                  client::resources::kEndpointSlices)),
      dnsmasq_(dnsmasqConfig(options_)),
      sync_({services_.get(), slices_.get()}, [this] { return sync(); },
            {options_.minSyncInterval, options_.maxSyncInterval, options_.retryInterval}) {}

ClusterDns::~ClusterDns() { stop(); }

Status ClusterDns::start() {
  if (started_) return Status::Ok();
  if (options_.listenAddress.empty()) return Status::BadRequest("cluster DNS: no listen address");
  std::error_code ec;
  fs::create_directories(options_.dataDir, ec);
  if (ec) {
    return Status::Internal(
        fmt::format("cluster DNS: cannot create {}: {}", options_.dataDir, ec.message()));
  }
  if (!sync_.startInformers(options_.informerSyncTimeout)) {
    LOG_WARN("dns: informers not synced after {} ms; records follow once they are",
             options_.informerSyncTimeout.count());
  }
  // The first file (possibly empty) is there before dnsmasq reads it.
  std::vector<HostEntry> extra;
  {
    std::lock_guard lock(mu_);
    extra = extraHosts_;
  }
  std::string text = buildHostsFile(services_->list(), slices_->list(), options_.domain, extra);
  if (Status s = writeHostsFile(text); !s.ok()) {
    sync_.stop();
    return s;
  }
  written_ = text;
  dnsmasq_.setWildcards(wildcardDomains(services_->list()));
  Status s = dnsmasq_.start();
  if (s.ok()) s = waitUntilServing();
  if (!s.ok()) {
    dnsmasq_.stop();
    sync_.stop();
    return s;
  }
  sync_.startSyncing();
  started_ = true;
  LOG_INFO("dns: dnsmasq (pid {}) serving {} on {}:{}", dnsmasq_.pid(), options_.domain,
           options_.listenAddress, options_.port);
  return Status::Ok();
}

void ClusterDns::stop() {
  if (!started_) return;
  sync_.stop();
  dnsmasq_.stop();
  started_ = false;
}

void ClusterDns::setExtraHosts(std::vector<HostEntry> entries) {
  {
    std::lock_guard lock(mu_);
    extraHosts_ = std::move(entries);
  }
  sync_.requestSync();
}

int64_t ClusterDns::reloads() const {
  std::lock_guard lock(mu_);
  return reloads_;
}

Status ClusterDns::waitUntilServing() {
  // dnsmasq binds its sockets right after start; a failure (address not here, port taken) ends it.
  for (int i = 0; i < 200; ++i) {
    if (!dnsmasq_.running()) {
      return Status::Internal(
          fmt::format("dns: dnsmasq exited at start; see {}", dnsmasq_.config().logFile));
    }
    if (tcpPortAnswers(options_.listenAddress, options_.port)) return Status::Ok();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return Status::Timeout(
      fmt::format("dns: dnsmasq does not answer on {}:{}", options_.listenAddress, options_.port));
}

Status ClusterDns::writeHostsFile(const std::string& text) {
  // Write then rename: dnsmasq never reads a half-written file.
  std::string path = hostsFilePath();
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    out.flush();
    if (!out) return Status::Internal(fmt::format("dns: cannot write {}", tmp));
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return Status::Internal(fmt::format("dns: cannot rename {}: {}", tmp, ec.message()));
  return Status::Ok();
}

bool ClusterDns::sync() {
  if (!services_->hasSynced() || !slices_->hasSynced()) return false;
  std::vector<HostEntry> extra;
  {
    std::lock_guard lock(mu_);
    extra = extraHosts_;
  }
  std::string text = buildHostsFile(services_->list(), slices_->list(), options_.domain, extra);
  std::vector<HostEntry> wildcards = wildcardDomains(services_->list());
  const bool restart = wildcards != dnsmasq_.config().wildcards && dnsmasq_.running();
  if (restart) {
    // dnsmasq reads --address only at start: a new wildcard domain is a restart (tens of ms).
    LOG_INFO("dns: wildcard domains changed; restarting dnsmasq");
    dnsmasq_.stop();
  }
  dnsmasq_.setWildcards(std::move(wildcards));
  if (!dnsmasq_.running()) {
    // It died (or a SIGHUP came before it installed its handler): a fresh start reads the file.
    if (!restart) {
      LOG_WARN("dns: dnsmasq is not running; restarting it (log: {})", dnsmasq_.config().logFile);
    }
    if (Status s = writeHostsFile(text); !s.ok()) {
      LOG_ERROR("{}", s.message());
      return false;
    }
    written_ = text;
    if (Status s = dnsmasq_.start(); !s.ok()) {
      LOG_ERROR("dns: {}", s.message());
      return false;
    }
    return true;
  }
  if (text == written_) return true;
  if (Status s = writeHostsFile(text); !s.ok()) {
    LOG_ERROR("{}", s.message());
    return false;
  }
  written_ = text;
  if (Status s = dnsmasq_.reload(); !s.ok()) {
    LOG_ERROR("dns: {}", s.message());
    return false;
  }
  std::lock_guard lock(mu_);
  ++reloads_;
  return true;
}

}  // namespace minik8s::dns
