#include "cli/addons.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

#include "api/object_meta.h"
#include "api/scheme.h"
#include "cli/api_client_flags.h"
#include "cli/install_paths.h"
#include "common/file_util.h"
#include "common/yaml_json.h"

namespace minik8s::cli {

namespace fs = std::filesystem;

std::string defaultAddonsDir() { return installedDataDir("addons", "MINIK8S_ADDONS_DIR"); }

Result<std::vector<std::string>> addonManifests(const std::string& name) {
  const fs::path dir = fs::path(defaultAddonsDir()) / name;
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string ext = e.path().extension().string();
    if (e.is_regular_file(ec) && (ext == ".yaml" || ext == ".yml"))
      files.push_back(e.path().string());
  }
  if (files.empty()) {
    return Status::NotFoundMessage("no manifests (*.yaml) of the " + name + " addon under " +
                                   dir.string() + " (set MINIK8S_ADDONS_DIR)");
  }
  std::sort(files.begin(), files.end());
  return files;
}

namespace {

// Server-side apply of one object: PATCH with an apply patch to the object's own URL.
Status applyObject(client::RestClient& rest, const json& obj) {
  const std::string apiVersion = api::stringAt(obj, "/apiVersion");
  const std::string kind = api::stringAt(obj, "/kind");
  const auto [group, version] = api::splitApiVersion(apiVersion);
  const api::ResourceInfo* info = api::Scheme::builtin().byKind(group, version, kind);
  if (!info) return Status::BadRequest("no resource for " + apiVersion + " " + kind);
  const std::string name = api::nameOf(obj);
  std::string ns = info->namespaced ? api::namespaceOf(obj) : "";
  if (info->namespaced && ns.empty()) ns = "default";
  if (name.empty()) return Status::BadRequest(kind + " without metadata.name");
  client::Resource r{info->group, info->version, info->plural, info->namespaced};
  auto out = rest.request("PATCH", r.path(ns, name) + "?fieldManager=minik8s-addons&force=true",
                          obj.dump(), "application/apply-patch+yaml");
  return out.ok() ? Status::Ok() : out.status();
}

}  // namespace

Status applyManifests(client::RestClient& rest, const std::vector<std::string>& files) {
  std::vector<std::pair<std::string, json>> objects;  // (file, object)
  for (const auto& file : files) {
    auto text = readFile(file);
    if (!text.ok()) return text.status();
    auto docs = parseYamlDocuments(*text);
    if (!docs.ok()) return Status::BadRequest(file + ": " + docs.status().message());
    for (auto& obj : *docs) {
      if (obj.is_null()) continue;  // an empty document (a trailing ---)
      if (!obj.is_object()) return Status::BadRequest(file + ": a document is not an object");
      objects.emplace_back(file, std::move(obj));
    }
  }
  // Namespaces first (as Helm orders kinds), so a file may use one another file creates.
  std::stable_partition(objects.begin(), objects.end(), [](const auto& o) {
    return api::stringAt(o.second, "/kind") == "Namespace";
  });
  for (const auto& [file, obj] : objects) {
    if (Status s = applyObject(rest, obj); !s.ok()) {
      return Status(
          s.code(), s.reason(),
          file + ": " + api::stringAt(obj, "/kind") + " " + api::nameOf(obj) + ": " + s.message());
    }
  }
  return Status::Ok();
}

void addAddonsCommand(CLI::App& app) {
  auto* addons = app.add_subcommand("addons", "Optional parts of a cluster (addons/<name>/*.yaml)");
  addons->require_subcommand(1);
  addons->add_subcommand("list", "The addons this installation ships")->callback([] {
    std::error_code ec;
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(defaultAddonsDir(), ec))
      if (e.is_directory(ec)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    for (const auto& n : names) std::cout << n << "\n";
  });
  auto flags = std::make_shared<ApiClientFlags>();
  auto name = std::make_shared<std::string>();
  auto* apply = addons->add_subcommand(
      "apply", "Apply an addon's manifests (server-side apply, field manager minik8s-addons)");
  apply->add_option("name", *name, "The addon (minik8s addons list)")->required();
  flags->addTo(apply);
  apply->callback([flags, name] {
    auto config = flags->clientConfigOrLocal();
    auto files = addonManifests(*name);
    Status s = !config.ok() ? config.status() : !files.ok() ? files.status() : Status::Ok();
    if (s.ok()) {
      client::RestClient rest(*config);
      s = applyManifests(rest, *files);
    }
    if (!s.ok()) {
      std::cerr << "error: " << s.message() << "\n";
      std::exit(1);
    }
    std::cout << "addon " << *name << " applied (" << files->size() << " files)\n";
  });
}

}  // namespace minik8s::cli
