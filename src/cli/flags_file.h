// Flags from a YAML file, the way k3s reads /etc/rancher/k3s/config.yaml: each key is a long
// flag of the command without its dashes (`data-dir: /var/lib/minik8s`, `leader-elect: false`,
// a list for a repeated or comma-separated flag), and a flag given on the command line wins
// over the file. What the systemd units of the Debian package start from /etc/minik8s.
#pragma once

#include <set>
#include <string>

#include "common/status.h"

namespace CLI {
class App;
}

namespace minik8s::cli {

// Sets every flag of `cmd` named in the YAML mapping at `path` that the command line left
// unset, converting the values as CLI11 does for the command line. Keys in `otherKeys` belong
// to another reader of the same file and are skipped; any other unknown key, a nested mapping
// or a value CLI11 cannot convert is a BadRequest naming the file and the key.
Status applyFlagsFile(CLI::App& cmd, const std::string& path,
                      const std::set<std::string>& otherKeys = {});

// For a command's callback: applyFlagsFile when `path` is set; an error is printed as
// "error: ..." and the process exits with 1.
void applyFlagsFileOrExit(CLI::App& cmd, const std::string& path,
                          const std::set<std::string>& otherKeys = {});

}  // namespace minik8s::cli
