#include "kubelet/images/image_recipe.h"

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/yaml_json.h"
#include "fmt/format.h"

namespace minik8s::kubelet::images {
namespace {

namespace fs = std::filesystem;

// Where a host path lives once its directories are resolved: /bin/sh -> /usr/bin/sh.
std::string imagePathFor(const std::string& hostPath) {
  fs::path p(hostPath);
  std::error_code ec;
  fs::path dir = fs::weakly_canonical(p.parent_path(), ec);
  if (ec) dir = p.parent_path();
  return (dir / p.filename()).generic_string();
}

Result<std::string> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFoundMessage(fmt::format("cannot read {}", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Result<std::string> runCommand(const std::string& command) {
  FILE* f = popen(command.c_str(), "r");
  if (f == nullptr) return Status::Internal(fmt::format("cannot run {}", command));
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), f)) > 0) out.append(buf.data(), n);
  int rc = pclose(f);
  if (rc != 0) return Status::Internal(fmt::format("`{}` failed (status {})", command, rc));
  return out;
}

std::string shellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

class SpecBuilder {
 public:
  // Copies a host file (following symlinks) to `imagePath`.
  Status addFile(const std::string& hostPath, const std::string& imagePath) {
    struct stat st {};
    if (stat(hostPath.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      return Status::NotFoundMessage(fmt::format("{} is not a regular file", hostPath));
    }
    auto data = readFile(hostPath);
    if (!data.ok()) return data.status();
    entries_[imagePath] = TarEntry{imagePath, TarEntryType::kFile,
                                   static_cast<uint32_t>(st.st_mode & 07777), std::move(*data), ""};
    return Status::Ok();
  }

  void addSymlink(const std::string& imagePath, const std::string& target) {
    entries_[imagePath] = TarEntry{imagePath, TarEntryType::kSymlink, 0777, "", target};
  }

  void addDir(const std::string& imagePath, uint32_t mode) {
    entries_[imagePath] = TarEntry{imagePath, TarEntryType::kDirectory, mode, "", ""};
  }

  // The file plus every shared library ldd says it loads (a static binary has none).
  Status addBinary(const std::string& hostPath) {
    if (Status s = addFile(hostPath, imagePathFor(hostPath)); !s.ok()) return s;
    return addLibrariesOf(hostPath);
  }

  Status addLibrariesOf(const std::string& hostPath) {
    if (!ldd_.insert(hostPath).second) return Status::Ok();
    auto out = runCommand("ldd " + shellQuote(hostPath) + " 2>/dev/null");
    if (!out.ok()) return Status::Ok();  // "not a dynamic executable" exits non-zero
    std::istringstream lines(*out);
    std::string line;
    while (std::getline(lines, line)) {
      // "libz.so.1 => /lib/x86_64-linux-gnu/libz.so.1 (0x...)" or "/lib64/ld-linux... (0x...)"
      size_t arrow = line.find("=> ");
      std::string rest = arrow == std::string::npos ? line : line.substr(arrow + 3);
      size_t start = rest.find('/');
      if (start == std::string::npos) continue;
      std::string lib = rest.substr(start, rest.find(' ', start) - start);
      if (entries_.contains(imagePathFor(lib))) continue;
      if (Status s = addFile(lib, imagePathFor(lib)); !s.ok()) return s;
    }
    return Status::Ok();
  }

  // The minik8s binary running this build (what pods of minik8s' own components run), without
  // its debug information.
  Status addSelf(const std::string& imagePath) {
    auto self = runningBinary();
    if (!self.ok()) return self.status();
    return addStripped(*self, imagePath);
  }

  // A binary installed beside the running one (minik8s-mesh-proxy), named by the file name of
  // its path in the image.
  Status addSibling(const std::string& imagePath) {
    auto self = runningBinary();
    if (!self.ok()) return self.status();
    const fs::path host = fs::path(*self).parent_path() / fs::path(imagePath).filename();
    std::error_code ec;
    if (!fs::is_regular_file(host, ec)) {
      return Status::NotFoundMessage(
          fmt::format("siblings: {} is not beside {} (build its target, or install it there)",
                      host.filename().string(), *self));
    }
    return addStripped(host.string(), imagePath);
  }

  // A binary without its debug information when objcopy is there (a source build carries ~70 MB
  // of it), with its libraries. The copy is named per thread: recipes may load in parallel.
  Status addStripped(const std::string& hostPath, const std::string& imagePath) {
    const std::string stripped = (fs::temp_directory_path() /
                                  fmt::format("minik8s-image-strip-{}-{}", ::getpid(), ::gettid()))
                                     .string();
    auto out = runCommand("objcopy --strip-debug " + shellQuote(hostPath) + " " +
                          shellQuote(stripped) + " 2>/dev/null");
    Status s = addFile(out.ok() ? stripped : hostPath, imagePath);
    std::error_code ec;
    fs::remove(stripped, ec);
    if (!s.ok()) return s;
    return addLibrariesOf(hostPath);
  }

  static Result<std::string> runningBinary() {
    std::error_code ec;
    const std::string self = fs::read_symlink("/proc/self/exe", ec).string();
    if (ec) return Status::Internal("cannot find the running binary: " + ec.message());
    return self;
  }

  Status addTree(const std::string& root, const std::set<std::string>& exclude, bool binaries) {
    std::error_code ec;
    if (!fs::is_directory(root, ec)) {
      return binaries ? addBinary(root)
                      : Status::NotFoundMessage(fmt::format("{} is not a directory", root));
    }
    auto it = fs::recursive_directory_iterator(root, ec);
    for (; !ec && it != fs::end(it); it.increment(ec)) {
      std::string rel = fs::relative(it->path(), root).generic_string();
      std::string first = rel.substr(0, rel.find('/'));
      std::string name = it->path().filename().string();
      if (exclude.contains(first) || exclude.contains(name)) {
        if (it->is_directory()) it.disable_recursion_pending();
        continue;
      }
      std::string host = it->path().generic_string();
      if (it->is_symlink()) {
        addSymlink(imagePathFor(host), fs::read_symlink(it->path()).generic_string());
      } else if (it->is_directory()) {
        addDir(imagePathFor(host), 0755);
      } else if (it->is_regular_file()) {
        bool isLib = name.ends_with(".so") || name.find(".so.") != std::string::npos;
        Status s = (binaries && isLib) ? addBinary(host) : addFile(host, imagePathFor(host));
        if (!s.ok()) return s;
      }
    }
    if (ec) return Status::Internal(fmt::format("walking {}: {}", root, ec.message()));
    return Status::Ok();
  }

  Status addBusyboxApplets(const std::string& hostBinary) {
    std::string binary = imagePathFor(hostBinary);
    if (Status s = addFile(hostBinary, binary); !s.ok()) return s;
    auto out = runCommand(shellQuote(hostBinary) + " --list-full");
    if (!out.ok()) return out.status();
    std::istringstream lines(*out);
    std::string applet;
    while (std::getline(lines, applet)) {
      if (applet.empty()) continue;
      std::string path = imagePathFor("/" + applet);
      if (path != binary && !entries_.contains(path)) addSymlink(path, binary);
    }
    return Status::Ok();
  }

  // The host's top-level symlinks such as /lib -> usr/lib, so /lib64/ld-linux... resolves.
  void addHostTopLevelSymlinks() {
    for (const char* top : {"/bin", "/sbin", "/lib", "/lib64"}) {
      std::error_code ec;
      if (fs::is_symlink(top, ec)) addSymlink(top, fs::read_symlink(top, ec).generic_string());
    }
  }

  std::vector<TarEntry> take() {
    std::vector<TarEntry> out;
    for (auto& [path, e] : entries_) out.push_back(std::move(e));
    return out;
  }

 private:
  std::map<std::string, TarEntry> entries_;
  std::set<std::string> ldd_;
};

std::vector<std::string> stringList(const json& j, const char* key) {
  std::vector<std::string> out;
  if (!j.contains(key)) return out;
  for (const auto& v : j[key]) out.push_back(v.get<std::string>());
  return out;
}

}  // namespace

