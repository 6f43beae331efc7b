// Addons: sets of manifests minik8s applies to a cluster it starts (addons/<name>/*.yaml, e.g.
// monitoring: Prometheus and the node exporter), found next to the binary like the image
// recipes (the source tree's addons/ or /usr/share/minik8s/addons).
//
// Applying is what `kubectl apply --server-side --field-manager minik8s-addons --force-conflicts`
// does, object by object in file order, Namespaces first (a file may use one another creates);
// applying again changes nothing that is already as the files say.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "client/rest_client.h"
#include "common/status.h"

namespace minik8s::cli {

// $MINIK8S_ADDONS_DIR, <binary>/../../addons, <binary>/../share/minik8s/addons, or ./addons.
std::string defaultAddonsDir();

// The manifests of addon `name`, sorted by file name; NotFound when there are none.
Result<std::vector<std::string>> addonManifests(const std::string& name);

// Server-side apply of every object in `files` (YAML, several documents each). Stops at the first
// refusal, naming the file and the object.
Status applyManifests(client::RestClient& rest, const std::vector<std::string>& files);

// `minik8s addons list` and `minik8s addons apply NAME [--kubeconfig F]`: the same manifests on
// a cluster `cluster up` did not start (a packaged install, real machines).
void addAddonsCommand(CLI::App& app);

}  // namespace minik8s::cli
