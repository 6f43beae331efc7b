// TokenManager: the service-account tokens the kubelet writes into projected volumes.
//
// token() returns a pod-bound token for (namespace, service account, audience, lifetime, pod),
// asking the API server (TokenRequest on serviceaccounts/<name>/token, through a TokenRequester)
// only when it has none or the one it has is older than 80% of its lifetime or older than 24 h,
// as the Kubernetes kubelet does. forgetPod() drops a deleted pod's tokens. Thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <string>

#include "client/rest_client.h"
#include "client/work_queue.h"
#include "common/status.h"

namespace minik8s::kubelet {

struct TokenRequestSpec {
  std::string namespaceName, serviceAccountName;
  std::string podName, podUid;
  std::string audience;  // "" = the API server's default audience
  int64_t expirationSeconds = 3600;
};

struct IssuedPodToken {
  std::string token;
  int64_t expirationSeconds = 0;  // the lifetime the server granted
};

// Sends a TokenRequest; the agent's implementation uses its RestClient.
class TokenRequester {
 public:
  virtual ~TokenRequester() = default;
  virtual Result<IssuedPodToken> requestToken(const TokenRequestSpec& spec) = 0;
};

class RestClientTokenRequester : public TokenRequester {
 public:
  explicit RestClientTokenRequester(client::RestClient& client) : client_(client) {}
  Result<IssuedPodToken> requestToken(const TokenRequestSpec& spec) override;

 private:
  client::RestClient& client_;
};

// The TokenRequest body for `spec` (authentication.k8s.io/v1, bound to the pod).
json tokenRequestBody(const TokenRequestSpec& spec);

class TokenManager {
 public:
  TokenManager(TokenRequester& requester, const client::Clock& clock);

  Result<std::string> token(const TokenRequestSpec& spec);
  void forgetPod(const std::string& podUid);
  size_t cachedTokens() const;

 private:
  struct Cached {
    std::string podUid, token;
    std::chrono::steady_clock::time_point refreshAt, expiresAt;
  };
  static std::string cacheKey(const TokenRequestSpec& spec);

  TokenRequester& requester_;
  const client::Clock& clock_;
  mutable std::mutex mu_;
  std::map<std::string, Cached> cache_;
};

}  // namespace minik8s::kubelet
