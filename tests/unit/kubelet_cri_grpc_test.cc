// GrpcRuntime against a real containerd (Debian's 1.6) started by the test in a temp dir with
// its own root, state, socket, runc root and CNI conf dir, and a tiny local busybox image
// imported as an OCI layout tar. Skipped when not root or containerd is missing.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/metrics.h"
#include "common/status.h"
#include "kubelet/cri/grpc_runtime.h"
#include "read_file.h"

namespace minik8s::kubelet::cri {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr char kImage[] = "minik8s.test/cri/busybox:1";

using testing::readFile;

void writeFile(const fs::path& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary);
  out << data;
}

std::string sha256Hex(const std::string& data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr);
  std::string hex;
  for (unsigned int i = 0; i < len; ++i) hex += fmt::format("{:02x}", md[i]);
  return hex;
}

int run(const std::string& command) { return std::system(command.c_str()); }

// Stores `data` as a blob of the OCI layout at `layout`; returns its descriptor.
json addBlob(const fs::path& layout, const std::string& mediaType, const std::string& data) {
  std::string hex = sha256Hex(data);
  fs::create_directories(layout / "blobs" / "sha256");
  writeFile(layout / "blobs" / "sha256" / hex, data);
  return {{"mediaType", mediaType}, {"digest", "sha256:" + hex}, {"size", data.size()}};
}

// An OCI image-layout tar holding /bin/busybox (plus sh, sleep, echo links) whose entrypoint
// sleeps for ever: good as a pause image and as a container image.
bool buildBusyboxImageTar(const fs::path& work, const fs::path& tarPath) {
  fs::path rootfs = work / "rootfs";
  fs::path layout = work / "layout";
  fs::create_directories(rootfs / "bin");
  fs::create_directories(rootfs / "tmp");
  fs::copy_file("/bin/busybox", rootfs / "bin" / "busybox", fs::copy_options::overwrite_existing);
  for (const char* applet : {"sh", "sleep", "echo", "cat"}) {
    fs::create_symlink("busybox", rootfs / "bin" / applet);
  }
  if (run(fmt::format("tar --numeric-owner --owner=0 --group=0 -C {} -cf {} bin tmp",
                      rootfs.string(), (work / "layer.tar").string())) != 0) {
    return false;
  }
  std::string layer = readFile(work / "layer.tar");
  json layerDesc = addBlob(layout, "application/vnd.oci.image.layer.v1.tar", layer);
  json config = {
      {"architecture", "amd64"},
      {"os", "linux"},
      {"config",
       {{"Entrypoint", {"/bin/sleep", "2147483647"}}, {"Env", {"PATH=/bin"}}, {"WorkingDir", "/"}}},
      {"rootfs", {{"type", "layers"}, {"diff_ids", {layerDesc["digest"]}}}}};
  json configDesc = addBlob(layout, "application/vnd.oci.image.config.v1+json", config.dump());
  json manifest = {{"schemaVersion", 2},
                   {"mediaType", "application/vnd.oci.image.manifest.v1+json"},
                   {"config", configDesc},
                   {"layers", {layerDesc}}};
  json manifestDesc =
      addBlob(layout, "application/vnd.oci.image.manifest.v1+json", manifest.dump());
  manifestDesc["annotations"] = {{"io.containerd.image.name", kImage},
                                 {"org.opencontainers.image.ref.name", "1"}};
  json index = {{"schemaVersion", 2}, {"manifests", {manifestDesc}}};
  writeFile(layout / "index.json", index.dump());
  writeFile(layout / "oci-layout", R"({"imageLayoutVersion":"1.0.0"})");
  return run(fmt::format("tar -C {} -cf {} oci-layout index.json blobs", layout.string(),
                         tarPath.string())) == 0;
}

// A containerd of our own, killed (by PID) and wiped when destroyed.
class TestContainerd {
 public:
  explicit TestContainerd(fs::path dir) : dir_(std::move(dir)) {}
  ~TestContainerd() { stop(); }

  std::string socket() const { return (dir_ / "containerd.sock").string(); }
  std::string cgroupParent() const { return "/" + dir_.filename().string(); }
  std::string log() const { return readFile(dir_ / "containerd.log"); }

