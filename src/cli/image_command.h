// `minik8s image ...`: build the local images, push OCI archives to the cluster registry, run
// the registry; and `minik8s containerd`: a node's supervised containerd in the foreground.
//
//   minik8s image build RECIPE... [--output DIR]             OCI archives from images/*/image.yaml
//   minik8s image push FILE|DIR... [--registry HOST:PORT]    add archives to the cluster registry
//   minik8s image build-defaults [--recipes DIR] [--output DIR] [--registry HOST:PORT] [--no-push]
//   minik8s image registry --data-dir DIR [--listen HOST:PORT] [--push-defaults]
//   minik8s containerd --data-dir DIR --node-name NAME [--netns NAME] [--registry HOST:PORT]
//                      [--pod-cidr CIDR [--bridge cni0] [--mtu 1500]]
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "common/status.h"

namespace minik8s::cli {

void addImageCommand(CLI::App& app);
// Builds the default images (recipes under `recipesDir`, "" = the images/ found next to the
// binary) into `archiveDir` and pushes them to the registry at "host:port"; for `minik8s server`
// after it started a ClusterRegistry. Returns the names pushed.
Result<std::vector<std::string>> buildAndPushDefaultImages(const std::string& registry,
                                                           const std::string& archiveDir,
                                                           const std::string& recipesDir = "");
void addContainerdCommand(CLI::App& app);

}  // namespace minik8s::cli
