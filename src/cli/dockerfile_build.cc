#include "cli/dockerfile_build.h"

#include <stdlib.h>

#include <filesystem>

#include "common/command.h"
#include "fmt/format.h"
#include "kubelet/images/registry_push.h"
#include "kubelet/runtime/containerd_config.h"

namespace minik8s::cli {
namespace {

namespace fs = std::filesystem;

// A private directory for buildah's storage and configuration, removed when done.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "minik8s-build.XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    if (path_.empty()) return;
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

std::string buildahRegistriesConf(const std::string& registry) {
  std::string conf =
      "# Written by minik8s image build: the cluster registry is the only source.\n"
      "unqualified-search-registries = [\"docker.io\"]\n";
  for (const auto& upstream : kubelet::runtime::mirroredRegistries()) {
    conf += fmt::format(
        "\n[[registry]]\nprefix = \"{0}\"\nlocation = \"{0}\"\n[[registry.mirror]]\n"
        "location = \"{1}\"\ninsecure = true\n",
        upstream, registry);
  }
  conf += fmt::format("\n[[registry]]\nlocation = \"{}\"\ninsecure = true\n", registry);
  return conf;
}

Result<DockerfileBuildResult> buildDockerfile(const DockerfileBuild& b) {
  std::error_code ec;
  if (!fs::is_directory(b.context, ec)) {
    return Status::BadRequest("build context " + b.context + " is not a directory");
  }
  const std::string dockerfile =
      b.dockerfile.empty() ? (fs::path(b.context) / "Dockerfile").string() : b.dockerfile;
  if (!fs::is_regular_file(dockerfile, ec)) {
    return Status::BadRequest("no Dockerfile at " + dockerfile + " (give one with -f)");
  }
  auto path = kubelet::images::mirrorPathFor(b.tag);  // "team/web:v1", "library/greeter:latest"
  if (!path.ok()) return path.status();
  const std::string target = b.registry + "/" + *path;

  TempDir dir;
  if (dir.path().empty()) return Status::Internal("cannot create a temporary directory");
  const std::string conf = dir.path() + "/registries.conf";
  const std::string policy = dir.path() + "/policy.json";
  using kubelet::runtime::writeFileAtomically;
  if (Status s = writeFileAtomically(conf, buildahRegistriesConf(b.registry)); !s.ok()) return s;
  if (Status s = writeFileAtomically(policy, R"({"default":[{"type":"insecureAcceptAnything"}]})");
      !s.ok()) {
    return s;
  }
  // buildah reads registries.conf from this variable; the rest is on its command line.
  const std::vector<std::string> buildah = {"env",
                                            "CONTAINERS_REGISTRIES_CONF=" + conf,
                                            "buildah",
                                            "--root",
                                            dir.path() + "/storage",
                                            "--runroot",
                                            dir.path() + "/run",
                                            "--storage-driver",
                                            "vfs"};
  auto run = [&](std::vector<std::string> args) -> Result<std::string> {
    std::vector<std::string> argv = buildah;
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = runProgram(argv);
    if (!r.ok()) {
      return Status::Unavailable("cannot run buildah (apt-get install buildah): " +
                                 r.status().message());
    }
    if (r->exitCode != 0) {
      return Status::BadRequest(
          fmt::format("buildah {} failed (exit {}):\n{}", args.front(), r->exitCode, r->output));
    }
    return r->output;
  };
  DockerfileBuildResult out;
  auto built = run({"bud", "--isolation", "chroot", "--layers=false", "--signature-policy", policy,
                    "-f", dockerfile, "-t", target, b.context});
  if (!built.ok()) return built.status();
  out.output = *built;
  auto pushed = run(
      {"push", "--tls-verify=false", "--signature-policy", policy, target, "docker://" + target});
  if (!pushed.ok()) return pushed.status();
  out.output += *pushed;
  out.pushed = target;
  return out;
}

}  // namespace minik8s::cli
