// OCI image building: deterministic tars, digests that verify, index.json names, recipes, and
// the registry push protocol (against an in-process fake registry).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <mutex>

#include "common/http.h"
#include "kubelet/images/image_recipe.h"
#include "kubelet/images/oci_image.h"
#include "kubelet/images/registry_push.h"
#include "kubelet/images/tar_archive.h"

namespace minik8s::kubelet::images {
namespace {

namespace fs = std::filesystem;

std::map<std::string, TarEntry> byPath(const std::string& tar) {
  auto entries = readTar(tar);
  EXPECT_TRUE(entries.ok()) << entries.status().message();
  std::map<std::string, TarEntry> out;
  for (auto& e : *entries) out[e.path] = e;
  return out;
}

ImageSpec smallImage() {
  ImageSpec spec;
  spec.names = {"minik8s/test:1.0", "busybox:9", "registry.k8s.io/pause:3.9"};
  spec.rootfs = {{"bin/sh", TarEntryType::kFile, 0755, "#!fake shell", ""},
                 {"/usr/bin/ls", TarEntryType::kSymlink, 0777, "", "/bin/sh"},
                 {"tmp", TarEntryType::kDirectory, 01777, "", ""}};
  spec.config.entrypoint = {"/bin/sh"};
  spec.config.cmd = {"-c", "echo hi"};
  spec.config.env = {"PATH=/usr/bin:/bin"};
  return spec;
}

TEST(TarArchiveTest, RoundTripsFilesLinksDirectoriesAndLongNames) {
  std::string longName(150, 'x');
  longName = "deep/" + longName + "/file.txt";
  std::string longTarget = "/" + std::string(120, 't');
  TarWriter w;
  w.add({"dir", TarEntryType::kDirectory, 0750, "", ""});
  w.add({"dir/a.txt", TarEntryType::kFile, 0600, std::string(1000, 'a'), ""});
  w.add({longName, TarEntryType::kFile, 0644, "long", ""});
  w.add({"link", TarEntryType::kSymlink, 0777, "", longTarget});
  std::string tar = w.finish();
  EXPECT_EQ(tar.size() % 512, 0u);

  auto entries = byPath(tar);
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries["dir"].type, TarEntryType::kDirectory);
  EXPECT_EQ(entries["dir"].mode, 0750u);
  EXPECT_EQ(entries["dir/a.txt"].data, std::string(1000, 'a'));
  EXPECT_EQ(entries["dir/a.txt"].mode, 0600u);
  EXPECT_EQ(entries[longName].data, "long");
  EXPECT_EQ(entries["link"].type, TarEntryType::kSymlink);
  EXPECT_EQ(entries["link"].linkTarget, longTarget);
}

TEST(TarArchiveTest, RejectsACorruptHeader) {
  TarWriter w;
  w.add({"a", TarEntryType::kFile, 0644, "x", ""});
  std::string tar = w.finish();
  tar[0] = 'b';  // name changed, checksum not
  EXPECT_FALSE(readTar(tar).ok());
}

TEST(ImageReferenceTest, NormalisesLikeContainerd) {
  auto r = parseImageReference("busybox");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->full(), "docker.io/library/busybox:latest");
  EXPECT_EQ(parseImageReference("minik8s/busybox:1.35")->full(), "docker.io/minik8s/busybox:1.35");
  EXPECT_EQ(parseImageReference("registry.k8s.io/pause:3.9")->full(), "registry.k8s.io/pause:3.9");
  auto local = parseImageReference("127.0.0.1:5000/team/app:v2");
  EXPECT_EQ(local->domain, "127.0.0.1:5000");
  EXPECT_EQ(local->repository, "team/app");
  EXPECT_EQ(local->tag, "v2");
  EXPECT_EQ(parseImageReference("localhost/app")->full(), "localhost/app:latest");
  EXPECT_FALSE(parseImageReference("").ok());
  EXPECT_FALSE(parseImageReference("Upper/Case").ok());

  EXPECT_EQ(*mirrorPathFor("busybox:1.35"), "library/busybox:1.35");
  EXPECT_EQ(*mirrorPathFor("registry.k8s.io/pause:3.9"), "pause:3.9");
  EXPECT_EQ(*mirrorPathFor("minik8s/python"), "minik8s/python:latest");
}