  bool start() {
    fs::create_directories(dir_ / "cni");
    const std::string d = dir_.string();
    writeFile(dir_ / "config.toml", fmt::format(R"(version = 2
root = "{0}/root"
state = "{0}/state"
[grpc]
  address = "{0}/containerd.sock"
[ttrpc]
  address = "{0}/containerd.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "{0}/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{1}"
  restrict_oom_score_adj = true
  disable_apparmor = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "{0}/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "{0}/cni"
    max_conf_num = 1
)",
                                                d, kImage));
    pid_ = ::fork();
    if (pid_ < 0) return false;
    if (pid_ == 0) {
      int fd = ::open((d + "/containerd.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::execlp("containerd", "containerd", "--config", (d + "/config.toml").c_str(), nullptr);
      ::_exit(127);
    }
    return true;
  }

  // Best effort: remove what the test left, kill containerd, unmount and delete the dir.
  void stop() {
    if (pid_ > 0) {
      GrpcRuntime runtime("unix://" + socket(), GrpcRuntimeOptions{5s, 20s});
      if (auto sandboxes = runtime.listPodSandbox(); sandboxes.ok()) {
        for (const auto& s : *sandboxes) {
          runtime.stopPodSandbox(s.id());
          runtime.removePodSandbox(s.id());
        }
      }
      ::kill(pid_, SIGTERM);
      for (int i = 0; i < 50; ++i) {
        if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
          pid_ = -1;
          break;
        }
        std::this_thread::sleep_for(100ms);
      }
      if (pid_ > 0) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
      }
      pid_ = -1;
    }
    // Mounts containerd left under our dir (snapshots, shm), deepest first.
    std::vector<std::string> mounts;
    std::istringstream table(readFile("/proc/self/mounts"));
    for (std::string line; std::getline(table, line);) {
      std::istringstream fields(line);
      std::string source, target;
      fields >> source >> target;
      if (target.rfind(dir_.string(), 0) == 0) mounts.push_back(target);
    }
    std::sort(mounts.rbegin(), mounts.rend());
    for (const auto& m : mounts) ::umount2(m.c_str(), MNT_DETACH);
    // containerd leaves the pod-level cgroup directories behind.
    std::error_code iterError;
    for (const auto& hierarchy : fs::directory_iterator("/sys/fs/cgroup", iterError)) {
      fs::path root = hierarchy.path() / dir_.filename();
      std::error_code ec;
      if (!fs::exists(root, ec)) continue;
      std::vector<fs::path> dirs;
      for (auto it = fs::recursive_directory_iterator(root, ec);
           !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (it->is_directory(ec)) dirs.push_back(it->path());
      }
      std::sort(dirs.rbegin(), dirs.rend());
      for (const auto& sub : dirs) ::rmdir(sub.c_str());
      ::rmdir(root.c_str());
    }
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

 private:
  fs::path dir_;
  pid_t pid_ = -1;
};

class GrpcRuntimeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (::geteuid() != 0 || run("command -v containerd >/dev/null && command -v ctr >/dev/null "
                                "&& test -x /bin/busybox") != 0) {
      return;
    }
    // Short path: the socket path must fit in sun_path (108 bytes).
    fs::path dir = fmt::format("/tmp/cri-test-{}", ::getpid());
    fs::remove_all(dir);
    fs::create_directories(dir);
    containerd_ = new TestContainerd(dir);
    if (!containerd_->start()) return;
    runtime_ = new GrpcRuntime("unix://" + containerd_->socket());
    Status ready = runtime_->waitReady(30s);
    if (!ready.ok()) {
      setupError_ = "containerd not ready: " + ready.toString() + "\n" + containerd_->log();
      return;
    }
    if (!buildBusyboxImageTar(dir / "image", dir / "image.tar")) {
      setupError_ = "cannot build the image tar";
      return;
    }
    if (run(fmt::format("ctr -a {} -n k8s.io images import {} >/dev/null", containerd_->socket(),
                        (dir / "image.tar").string())) != 0) {
      setupError_ = "ctr images import failed";
    }
  }

  static void TearDownTestSuite() {
    delete runtime_;
    runtime_ = nullptr;
    delete containerd_;  // kills containerd and removes the dir
    containerd_ = nullptr;
  }

  void SetUp() override {
    if (containerd_ == nullptr) GTEST_SKIP() << "needs root, containerd, ctr and busybox-static";
    ASSERT_TRUE(setupError_.empty()) << setupError_;
  }

  void TearDown() override {
    if (HasFailure() && containerd_ != nullptr) {
      std::string log = containerd_->log();
      std::cerr << "containerd log (tail):\n"
                << log.substr(log.size() > 4000 ? log.size() - 4000 : 0) << "\n";
    }
  }

  static v1::PodSandboxConfig hostNetworkSandbox(const std::string& name) {
    v1::PodSandboxConfig config;
    auto* meta = config.mutable_metadata();
    meta->set_name(name);
    meta->set_namespace_("default");
    meta->set_uid("uid-" + name);
    (*config.mutable_labels())["io.kubernetes.pod.uid"] = "uid-" + name;
    (*config.mutable_annotations())["note"] = "kept as is";
    std::string logDir = fmt::format("/tmp/cri-test-{}/logs/{}", ::getpid(), name);
    fs::create_directories(logDir + "/app");
    config.set_log_directory(logDir);
    // hostNetwork: no hostname, no CNI.
    auto* linux = config.mutable_linux();
    linux->set_cgroup_parent(containerd_->cgroupParent() + "/pod" + meta->uid());
    auto* ns = linux->mutable_security_context()->mutable_namespace_options();
    ns->set_network(v1::NODE);
    ns->set_pid(v1::CONTAINER);
    ns->set_ipc(v1::POD);
    return config;
  }

  static v1::ContainerConfig sleeper() {
    v1::ContainerConfig config;
    config.mutable_metadata()->set_name("app");
    config.mutable_image()->set_image(kImage);
    config.add_command("/bin/sleep");
    config.add_args("30");
    auto* env = config.add_envs();
    env->set_key("GREETING");
    env->set_value("hi");
    config.set_log_path("app/0.log");
    (*config.mutable_labels())["io.kubernetes.container.name"] = "app";
    auto* resources = config.mutable_linux()->mutable_resources();
    resources->set_cpu_shares(256);
    resources->set_memory_limit_in_bytes(64 << 20);
    auto* ns = config.mutable_linux()->mutable_security_context()->mutable_namespace_options();
    ns->set_network(v1::NODE);
    ns->set_pid(v1::CONTAINER);
    return config;
  }

  static inline TestContainerd* containerd_ = nullptr;
  static inline GrpcRuntime* runtime_ = nullptr;
  static inline std::string setupError_;
};

TEST_F(GrpcRuntimeTest, VersionStatusAndImages) {
  auto version = runtime_->version();
  ASSERT_TRUE(version.ok()) << version.status().toString();
  EXPECT_EQ(version->runtime_name(), "containerd");
  EXPECT_EQ(version->runtime_api_version(), "v1");
  auto status = runtime_->status();
  ASSERT_TRUE(status.ok()) << status.status().toString();
  bool runtimeReady = false;
  for (const auto& c : status->conditions()) {
    if (c.type() == "RuntimeReady") runtimeReady = c.status();
  }
  EXPECT_TRUE(runtimeReady);

  v1::ImageSpec present;
  present.set_image(kImage);
  auto image = runtime_->imageStatus(present);
  ASSERT_TRUE(image.ok()) << image.status().toString();
  ASSERT_TRUE(image->has_image());
  EXPECT_EQ(image->image().id().rfind("sha256:", 0), 0u);
  EXPECT_NE(std::find(image->image().repo_tags().begin(), image->image().repo_tags().end(),
                      std::string(kImage)),
            image->image().repo_tags().end());
  v1::ImageSpec absent;
  absent.set_image("minik8s.test/cri/absent:1");
  auto none = runtime_->imageStatus(absent);
  ASSERT_TRUE(none.ok()) << none.status().toString();
  EXPECT_FALSE(none->has_image());
  auto images = runtime_->listImages();
  ASSERT_TRUE(images.ok());
  EXPECT_GE(images->size(), 1u);
}

