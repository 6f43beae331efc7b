#include "cli/install_paths.h"

#include <cstdlib>
#include <filesystem>

namespace minik8s::cli {

namespace fs = std::filesystem;

std::string installedDataDir(const std::string& name, const char* envVar) {
  if (const char* env = std::getenv(envVar)) return env;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  for (const fs::path& candidate :
       {exe.parent_path() / "../.." / name, exe.parent_path() / "../share/minik8s" / name,
        fs::path(name)}) {
    if (fs::is_directory(candidate, ec)) return fs::weakly_canonical(candidate, ec).string();
  }
  return name;
}

}  // namespace minik8s::cli
