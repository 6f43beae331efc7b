#include "cli/image_command.h"

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "cli/dockerfile_build.h"
#include "cli/exit_error.h"
#include "cli/flags_file.h"
#include "cli/install_paths.h"
#include "cli/stop_signals.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "common/yaml_json.h"
#include "fmt/format.h"
#include "kubelet/images/image_recipe.h"
#include "kubelet/images/oci_image.h"
#include "kubelet/runtime/cluster_registry.h"
#include "kubelet/runtime/containerd_supervisor.h"

namespace minik8s::cli {
namespace {

namespace fs = std::filesystem;
namespace images = kubelet::images;
namespace rt = kubelet::runtime;

// images/ next to the binary's source tree (build/bin/minik8s) or an installed share dir.
std::string defaultRecipesDir() { return installedDataDir("images", "MINIK8S_IMAGES_DIR"); }

// Builds one recipe into <outputDir>/<recipe's directory name>.tar; returns the archive path.
std::string buildRecipe(const std::string& recipe, const std::string& outputDir) {
  auto spec = images::loadImageRecipeFile(recipe);
  if (!spec.ok()) exitWithError(spec.status().message());
  auto archive = images::buildOciArchive(*spec);
  if (!archive.ok()) exitWithError(recipe + ": " + archive.status().message());
  fs::path p(recipe);
  std::string stem = p.filename() == "image.yaml"
                         ? fs::absolute(p).parent_path().filename().string()
                         : p.stem().string();
  std::error_code ec;
  fs::create_directories(outputDir, ec);
  std::string out = (fs::path(outputDir) / (stem + ".tar")).string();
  std::ofstream f(out, std::ios::binary | std::ios::trunc);
  f << archive->bytes;
  if (!f) exitWithError("cannot write " + out);
  std::cout << fmt::format("built {} ({} bytes, {}): {}\n", out, archive->bytes.size(),
                           archive->manifestDigest, fmt::join(spec->names, ", "));
  return out;
}

// A recipe marked `optional: true` (an image for a feature whose packages a machine may lack,
// e.g. Slurm's client for the SlurmJob submitter) that cannot be built here: why, to skip it.
std::optional<std::string> unbuildableOptionalRecipe(const std::string& recipe) {
  auto text = readFile(recipe);
  if (!text.ok()) return std::nullopt;
  auto doc = parseYaml(*text);
  if (!doc.ok() || !doc->is_object() || !doc->value("optional", false)) return std::nullopt;
  auto spec = images::loadImageRecipeFile(recipe);
  if (spec.ok()) return std::nullopt;
  return spec.status().message();
}

void pushArchive(const std::string& path, const std::string& registry) {
  auto pushed = rt::pushImageArchive(path, registry);
  if (!pushed.ok()) exitWithError(pushed.status().message());
  for (const auto& name : *pushed) std::cout << fmt::format("pushed {}/{}\n", registry, name);
}

std::vector<std::string> defaultRecipes(const std::string& dir) {
  std::vector<std::string> recipes;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (fs::exists(e.path() / "image.yaml")) recipes.push_back((e.path() / "image.yaml").string());
  }
  std::sort(recipes.begin(), recipes.end());
  if (recipes.empty()) exitWithError(fmt::format("no image recipes (*/image.yaml) under {}", dir));
  return recipes;
}

// Blocks SIGINT/SIGTERM in every thread (call before starting any) and waits for one.
}  // namespace

