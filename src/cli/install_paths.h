// Where the files minik8s ships beside its binary are (image recipes, addon manifests): the
// source tree when run from a build directory, /usr/share/minik8s when installed by the package.
#pragma once

#include <string>

namespace minik8s::cli {

// $envVar if set, else the first directory that exists of <binary>/../../<name> (a build tree),
// <binary>/../share/minik8s/<name> (installed), ./<name>; "<name>" when none does.
std::string installedDataDir(const std::string& name, const char* envVar);

}  // namespace minik8s::cli