TEST(OciArchiveTest, IsDeterministicAndEveryDigestVerifies) {
  auto a = buildOciArchive(smallImage());
  auto b = buildOciArchive(smallImage());
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->bytes, b->bytes);

  auto files = byPath(a->bytes);
  EXPECT_EQ(json::parse(files["oci-layout"].data), json({{"imageLayoutVersion", "1.0.0"}}));
  int blobs = 0;
  for (const auto& [path, e] : files) {
    if (!path.starts_with("blobs/sha256/") || e.type != TarEntryType::kFile) continue;
    ++blobs;
    EXPECT_EQ(sha256Digest(e.data), "sha256:" + path.substr(13)) << path;
  }
  EXPECT_EQ(blobs, 3);  // layer, config, manifest
  auto blob = [&](const std::string& digest) {
    return files["blobs/sha256/" + digest.substr(7)].data;
  };

  json manifest = json::parse(blob(a->manifestDigest));
  EXPECT_EQ(manifest["schemaVersion"], 2);
  EXPECT_EQ(manifest["mediaType"], kManifestMediaType);
  EXPECT_EQ(manifest["config"]["digest"], a->configDigest);
  EXPECT_EQ(manifest["config"]["size"], blob(a->configDigest).size());
  ASSERT_EQ(manifest["layers"].size(), 1u);
  EXPECT_EQ(manifest["layers"][0]["mediaType"], kLayerMediaType);
  EXPECT_EQ(manifest["layers"][0]["digest"], a->layerDigest);
  EXPECT_EQ(manifest["layers"][0]["size"], blob(a->layerDigest).size());

  json config = json::parse(blob(a->configDigest));
  EXPECT_EQ(config["rootfs"]["diff_ids"], json({a->layerDigest}));  // uncompressed layer
  EXPECT_EQ(config["config"]["Entrypoint"], json({"/bin/sh"}));
  EXPECT_EQ(config["config"]["Cmd"], json({"-c", "echo hi"}));
  EXPECT_EQ(config["config"]["Env"], json({"PATH=/usr/bin:/bin"}));
  EXPECT_EQ(config["os"], "linux");
  EXPECT_EQ(config["architecture"], "amd64");

  json index = json::parse(files["index.json"].data);
  ASSERT_EQ(index["manifests"].size(), 3u);
  std::vector<std::string> names, refNames;
  for (const auto& m : index["manifests"]) {
    EXPECT_EQ(m["digest"], a->manifestDigest);
    EXPECT_EQ(m["size"], blob(a->manifestDigest).size());
    names.push_back(m["annotations"]["io.containerd.image.name"]);
    refNames.push_back(m["annotations"]["org.opencontainers.image.ref.name"]);
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"docker.io/minik8s/test:1.0", "docker.io/library/busybox:9",
                                      "registry.k8s.io/pause:3.9"}));
  EXPECT_EQ(refNames, (std::vector<std::string>{"1.0", "9", "3.9"}));
}

TEST(OciArchiveTest, LayerHasParentsBeforeChildrenAndKeepsModes) {
  auto a = buildOciArchive(smallImage());
  ASSERT_TRUE(a.ok());
  auto files = byPath(a->bytes);
  auto layer = readTar(files["blobs/sha256/" + a->layerDigest.substr(7)].data);
  ASSERT_TRUE(layer.ok());
  std::vector<std::string> order;
  for (const auto& e : *layer) order.push_back(e.path);
  EXPECT_EQ(order,
            (std::vector<std::string>{"bin", "bin/sh", "tmp", "usr", "usr/bin", "usr/bin/ls"}));
  EXPECT_EQ((*layer)[1].mode, 0755u);
  EXPECT_EQ((*layer)[2].mode, 01777u);
  EXPECT_EQ((*layer)[5].linkTarget, "/bin/sh");
}

TEST(OciArchiveTest, ReadBackFindsNamesAndRejectsTamperedBlobs) {
  auto a = buildOciArchive(smallImage());
  ASSERT_TRUE(a.ok());
  auto layout = readOciLayoutTar(a->bytes);
  ASSERT_TRUE(layout.ok()) << layout.status().message();
  EXPECT_EQ(layout->blobs.size(), 3u);
  ASSERT_EQ(layout->manifests.size(), 3u);
  EXPECT_EQ(layout->manifests[1].name, "docker.io/library/busybox:9");

  // Flip one byte of the fake shell inside the layer: the layer blob no longer matches.
  std::string tampered = a->bytes;
  size_t at = tampered.find("#!fake shell");
  ASSERT_NE(at, std::string::npos);
  tampered[at + 2] = 'F';
  auto bad = readOciLayoutTar(tampered);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("does not match its digest"), std::string::npos);
}

class RecipeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("minik8s-recipe-" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "tree/sub/test");
    write("tool", "#!/bin/sh\necho tool\n");
    fs::permissions(dir_ / "tool", fs::perms::owner_all);
    write("tree/a.py", "print(1)\n");
    write("tree/sub/b.py", "print(2)\n");
    write("tree/sub/test/skip.py", "skip\n");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& rel, const std::string& content) {
    std::ofstream(dir_ / rel) << content;
  }
  fs::path dir_;
};

TEST_F(RecipeTest, CollectsFilesTreesLinksAndConfig) {
  std::string d = fs::canonical(dir_).string();
  std::string yaml =
      "names: [minik8s/tool:1]\n"
      "files: [{from: " +
      d +
      "/tool, to: /opt/tool}]\n"
      "trees: [{path: " +
      d +
      "/tree, exclude: [test]}]\n"
      "symlinks: {/usr/local/bin/tool: /opt/tool}\n"
      "dirs: [/tmp]\n"
      "entrypoint: [/opt/tool]\n"
      "env: [A=b]\n";
  auto spec = loadImageRecipe(yaml, "test.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  std::map<std::string, TarEntry> entries;
  for (const auto& e : spec->rootfs) entries[e.path] = e;
  EXPECT_EQ(entries["/opt/tool"].data, "#!/bin/sh\necho tool\n");
  EXPECT_EQ(entries["/opt/tool"].mode, 0700u);
  EXPECT_EQ(entries[d + "/tree/a.py"].data, "print(1)\n");
  EXPECT_EQ(entries[d + "/tree/sub/b.py"].data, "print(2)\n");
  EXPECT_FALSE(entries.contains(d + "/tree/sub/test/skip.py"));
  EXPECT_FALSE(entries.contains(d + "/tree/sub/test"));
  EXPECT_EQ(entries["/usr/local/bin/tool"].linkTarget, "/opt/tool");
  EXPECT_EQ(entries["/tmp"].mode, 01777u);
  EXPECT_EQ(spec->config.entrypoint, std::vector<std::string>{"/opt/tool"});
  EXPECT_EQ(spec->config.env, std::vector<std::string>{"A=b"});
}

TEST_F(RecipeTest, ReportsMissingFilesAndNames) {
  auto noNames = loadImageRecipe("files: [/bin/true]\n", "r.yaml");
  ASSERT_FALSE(noNames.ok());
  EXPECT_NE(noNames.status().message().find("names"), std::string::npos);
  auto missing = loadImageRecipe("names: [x]\nfiles: [/nonexistent/file]\n", "r.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/file"), std::string::npos);
}

