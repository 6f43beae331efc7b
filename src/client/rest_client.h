// RestClient: typed-enough access to the minik8s/Kubernetes REST API for controllers, the
// scheduler and the node agent.
//
// Objects are JSON (nlohmann::json) in their API form. A failed call returns the server's
// Status (code, reason, message) so callers can tell NotFound from Conflict. Thread-safe: each
// thread gets its own keep-alive connection from a small pool.
//
// Connection settings come as a URL (plain HTTP) or a ClientConfig (HTTPS with a CA, client
// certificate or bearer token; client/kubeconfig.h reads one from a kubeconfig file).
//
// Failover (HA control planes): the base URL may list several API servers separated by commas.
// Requests go to the current one; when it cannot be reached or stops answering (see
// http::ClientTimeouts) the client moves to the next one in the list, circularly, for every
// thread, and retries there the requests that are safe to repeat (GETs, and any request that
// never reached a server: http::neverReachedServer). It stays on a server while it answers, and
// comes back to an earlier one when the servers after it fail in turn. Watches are not retried
// here: the caller's next watch (an informer relists and rewatches) goes to the new server.
//
// In-process (minik8s server's own components): a ClientConfig with `inProcess` set hands every
// request and watch to that API server of this process (client/in_process_server.h) as
// `inProcessIdentity`, instead of sending it to `servers`; there is then no failover (the
// components of a server talk to their own server), and `servers` is only the address given to
// what cannot go in-process (pods/exec over WebSocket) and the host of the request metrics.
//
// Overload (as client-go): an answer 429, or 5xx, with a `Retry-After: N` header is retried after
// N seconds (at most 10 s per wait), up to ClientConfig::maxRetries times (10), whatever the
// method: the server did not act on it. stopRetrying() ends such waits (the last answer is
// returned) for callers that are shutting down.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/http.h"
#include "common/http_client.h"
#include "common/status.h"

namespace minik8s::client {

class InProcessServer;  // client/in_process_server.h

// A resource as the REST API addresses it.
struct Resource {
  std::string group;    // "" for core
  std::string version;  // "v1"
  std::string plural;   // "pods"
  bool namespaced = true;

  // "/api/v1/namespaces/ns/pods/name/sub"; empty ns on a namespaced resource = all namespaces.
  std::string path(const std::string& ns = "", const std::string& name = "",
                   const std::string& subresource = "") const;
};

// Well-known resources.
namespace resources {
extern const Resource kPods, kNodes, kNamespaces, kServices, kEndpoints, kEvents, kConfigMaps,
    kSecrets, kServiceAccounts, kLeases, kDeployments, kReplicaSets, kHpas, kJobs, kEndpointSlices,
    kDnses, kCertificateSigningRequests;
}  // namespace resources

struct ListParams {
  std::string labelSelector;
  std::string fieldSelector;
  int64_t limit = 0;
  std::string continueToken;
  std::string resourceVersion;
};

// One watch event: type ADDED, MODIFIED, DELETED, BOOKMARK or ERROR.
struct WatchEvent {
  std::string type;
  json object;
};

// Ends a watch running in another thread: closes its connection, or, in-process, makes the
// server's handler see its client gone (it ends at its next client check, within 500 ms).
class WatchCanceller {
 public:
  void cancel();
  bool cancelled();

 private:
  friend class RestClient;
  std::mutex mu_;
  http::Client* client_ = nullptr;
  bool cancelled_ = false;
};

// Where and how to reach the API server.
struct ClientConfig {
  std::string servers;            // "https://host:port", or several separated by commas
  http::TlsClientConfig tls;      // for https:// servers
  std::string bearerToken;        // sent as Authorization: Bearer when set
  http::ClientTimeouts timeouts;  // connect, request and dead-peer limits of every connection
  int maxRetries = 10;            // retries of answers with Retry-After (client-go's default)
  // Set: requests go to this API server of the same process, not over `servers` (see above).
  std::shared_ptr<InProcessServer> inProcess;
  // Who the in-process requests come from, as a verified client certificate (no value: none,
  // the bearer token authenticates them).
  std::optional<http::PeerCertificate> inProcessIdentity;
};

class RestClient {
 public:
  // "http://host:port", or several separated by commas (tried in order, see above).
  explicit RestClient(std::string baseUrl);
  explicit RestClient(const ClientConfig& config);
  ~RestClient();