Result<std::vector<std::string>> buildAndPushDefaultImages(const std::string& registry,
                                                           const std::string& archiveDir,
                                                           const std::string& recipesDir) {
  std::string dir = recipesDir.empty() ? defaultRecipesDir() : recipesDir;
  std::error_code ec;
  std::vector<std::string> recipes;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (fs::exists(e.path() / "image.yaml")) recipes.push_back((e.path() / "image.yaml").string());
  }
  if (recipes.empty()) {
    return Status::NotFoundMessage(fmt::format("no image recipes (*/image.yaml) under {}", dir));
  }
  std::sort(recipes.begin(), recipes.end());
  fs::create_directories(archiveDir, ec);
  std::vector<std::string> pushed;
  for (const auto& recipe : recipes) {
    auto spec = images::loadImageRecipeFile(recipe);
    if (!spec.ok()) return spec.status();
    auto archive = images::buildOciArchive(*spec);
    if (!archive.ok()) return archive.status();
    std::string path =
        (fs::path(archiveDir) / (fs::path(recipe).parent_path().filename().string() + ".tar"))
            .string();
    std::ofstream(path, std::ios::binary | std::ios::trunc) << archive->bytes;
    auto names = rt::pushImageArchive(path, registry);
    if (!names.ok()) return names.status();
    pushed.insert(pushed.end(), names->begin(), names->end());
  }
  return pushed;
}

void addImageCommand(CLI::App& app) {
  auto* image = app.add_subcommand("image", "Build local images and manage the cluster registry");
  image->require_subcommand(1);

  struct Options {
    std::vector<std::string> recipes, paths;
    std::string output = "build/images";
    std::string registry = rt::kDefaultRegistry;
    std::string recipesDir;
    std::string tag, dockerfile;
    std::string dataDir;
    std::string configFile;
    std::string listen = rt::kDefaultRegistry;
    bool noPush = false;
    bool pushDefaults = false;
  };
  auto o = std::make_shared<Options>();

  auto* build = image->add_subcommand(
      "build",
      "Build an image from a Dockerfile and push it to the cluster registry (-t NAME DIR), or OCI "
      "image archives from recipes (image.yaml...)");
  build->add_option("paths", o->recipes, "The build context directory with -t; else recipes")
      ->required();
  build->add_option("-t,--tag", o->tag,
                    "NAME[:TAG] to build DIR's Dockerfile as (buildah) and push to the cluster "
                    "registry; pods then use `image: NAME[:TAG]`");
  build->add_option("-f,--file", o->dockerfile, "The Dockerfile (default DIR/Dockerfile)");
  build->add_option("--registry", o->registry, "Cluster registry host:port (with -t)")
      ->capture_default_str();
  build->add_option("-o,--output", o->output, "Directory for the archives (recipes)");
  build->callback([o] {
    if (o->tag.empty()) {
      if (!o->dockerfile.empty()) exitWithError("-f needs -t NAME[:TAG]");
      for (const auto& r : o->recipes) buildRecipe(r, o->output);
      return;
    }
    if (o->recipes.size() != 1) exitWithError("-t builds one context directory");
    auto built = buildDockerfile({.tag = o->tag,
                                  .dockerfile = o->dockerfile,
                                  .context = o->recipes.front(),
                                  .registry = o->registry});
    if (!built.ok()) exitWithError(built.status().message());
    std::cout << built->output << "pushed " << built->pushed << "\n";
  });

  auto* push = image->add_subcommand("push", "Push OCI image archives to the cluster registry");
  push->add_option("paths", o->paths, "OCI archive tars or image-layout directories")->required();
  push->add_option("--registry", o->registry, "Registry host:port");
  push->callback([o] {
    for (const auto& p : o->paths) pushArchive(p, o->registry);
  });

  auto* defaults = image->add_subcommand("build-defaults",
                                         "Build the default images (pause, busybox, python) and "
                                         "push them to the cluster registry");
  defaults->add_option("--recipes", o->recipesDir, "Directory of recipes (default: images/)");
  defaults->add_option("-o,--output", o->output, "Directory for the archives");
  defaults->add_option("--registry", o->registry, "Registry host:port");
  defaults->add_flag("--no-push", o->noPush, "Only build the archives");
  defaults->callback([o] {
    std::string dir = o->recipesDir.empty() ? defaultRecipesDir() : o->recipesDir;
    for (const auto& r : defaultRecipes(dir)) {
      if (auto why = unbuildableOptionalRecipe(r)) {
        std::cout << "skipped the optional image of " << r << ": " << *why << "\n";
        continue;
      }
      std::string archive = buildRecipe(r, o->output);
      if (!o->noPush) pushArchive(archive, o->registry);
    }
  });

  auto* registry = image->add_subcommand(
      "registry", "Run the cluster registry (docker-registry) in the foreground");
  registry->add_option("--data-dir", o->dataDir,
                       "Data directory (storage in <dir>/registry; required)");
  registry->add_option("--listen", o->listen, "host:port to listen on");
  registry->add_flag("--push-defaults", o->pushDefaults, "Build and push the default images");
  registry->add_option("--recipes", o->recipesDir, "Directory of recipes (default: images/)");
  registry->add_option("--config", o->configFile,
                       "YAML file of flags (`data-dir: /var/lib/minik8s`, one key per long flag)");
  registry->callback([o, registry] {
    applyFlagsFileOrExit(*registry, o->configFile);
    if (o->dataDir.empty())
      exitWithError("the registry needs --data-dir (or `data-dir:` in --config)");
    initLogging("info", "registry");
    sigset_t signals = blockStopSignals();
    rt::ClusterRegistry reg({.dataDir = o->dataDir, .listen = o->listen});
    if (Status s = reg.start(); !s.ok()) exitWithError(s.message());
    if (o->pushDefaults) {
      std::string dir = o->recipesDir.empty() ? defaultRecipesDir() : o->recipesDir;
      for (const auto& r : defaultRecipes(dir)) {
        if (auto why = unbuildableOptionalRecipe(r)) {
          LOG_WARN("skipped the optional image of {}: {}", r, *why);
          continue;
        }
        pushArchive(buildRecipe(r, o->dataDir + "/registry/archives"), o->listen);
      }
    }
    std::cout << fmt::format("registry ready on {} (pid {})\n", o->listen, reg.pid()) << std::flush;
    int sig = waitForStopSignal(signals);
    LOG_INFO("signal {}: stopping the registry", sig);
    reg.stop();
  });
}