TEST_F(GrpcRuntimeTest, HostNetworkPodLifecycle) {
  v1::PodSandboxConfig sc = hostNetworkSandbox("web");
  auto sandbox = runtime_->runPodSandbox(sc);
  ASSERT_TRUE(sandbox.ok()) << sandbox.status().toString();
  auto sst = runtime_->podSandboxStatus(*sandbox);
  ASSERT_TRUE(sst.ok()) << sst.status().toString();
  EXPECT_EQ(sst->state(), v1::SANDBOX_READY);
  EXPECT_EQ(sst->metadata().uid(), "uid-web");
  EXPECT_EQ(sst->annotations().at("note"), "kept as is");
  EXPECT_EQ(sst->linux().namespaces().options().network(), v1::NODE);
  EXPECT_GT(sst->created_at(), 0);

  auto id = runtime_->createContainer(*sandbox, sleeper(), sc);
  ASSERT_TRUE(id.ok()) << id.status().toString();
  auto created = runtime_->containerStatus(*id);
  ASSERT_TRUE(created.ok());
  EXPECT_EQ(created->state(), v1::CONTAINER_CREATED);
  ASSERT_TRUE(runtime_->startContainer(*id).ok());

  auto st = runtime_->containerStatus(*id);
  ASSERT_TRUE(st.ok()) << st.status().toString();
  EXPECT_EQ(st->state(), v1::CONTAINER_RUNNING);
  EXPECT_GT(st->started_at(), 0);
  EXPECT_EQ(st->finished_at(), 0);
  EXPECT_EQ(st->metadata().name(), "app");
  EXPECT_EQ(st->image_ref().rfind("sha256:", 0), 0u);
  EXPECT_EQ(st->log_path(), sc.log_directory() + "/app/0.log");
  EXPECT_EQ(st->labels().at("io.kubernetes.container.name"), "app");

  v1::ContainerFilter filter;
  (*filter.mutable_label_selector())["io.kubernetes.container.name"] = "app";
  filter.set_pod_sandbox_id(*sandbox);
  auto listed = runtime_->listContainers(filter);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ(listed->at(0).id(), *id);
  EXPECT_EQ(listed->at(0).state(), v1::CONTAINER_RUNNING);

  auto hi = runtime_->execSync(*id, {"echo", "hi"}, 5s);
  ASSERT_TRUE(hi.ok()) << hi.status().toString();
  EXPECT_EQ(hi->exit_code(), 0);
  EXPECT_EQ(hi->stdout(), "hi\n");
  auto env = runtime_->execSync(*id, {"sh", "-c", "echo $GREETING >&2; exit 3"}, 5s);
  ASSERT_TRUE(env.ok()) << env.status().toString();
  EXPECT_EQ(env->exit_code(), 3);
  EXPECT_EQ(env->stderr(), "hi\n");

  auto stats = runtime_->containerStats(*id);
  ASSERT_TRUE(stats.ok()) << stats.status().toString();
  EXPECT_EQ(stats->attributes().id(), *id);
  EXPECT_GT(stats->memory().working_set_bytes().value(), 0u);
  EXPECT_GT(stats->cpu().usage_core_nano_seconds().value(), 0u);

  auto url = runtime_->exec([&] {
    v1::ExecRequest r;
    r.set_container_id(*id);
    r.add_cmd("sh");
    r.set_stdout(true);
    return r;
  }());
  ASSERT_TRUE(url.ok()) << url.status().toString();
  EXPECT_EQ(url->rfind("http://127.0.0.1:", 0), 0u) << *url;

  // sleep is PID 1 and ignores SIGTERM: the runtime kills it after the 1 s grace period.
  ASSERT_TRUE(runtime_->stopContainer(*id, 1).ok());
  st = runtime_->containerStatus(*id);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->state(), v1::CONTAINER_EXITED);
  EXPECT_EQ(st->exit_code(), 137);
  EXPECT_GE(st->finished_at(), st->started_at());
  EXPECT_TRUE(runtime_->stopContainer(*id, 1).ok());  // idempotent

  ASSERT_TRUE(runtime_->removeContainer(*id).ok());
  auto gone = runtime_->containerStatus(*id);
  EXPECT_EQ(gone.status().code(), 404) << gone.status().toString();

  ASSERT_TRUE(runtime_->stopPodSandbox(*sandbox).ok());
  auto stopped = runtime_->podSandboxStatus(*sandbox);
  ASSERT_TRUE(stopped.ok());
  EXPECT_EQ(stopped->state(), v1::SANDBOX_NOTREADY);
  ASSERT_TRUE(runtime_->removePodSandbox(*sandbox).ok());
  EXPECT_EQ(runtime_->podSandboxStatus(*sandbox).status().code(), 404);
  v1::PodSandboxFilter byUid;
  (*byUid.mutable_label_selector())["io.kubernetes.pod.uid"] = "uid-web";
  auto left = runtime_->listPodSandbox(byUid);
  ASSERT_TRUE(left.ok());
  EXPECT_TRUE(left->empty());
}

