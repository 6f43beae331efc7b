#include "kubelet/images/registry_push.h"

#include <map>

#include "common/http_client.h"
#include "fmt/format.h"

namespace minik8s::kubelet::images {
namespace {

using Headers = std::vector<std::pair<std::string, std::string>>;

std::string header(const http::Response& r, const std::string& name) {
  for (const auto& [k, v] : r.headers) {
    if (strcasecmp(k.c_str(), name.c_str()) == 0) return v;
  }
  return "";
}

Status httpError(const std::string& what, const http::Response& r) {
  return Status::Unavailable(
      fmt::format("registry: {}: HTTP {}: {}", what, r.status, r.body.substr(0, 300)));
}

class Pusher {
 public:
  explicit Pusher(const std::string& registry) : client_("http://" + registry) {}

  Status pushBlob(const std::string& repo, const std::string& digest, const std::string& bytes) {
    std::string target = fmt::format("/v2/{}/blobs/uploads/", repo);
    auto from = uploadedIn_.find(digest);
    if (from != uploadedIn_.end()) {
      target += fmt::format("?mount={}&from={}", digest, from->second);
    }
    auto start = client_.request("POST", target, "", {{"Content-Length", "0"}});
    if (!start.ok()) return start.status();
    if (start->status == 201) return Status::Ok();  // mounted from another repository
    if (start->status != 202) return httpError("start upload of " + digest, *start);
    std::string location = header(*start, "Location");
    size_t v2 = location.find("/v2/");
    if (v2 == std::string::npos) return httpError("upload without a Location", *start);
    location = location.substr(v2);
    location += (location.find('?') == std::string::npos ? "?" : "&") + ("digest=" + digest);
    auto put =
        client_.request("PUT", location, bytes, {{"Content-Type", "application/octet-stream"}});
    if (!put.ok()) return put.status();
    if (put->status != 201) return httpError("upload of " + digest, *put);
    uploadedIn_.emplace(digest, repo);
    return Status::Ok();
  }

  Status pushManifest(const std::string& repo, const std::string& reference,
                      const std::string& mediaType, const std::string& bytes) {
    auto put = client_.request("PUT", fmt::format("/v2/{}/manifests/{}", repo, reference), bytes,
                               {{"Content-Type", mediaType}});
    if (!put.ok()) return put.status();
    if (put->status != 201) return httpError(fmt::format("manifest {}:{}", repo, reference), *put);
    return Status::Ok();
  }

 private:
  http::Client client_;
  std::map<std::string, std::string> uploadedIn_;  // digest -> a repository holding it
};

// Pushes a manifest (or an index and the manifests it lists) with everything it references.
Status pushTree(Pusher& pusher, const OciLayout& layout, const std::string& repo,
                const std::string& digest, const std::string& mediaType,
                const std::string& reference) {
  auto blob = layout.blobs.find(digest);
  if (blob == layout.blobs.end()) return Status::BadRequest("missing blob " + digest);
  try {
    json m = json::parse(blob->second);
    std::string type = m.value("mediaType", mediaType);
    if (m.contains("manifests")) {  // an index: push each platform's manifest by digest
      for (const auto& child : m["manifests"]) {
        std::string d = child.at("digest").get<std::string>();
        if (!layout.blobs.contains(d)) continue;  // other platforms may be left out
        Status s =
            pushTree(pusher, layout, repo, d, child.value("mediaType", kManifestMediaType), d);
        if (!s.ok()) return s;
      }
    } else {
      std::vector<json> refs;
      if (m.contains("config")) refs.push_back(m["config"]);
      for (const auto& l : m.value("layers", json::array())) refs.push_back(l);
      for (const auto& ref : refs) {
        std::string d = ref.at("digest").get<std::string>();
        auto b = layout.blobs.find(d);
        if (b == layout.blobs.end()) return Status::BadRequest("missing blob " + d);
        if (Status s = pusher.pushBlob(repo, d, b->second); !s.ok()) return s;
      }
    }
    return pusher.pushManifest(repo, reference, type, blob->second);
  } catch (const json::exception& ex) {
    return Status::BadRequest(fmt::format("manifest {}: {}", digest, ex.what()));
  }
}

}  // namespace

Result<std::string> mirrorPathFor(const std::string& imageName) {
  auto ref = parseImageReference(imageName);
  if (!ref.ok()) return ref.status();
  if (ref->tag.starts_with("sha256:")) return ref->repository + "@" + ref->tag;
  return ref->repository + ":" + ref->tag;
}

Result<std::vector<std::string>> pushOciLayout(const OciLayout& layout,
                                               const std::string& registry) {
  Pusher pusher(registry);
  std::vector<std::string> pushed;
  for (const auto& entry : layout.manifests) {
    if (entry.name.empty()) {
      return Status::BadRequest(
          fmt::format("image {} in index.json has no name (annotation io.containerd.image.name)",
                      entry.digest));
    }
    auto ref = parseImageReference(entry.name);
    if (!ref.ok()) return ref.status();
    Status s = pushTree(pusher, layout, ref->repository, entry.digest, entry.mediaType, ref->tag);
    if (!s.ok()) return s;
    pushed.push_back(ref->repository + ":" + ref->tag);
  }
  return pushed;
}

}  // namespace minik8s::kubelet::images