  const std::string& baseUrl() const { return baseUrl_; }  // as given (all servers)
  std::string currentUrl() const;                          // the server in use now
  bool inProcess() const { return inProcess_ != nullptr; }
  // Sends `Authorization: Bearer <token>` with every request (call before first use).
  void setBearerToken(std::string token) { bearerToken_ = std::move(token); }
  // Retries of 429/5xx answers that carry Retry-After (0: none). Call before first use.
  void setMaxRetries(int n) { maxRetries_ = n; }
  // Requests waiting out a Retry-After return the answer they got now, and later ones do not
  // wait (for shutdown: nothing waits on an overloaded server any more).
  void stopRetrying();

  Result<json> get(const Resource& r, const std::string& ns, const std::string& name);
  Result<json> list(const Resource& r, const std::string& ns, const ListParams& params = {});
  Result<json> create(const Resource& r, const std::string& ns, const json& obj);
  Result<json> update(const Resource& r, const json& obj, const std::string& subresource = "");
  // patchType: "merge" (application/merge-patch+json), "strategic", "json".
  Result<json> patch(const Resource& r, const std::string& ns, const std::string& name,
                     const json& patch, const std::string& patchType = "merge",
                     const std::string& subresource = "");
  Result<json> remove(const Resource& r, const std::string& ns, const std::string& name,
                      const json& deleteOptions = json::object());
  // POST to a subresource (binding, eviction).
  Result<json> createSubresource(const Resource& r, const std::string& ns, const std::string& name,
                                 const std::string& subresource, const json& body);

  // Streams watch events until `onEvent` returns false, the server ends the watch (timeout),
  // the connection fails or `canceller` (optional) is cancelled. An ERROR event (such as 410
  // Expired) is returned as the Status; a watch that could not start or broke off returns
  // Unavailable and sends the next watch or request to the next server. The event is onEvent's
  // to keep: it may move the object out.
  Status watch(const Resource& r, const std::string& ns, const ListParams& params,
               int64_t timeoutSeconds, const std::function<bool(WatchEvent&)>& onEvent,
               WatchCanceller* canceller = nullptr);

  // Raw request; the body of a successful answer parsed as JSON (null when empty).
  Result<json> request(const std::string& method, const std::string& path,
                       const std::string& body = "",
                       const std::string& contentType = "application/json");
  // The same, with the body as it came (a pod's log: text/plain).
  Result<std::string> requestText(const std::string& method, const std::string& path,
                                  const std::string& body = "",
                                  const std::string& contentType = "application/json",
                                  const std::string& accept = "*/*");

 private:
  // A connection to urls_[server] (pooled connections to other servers are dropped).
  std::unique_ptr<http::Client> acquire(size_t server);
  void release(size_t server, std::unique_ptr<http::Client> c);
  // Server `failed` did not answer: move on to the next one (unless another thread already did).
  void failOver(size_t failed);

  std::vector<std::pair<std::string, std::string>> authHeaders() const;
  // One round of requestText over the servers (failover), without Retry-After handling.
  Result<http::Response> send(const std::string& method, const std::string& path,
                              const std::string& body,
                              const std::vector<std::pair<std::string, std::string>>& headers);
  // watch() through inProcess_: the handler runs on this thread and feeds the decoder.
  Status watchInProcess(const std::string& target, const std::function<bool(WatchEvent&)>& onEvent,
                        WatchCanceller* canceller);
  // `headers` and the Host header an HTTP client would send to urls_[0].
  std::vector<std::pair<std::string, std::string>> withHost(
      const std::vector<std::pair<std::string, std::string>>& headers) const;
  // Sleeps `d` unless stopRetrying() is called; false when it was.
  bool waitToRetry(std::chrono::milliseconds d);

  std::string baseUrl_;
  std::vector<std::string> urls_;  // baseUrl_ split at commas; never empty
  std::atomic<size_t> current_{0};
  http::TlsClientConfig tls_;
  http::ClientTimeouts timeouts_;
  std::string bearerToken_;
  int maxRetries_ = 10;
  std::mutex retryMu_;
  std::condition_variable retryCv_;
  bool stopRetrying_ = false;
  std::mutex mu_;
  std::vector<std::pair<size_t, std::unique_ptr<http::Client>>> pool_;  // (server, connection)
  std::shared_ptr<InProcessServer> inProcess_;  // set: the only transport (no urls_, no pool_)
  std::optional<http::PeerCertificate> inProcessIdentity_;
};

// Builds the failure Status from an error response body (a meta/v1 Status) and its code.
Status statusFromResponse(int code, const std::string& body);

}  // namespace minik8s::client
