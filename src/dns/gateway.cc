#include "dns/gateway.h"

#include <algorithm>
#include <filesystem>

#include "common/logging.h"
#include "common/time_util.h"
#include "dns/dns_endpoint.h"
#include "dns/gateway_config.h"
#include "fmt/format.h"

namespace minik8s::dns {

namespace {

constexpr const char* kComponent = "minik8s-gateway";

std::string gatewaySliceName(const std::string& nodeName) {
  return std::string(kGatewayServiceName) + "-" + nodeName;
}

json readyCondition(const json& status) {
  auto conditions = status.find("conditions");
  if (conditions == status.end() || !conditions->is_array()) return json();
  for (const auto& c : *conditions)
    if (c.is_object() && c.value("type", "") == "Ready") return c;
  return json();
}

}  // namespace

json gatewayServiceObject() {
  return {
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata",
       {{"name", kGatewayServiceName},
        {"namespace", kGatewayServiceNamespace},
        {"labels", {{"app.kubernetes.io/name", kGatewayServiceName}}}}},
      {"spec",
       {{"type", "ClusterIP"},
        {"clusterIP", kGatewayServiceIP},
        {"ports", {{{"name", "http"}, {"port", 80}, {"protocol", "TCP"}, {"targetPort", 80}}}}}}};
}

json gatewayEndpointSliceObject(const std::string& nodeName, const std::string& nodeIP, int port) {
  return {{"apiVersion", "discovery.k8s.io/v1"},
          {"kind", "EndpointSlice"},
          {"metadata",
           {{"name", gatewaySliceName(nodeName)},
            {"namespace", kGatewayServiceNamespace},
            {"labels",
             {{"kubernetes.io/service-name", kGatewayServiceName},
              {"endpointslice.kubernetes.io/managed-by", "minik8s-agent"}}}}},
          {"addressType", "IPv4"},
          {"endpoints",
           {{{"addresses", {nodeIP}},
             {"nodeName", nodeName},
             {"conditions", {{"ready", true}, {"serving", true}, {"terminating", false}}}}}},
          {"ports", {{{"name", "http"}, {"port", port}, {"protocol", "TCP"}}}}};
}

DnsGateway::DnsGateway(client::RestClient& client, GatewayOptions options)
    : client_(client),
      options_(std::move(options)),
      events_(client_,
              client::ApiEventRecorderOptions{.component = kComponent, .host = options_.nodeName}),
      dnses_(client_, client::resources::kDnses),
      services_(client::SharedInformers::informerOf(options_.informers, client_,
                                                    client::resources::kServices)),
      nginx_(GatewayNginxConfig{options_.nginxPath, options_.dataDir}),
      sync_({&dnses_, services_.get()}, [this] { return sync(); },
            {options_.minSyncInterval, options_.maxSyncInterval, options_.retryInterval}) {}

DnsGateway::~DnsGateway() { stop(); }

Status DnsGateway::start() {
  if (started_) return Status::Ok();
  if (options_.listenAddress.empty()) return Status::BadRequest("gateway: no listen address");
  std::error_code ec;
  std::filesystem::create_directories(options_.dataDir, ec);
  if (ec) {
    return Status::Internal(
        fmt::format("gateway: cannot create {}: {}", options_.dataDir, ec.message()));
  }
  if (!sync_.startInformers(options_.informerSyncTimeout)) {
    LOG_WARN("gateway: informers not synced after {} ms; routes follow once they are",
             options_.informerSyncTimeout.count());
  }
  // nginx starts on what is known now (maybe nothing): the port answers from the beginning.
  GatewayPlan plan = planGateway(dnses_.list(), services_->list());
  NginxSettings settings{options_.listenAddress, options_.port, options_.dataDir, options_.user};
  std::string text = renderNginxConfig(plan, settings);
  Status s = nginx_.writeConfig(text);
  if (s.ok()) s = nginx_.start();
  if (!s.ok()) {
    sync_.stop();
    return s;
  }
  written_ = text;
  if (options_.publishEndpoint) {
    Status es = ensureNodeServiceEndpoint(
        client_, gatewayServiceObject(),
        gatewayEndpointSliceObject(options_.nodeName, options_.listenAddress, options_.port),
        options_.nodeName);
    endpointPublished_ = es.ok();
    if (!es.ok()) LOG_WARN("gateway endpoint: {} (retrying)", es.message());
  }
  sync_.startSyncing();
  started_ = true;
  LOG_INFO("gateway: nginx (pid {}) on {}:{} for {} host(s)", nginx_.pid(), options_.listenAddress,
           options_.port, plan.hosts.size());
  return Status::Ok();
}

