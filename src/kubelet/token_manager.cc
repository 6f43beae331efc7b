#include "kubelet/token_manager.h"

#include <algorithm>

namespace minik8s::kubelet {

namespace {
constexpr std::chrono::hours kMaxTokenAge{24};
}  // namespace

json tokenRequestBody(const TokenRequestSpec& spec) {
  json body = {
      {"apiVersion", "authentication.k8s.io/v1"},
      {"kind", "TokenRequest"},
      {"metadata", {{"name", spec.serviceAccountName}, {"namespace", spec.namespaceName}}},
      {"spec",
       {{"expirationSeconds", spec.expirationSeconds},
        {"boundObjectRef",
         {{"apiVersion", "v1"}, {"kind", "Pod"}, {"name", spec.podName}, {"uid", spec.podUid}}}}}};
  body["spec"]["audiences"] = spec.audience.empty() ? json::array() : json::array({spec.audience});
  return body;
}

Result<IssuedPodToken> RestClientTokenRequester::requestToken(const TokenRequestSpec& spec) {
  auto out = client_.createSubresource(client::resources::kServiceAccounts, spec.namespaceName,
                                       spec.serviceAccountName, "token", tokenRequestBody(spec));
  if (!out.ok()) return out.status();
  const json& r = *out;
  if (!r.is_object() || !r.contains("status") || !r["status"].is_object() ||
      !r["status"].contains("token") || !r["status"]["token"].is_string()) {
    return Status::Internal("TokenRequest answer carries no status.token");
  }
  IssuedPodToken issued{r["status"]["token"].get<std::string>(), spec.expirationSeconds};
  if (r.contains("spec") && r["spec"].is_object() && r["spec"].contains("expirationSeconds") &&
      r["spec"]["expirationSeconds"].is_number_integer()) {
    issued.expirationSeconds = r["spec"]["expirationSeconds"].get<int64_t>();
  }
  return issued;
}

TokenManager::TokenManager(TokenRequester& requester, const client::Clock& clock)
    : requester_(requester), clock_(clock) {}

std::string TokenManager::cacheKey(const TokenRequestSpec& s) {
  return s.namespaceName + "/" + s.serviceAccountName + "/" + s.audience + "/" +
         std::to_string(s.expirationSeconds) + "/" + s.podName + "/" + s.podUid;
}

Result<std::string> TokenManager::token(const TokenRequestSpec& spec) {
  const std::string key = cacheKey(spec);
  const auto now = clock_.now();
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end() && now < it->second.refreshAt) return it->second.token;
  }
  // Asked without the lock: a slow API server must not stall other pods' volumes.
  auto issued = requester_.requestToken(spec);
  if (!issued.ok()) {
    // An older token that has not expired yet still serves while the server is unreachable.
    std::lock_guard lock(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end() && now < it->second.expiresAt) return it->second.token;
    return issued.status();
  }
  const auto lifetime = std::chrono::seconds(std::max<int64_t>(issued->expirationSeconds, 1));
  const auto refreshIn = std::min<std::chrono::steady_clock::duration>(
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(lifetime) * 8 / 10,
      kMaxTokenAge);
  std::lock_guard lock(mu_);
  cache_[key] = Cached{spec.podUid, issued->token, now + refreshIn, now + lifetime};
  return issued->token;
}

void TokenManager::forgetPod(const std::string& podUid) {
  std::lock_guard lock(mu_);
  std::erase_if(cache_, [&](const auto& kv) { return kv.second.podUid == podUid; });
}

size_t TokenManager::cachedTokens() const {
  std::lock_guard lock(mu_);
  return cache_.size();
}

}  // namespace minik8s::kubelet