// `siblings:` takes a binary from beside the running one (this test's executable here, minik8s
// in a cluster: minik8s-mesh-proxy), by the file name of its path in the image.
TEST_F(RecipeTest, SiblingsComeFromBesideTheRunningBinary) {
  const fs::path binDir = fs::read_symlink("/proc/self/exe").parent_path();
  const std::string name = "recipe-sibling-" + std::to_string(::getpid());
  const fs::path sibling = binDir / name;
  std::ofstream(sibling) << "#!/bin/sh\necho sibling\n";
  fs::permissions(sibling, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec);
  auto spec = loadImageRecipe("names: [t]\nsiblings: [/usr/bin/" + name + "]\n", "r.yaml");
  fs::remove(sibling);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  std::map<std::string, TarEntry> entries;
  for (const auto& e : spec->rootfs) entries[e.path] = e;
  EXPECT_EQ(entries["/usr/bin/" + name].data, "#!/bin/sh\necho sibling\n");
  EXPECT_EQ(entries["/usr/bin/" + name].mode, 0750u);

  auto missing = loadImageRecipe("names: [t]\nsiblings: [/usr/bin/" + name + "]\n", "r.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), 400);
  EXPECT_NE(missing.status().message().find(name + " is not beside " + binDir.string()),
            std::string::npos)
      << missing.status().message();
}

TEST_F(RecipeTest, BusyboxAppletsAndSharedLibraries) {
  if (!fs::exists("/usr/bin/busybox") || !fs::exists("/usr/bin/python3.11")) {
    GTEST_SKIP() << "needs Debian's busybox-static and python3.11";
  }
  auto spec = loadImageRecipe(
      "names: [t]\nbusybox: /usr/bin/busybox\nbinaries: [/usr/bin/python3.11]\n", "r.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  std::map<std::string, TarEntry> entries;
  for (const auto& e : spec->rootfs) entries[e.path] = e;
  // merged /usr: applets land under /usr, the top-level symlinks are reproduced
  EXPECT_EQ(entries["/usr/bin/sh"].linkTarget, "/usr/bin/busybox");
  EXPECT_EQ(entries["/usr/bin/wget"].linkTarget, "/usr/bin/busybox");
  EXPECT_EQ(entries["/usr/sbin/httpd"].linkTarget, "/usr/bin/busybox");
  EXPECT_EQ(entries["/usr/bin/busybox"].type, TarEntryType::kFile);
  EXPECT_EQ(entries["/bin"].linkTarget, "usr/bin");
  EXPECT_EQ(entries["/lib64"].linkTarget, "usr/lib64");
  EXPECT_EQ(entries["/usr/lib/x86_64-linux-gnu/libc.so.6"].type, TarEntryType::kFile);
  EXPECT_FALSE(entries["/usr/lib64/ld-linux-x86-64.so.2"].data.empty());
}

// A registry that speaks just enough of the v2 API and records what it was sent.
class FakeRegistry {
 public:
  FakeRegistry()
      : server_([this](const http::Request& r, http::ResponseWriter& w) { handle(r, w); }) {}
  Status start() { return server_.start("127.0.0.1:0"); }
  std::string address() const { return "127.0.0.1:" + std::to_string(server_.port()); }

  std::mutex mu;
  std::vector<std::string> requests;                 // "METHOD path"
  std::map<std::string, std::string> blobs;          // digest -> bytes
  std::map<std::string, std::string> manifestTypes;  // "repo:tag" -> Content-Type

 private:
  void handle(const http::Request& r, http::ResponseWriter& w) {
    std::lock_guard lock(mu);
    requests.push_back(r.method + " " + r.path);
    if (r.method == "POST" && r.path.ends_with("/blobs/uploads/")) {
      auto mount = r.param("mount");
      if (mount && blobs.contains(*mount)) return w.send(http::Response::text(201, ""));
      http::Response resp = http::Response::text(202, "");
      resp.headers.emplace_back("Location", "http://" + address() + r.path + "u1?_state=s");
      return w.send(resp);
    }
    if (r.method == "PUT" && r.path.find("/blobs/uploads/") != std::string::npos) {
      std::string digest = r.param("digest").value_or("");
      if (sha256Digest(r.body) != digest) return w.send(http::Response::text(400, "bad digest"));
      blobs[digest] = r.body;
      return w.send(http::Response::text(201, ""));
    }
    if (r.method == "PUT" && r.path.find("/manifests/") != std::string::npos) {
      size_t at = r.path.find("/manifests/");
      manifestTypes[r.path.substr(4, at - 4) + ":" + r.path.substr(at + 11)] =
          r.header("Content-Type");
      return w.send(http::Response::text(201, ""));
    }
    w.send(http::Response::text(404, "unexpected"));
  }
  http::Server server_;
};

TEST(RegistryPushTest, PushesBlobsOnceThenManifestsUnderMirrorPaths) {
  FakeRegistry registry;
  ASSERT_TRUE(registry.start().ok());
  auto a = buildOciArchive(smallImage());
  ASSERT_TRUE(a.ok());
  auto layout = readOciLayoutTar(a->bytes);
  ASSERT_TRUE(layout.ok());
  auto pushed = pushOciLayout(*layout, registry.address());
  ASSERT_TRUE(pushed.ok()) << pushed.status().message();
  EXPECT_EQ(*pushed,
            (std::vector<std::string>{"minik8s/test:1.0", "library/busybox:9", "pause:3.9"}));
  std::lock_guard lock(registry.mu);
  EXPECT_EQ(registry.blobs.size(), 2u);  // config and layer, uploaded once, mounted afterwards
  EXPECT_EQ(registry.blobs[a->layerDigest].size(), layout->blobs[a->layerDigest].size());
  EXPECT_EQ(registry.manifestTypes["library/busybox:9"], kManifestMediaType);
  EXPECT_EQ(registry.manifestTypes["pause:3.9"], kManifestMediaType);
  int uploads = 0;
  for (const auto& r : registry.requests)
    uploads += r.starts_with("PUT") && r.find("/blobs/") != std::string::npos;
  EXPECT_EQ(uploads, 2);
  // the first manifest only comes after its blobs
  EXPECT_TRUE(registry.requests[0].starts_with("POST /v2/minik8s/test/blobs/uploads/"));
}

TEST(RegistryPushTest, ReportsAnUnreachableRegistry) {
  auto a = buildOciArchive(smallImage());
  auto layout = readOciLayoutTar(a->bytes);
  auto pushed = pushOciLayout(*layout, "127.0.0.1:1");
  EXPECT_FALSE(pushed.ok());
}

}  // namespace
}  // namespace minik8s::kubelet::images