void DnsGateway::stop() {
  if (!started_) return;
  sync_.stop();
  nginx_.stop();
  started_ = false;
}

int64_t DnsGateway::reloads() const {
  std::lock_guard lock(mu_);
  return reloads_;
}

bool DnsGateway::sync() {
  try {
    return syncOnce();
  } catch (const json::exception& e) {
    // Objects come validated from the API server; this only guards against a missed case.
    LOG_ERROR("gateway: sync failed on an unexpected object: {}", e.what());
    return false;
  }
}

bool DnsGateway::syncOnce() {
  if (!dnses_.hasSynced() || !services_->hasSynced()) return false;
  bool ok = true;
  GatewayPlan plan = planGateway(dnses_.list(), services_->list());
  NginxSettings settings{options_.listenAddress, options_.port, options_.dataDir, options_.user};
  std::string text = renderNginxConfig(plan, settings);
  if (!nginx_.running()) {
    LOG_WARN("gateway: nginx is not running; restarting it (log: {}/error.log)", options_.dataDir);
    Status s = nginx_.writeConfig(text);
    if (s.ok()) s = nginx_.start();
    if (!s.ok()) {
      LOG_ERROR("{}", s.message());
      return false;
    }
    written_ = text;
  } else if (text != written_) {
    Status s = nginx_.writeConfig(text);
    if (s.ok()) s = nginx_.reload();
    if (!s.ok()) {
      LOG_ERROR("{}", s.message());
      return false;
    }
    written_ = text;
    std::lock_guard lock(mu_);
    ++reloads_;
  }
  if (options_.publishHosts && (!hostsPublished_ || plan.hosts != publishedHosts_)) {
    std::vector<HostEntry> entries;
    for (const auto& h : plan.hosts) entries.push_back({h, options_.gatewayIP});
    options_.publishHosts(std::move(entries));
    publishedHosts_ = plan.hosts;
    hostsPublished_ = true;
  }
  if (options_.publishEndpoint && !endpointPublished_) {
    Status es = ensureNodeServiceEndpoint(
        client_, gatewayServiceObject(),
        gatewayEndpointSliceObject(options_.nodeName, options_.listenAddress, options_.port),
        options_.nodeName);
    endpointPublished_ = es.ok();
    if (!es.ok()) {
      LOG_WARN("gateway endpoint: {}", es.message());
      ok = false;
    }
  }
  return syncStatuses(plan) && ok;
}

bool DnsGateway::syncStatuses(const GatewayPlan& plan) {
  bool ok = true;
  for (const auto& want : plan.statuses) {
    auto current = dnses_.get(want.key);
    if (!current) continue;
    const json status = objectField(*current, "status");
    const json cond = readyCondition(status);
    const std::string wantStatus = want.ready ? "True" : "False";
    const int64_t generation = objectField(*current, "metadata").value("generation", int64_t{0});
    const bool same = cond.is_object() && cond.value("status", "") == wantStatus &&
                      cond.value("reason", "") == want.reason &&
                      cond.value("message", "") == want.message &&
                      status.value("observedGeneration", int64_t{0}) == generation;
    if (same) continue;
    const bool transition = !cond.is_object() || cond.value("status", "") != wantStatus;
    json updated = *current;
    updated["status"] = {
        {"observedGeneration", generation},
        {"conditions",
         {{{"type", "Ready"},
           {"status", wantStatus},
           {"reason", want.reason},
           {"message", want.message},
           {"lastTransitionTime",
            transition ? formatRfc3339(Clock::now()) : cond.value("lastTransitionTime", "")}}}}};
    auto put = client_.update(client::resources::kDnses, updated, "status");
    if (!put.ok()) {
      // 409: another node's gateway wrote first (or the object moved on); look again later.
      if (put.status().code() != 409 && put.status().code() != 404) {
        LOG_WARN("gateway: status of dns {}: {}", want.key, put.status().message());
      }
      if (put.status().code() != 404) ok = false;
      continue;
    }
    // The writer that changed the status tells the user why, once per change.
    if (!want.ready) {
      recordEvent(*current, "Warning", want.reason, want.message);
    } else if (cond.is_object() && cond.value("status", "") == "False") {
      recordEvent(*current, "Normal", want.reason, want.message);
    }
  }
  return ok;
}

void DnsGateway::recordEvent(const json& dns, const std::string& type, const std::string& reason,
                             const std::string& message) {
  json involved = {
      {"apiVersion", "minik8s.io/v1"}, {"kind", "Dns"}, {"metadata", objectField(dns, "metadata")}};
  events_.record(involved, type, reason, message);
}

}  // namespace minik8s::dns