TEST(GrpcRuntimeErrors, WaitReadyOnMissingSocketTimesOut) {
  GrpcRuntime runtime("/tmp/cri-test-no-such-dir/containerd.sock");
  auto start = std::chrono::steady_clock::now();
  Status s = runtime.waitReady(600ms);
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(s.code() == 503 || s.code() == 504) << s.toString();
  EXPECT_GE(took, 500ms);
  EXPECT_LT(took, 3s);
  auto version = runtime.version();
  ASSERT_FALSE(version.ok());
  EXPECT_EQ(version.status().code(), 503) << version.status().toString();
  // Failed calls are operations and errors, with the kubelet's operation_type names. The
  // registry is the process's: other tests of this executable may have counted before.
  auto sampleValue = [](const std::string& series) {
    const std::string text = metrics::defaultRegistry().exposition();
    const size_t at = text.find("\n" + series + " ");
    return at == std::string::npos ? 0.0 : std::stod(text.substr(at + series.size() + 2));
  };
  const std::string errors =
      "kubelet_runtime_operations_errors_total{operation_type=\"list_podsandbox\"}";
  const std::string count =
      "kubelet_runtime_operations_duration_seconds_count{operation_type=\"list_podsandbox\"}";
  const double errorsBefore = sampleValue(errors), countBefore = sampleValue(count);
  EXPECT_FALSE(runtime.listPodSandbox().ok());
  EXPECT_EQ(sampleValue(errors) - errorsBefore, 1.0);
  EXPECT_EQ(sampleValue(count) - countBefore, 1.0);
  std::string text = metrics::defaultRegistry().exposition();
  for (const char* sample : {
           "\nkubelet_runtime_operations_total{operation_type=\"version\"} ",
           "\nkubelet_runtime_operations_errors_total{operation_type=\"version\"} ",
       }) {
    EXPECT_NE(text.find(sample), std::string::npos) << sample;
  }
}

TEST(GrpcRuntimeErrors, GrpcCodesMapToHttpLikeStatus) {
  auto code = [](grpc::StatusCode c) { return statusFromGrpc(grpc::Status(c, "x"), "M").code(); };
  EXPECT_EQ(code(grpc::StatusCode::OK), 0);
  EXPECT_EQ(code(grpc::StatusCode::NOT_FOUND), 404);
  EXPECT_EQ(code(grpc::StatusCode::ALREADY_EXISTS), 409);
  EXPECT_EQ(code(grpc::StatusCode::INVALID_ARGUMENT), 400);
  EXPECT_EQ(code(grpc::StatusCode::FAILED_PRECONDITION), 400);
  EXPECT_EQ(code(grpc::StatusCode::PERMISSION_DENIED), 403);
  EXPECT_EQ(code(grpc::StatusCode::UNAUTHENTICATED), 401);
  EXPECT_EQ(code(grpc::StatusCode::RESOURCE_EXHAUSTED), 429);
  EXPECT_EQ(code(grpc::StatusCode::UNIMPLEMENTED), 501);
  EXPECT_EQ(code(grpc::StatusCode::UNAVAILABLE), 503);
  EXPECT_EQ(code(grpc::StatusCode::DEADLINE_EXCEEDED), 504);
  EXPECT_EQ(code(grpc::StatusCode::UNKNOWN), 500);
  Status s = statusFromGrpc(grpc::Status(grpc::StatusCode::NOT_FOUND, "no such container"),
                            "ContainerStatus");
  EXPECT_EQ(s.reason(), "NotFound");
  EXPECT_EQ(s.message(), "CRI ContainerStatus: no such container");
}

}  // namespace
}  // namespace minik8s::kubelet::cri
