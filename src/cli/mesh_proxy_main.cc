// minik8s-mesh-proxy: the binary of the mesh-proxy image (images/mesh-proxy), what every meshed
// pod's sidecar and init container and istiod run. The same commands as `minik8s mesh-proxy`,
// `mesh-proxy-metrics`, `mesh-init` and `mesh-discovery` (cli/mesh_sidecar_command.h), linked
// from the mesh, client and common rooms only: no API server, kubelet or scheduler pages to map,
// so a sidecar's RSS stays under the 15 MB of issue 18.
#include <CLI/CLI.hpp>
#include <string>

#include "cli/mesh_sidecar_command.h"

#ifndef MINIK8S_VERSION
#define MINIK8S_VERSION "unknown"  // set by src/CMakeLists.txt from project(VERSION)
#endif

int main(int argc, char** argv) {
  CLI::App app{"minik8s-mesh-proxy: the service mesh's sidecar, init step and discovery server"};
  app.set_version_flag("--version", std::string("minik8s-mesh-proxy ") + MINIK8S_VERSION);
  app.require_subcommand(1);
  minik8s::cli::addMeshSidecarCommands(app);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