void addContainerdCommand(CLI::App& app) {
  struct Options {
    rt::ContainerdSupervisorOptions supervisor;
    std::string podCidr, bridge = "cni0";
    int mtu = 1500;
  };
  auto o = std::make_shared<Options>();
  auto* cmd =
      app.add_subcommand("containerd",
                         "Run a node's containerd (generated config, restarted if it dies) in the "
                         "foreground");
  cmd->add_option("--data-dir", o->supervisor.dataDir, "Node data directory")->required();
  cmd->add_option("--node-name", o->supervisor.nodeName, "Node name")->required();
  cmd->add_option("--netns", o->supervisor.netns, "Network namespace (name or path)");
  cmd->add_option("--registry", o->supervisor.registry, "Cluster registry host:port (mirror)");
  cmd->add_option("--sandbox-image", o->supervisor.config.sandboxImage, "Pause image");
  cmd->add_option("--pod-cidr", o->podCidr, "Write the CNI config for this pod CIDR");
  cmd->add_option("--bridge", o->bridge, "CNI bridge name");
  cmd->add_option("--mtu", o->mtu, "Pod interface MTU");
  cmd->callback([o] {
    initLogging("info", "containerd");
    sigset_t signals = blockStopSignals();
    rt::ContainerdSupervisor supervisor(o->supervisor);
    if (!o->podCidr.empty()) {
      Status s = rt::writeCniConfig(supervisor.layout().cniConfDir(), o->podCidr, o->bridge, o->mtu,
                                    true, supervisor.layout().cniIpamDir());
      if (!s.ok()) exitWithError(s.message());
    }
    if (Status s = supervisor.start(); !s.ok()) exitWithError(s.message());
    std::cout << fmt::format("containerd ready: {} (pid {})\n", supervisor.socketPath(),
                             supervisor.pid())
              << std::flush;
    int sig = waitForStopSignal(signals);
    LOG_INFO("signal {}: stopping containerd", sig);
    supervisor.stop();
  });
}

}  // namespace minik8s::cli