Result<ImageSpec> loadImageRecipe(const std::string& yamlText, const std::string& recipePath) {
  auto parsed = parseYaml(yamlText);
  if (!parsed.ok()) return Status::BadRequest(recipePath + ": " + parsed.status().message());
  const json& r = *parsed;
  ImageSpec spec;
  SpecBuilder b;
  try {
    if (!r.is_object()) return Status::BadRequest(recipePath + ": expected a mapping");
    spec.names = stringList(r, "names");
    if (spec.names.empty()) return Status::BadRequest(recipePath + ": names: at least one name");
    b.addHostTopLevelSymlinks();
    for (const auto& d : stringList(r, "dirs")) b.addDir(d, d == "/tmp" ? 01777 : 0755);
    if (r.contains("files")) {
      for (const auto& f : r["files"]) {
        std::string from = f.is_string() ? f.get<std::string>() : f.at("from").get<std::string>();
        std::string to = f.is_string() ? imagePathFor(from) : f.at("to").get<std::string>();
        // A relative `from` is a file kept next to the recipe (a config file of the image).
        if (!f.is_string() && !fs::path(from).is_absolute()) {
          from = (fs::path(recipePath).parent_path() / from).string();
        }
        if (Status s = b.addFile(from, to); !s.ok())
          return Status::BadRequest(recipePath + ": " + s.message());
      }
    }
    for (const auto& bin : stringList(r, "binaries")) {
      if (Status s = b.addTree(bin, {}, true); !s.ok())
        return Status::BadRequest(recipePath + ": " + s.message());
    }
    if (r.contains("self")) {
      if (Status s = b.addSelf(r["self"].get<std::string>()); !s.ok())
        return Status::BadRequest(recipePath + ": " + s.message());
    }
    for (const auto& sibling : stringList(r, "siblings")) {
      if (Status s = b.addSibling(sibling); !s.ok())
        return Status::BadRequest(recipePath + ": " + s.message());
    }
    if (r.contains("trees")) {
      for (const auto& t : r["trees"]) {
        auto ex = stringList(t, "exclude");
        Status s = b.addTree(t.at("path").get<std::string>(), {ex.begin(), ex.end()}, false);
        if (!s.ok()) return Status::BadRequest(recipePath + ": " + s.message());
      }
    }
    if (r.contains("busybox")) {
      Status s = b.addBusyboxApplets(r["busybox"].get<std::string>());
      if (!s.ok()) return Status::BadRequest(recipePath + ": " + s.message());
    }
    if (r.contains("symlinks")) {
      for (const auto& [link, target] : r["symlinks"].items()) {
        b.addSymlink(imagePathFor(link), target.get<std::string>());
      }
    }
    spec.config.entrypoint = stringList(r, "entrypoint");
    spec.config.cmd = stringList(r, "cmd");
    spec.config.env = stringList(r, "env");
    spec.config.workingDir = r.value("workingDir", std::string());
    if (r.contains("labels")) {
      for (const auto& [k, v] : r["labels"].items()) spec.config.labels[k] = v.get<std::string>();
    }
  } catch (const json::exception& ex) {
    return Status::BadRequest(fmt::format("{}: {}", recipePath, ex.what()));
  }
  spec.rootfs = b.take();
  return spec;
}

Result<ImageSpec> loadImageRecipeFile(const std::string& recipePath) {
  auto text = readFile(recipePath);
  if (!text.ok()) return text.status();
  return loadImageRecipe(*text, recipePath);
}

}  // namespace minik8s::kubelet::images
