// Image recipes: a small YAML file (images/<name>/image.yaml) saying which files of this Debian
// machine make up an image, turned into an ImageSpec for buildOciArchive().
//
//   names: [minik8s/busybox:latest, docker.io/library/busybox:1.35]
//   files: [/usr/bin/busybox, {from: /usr/bin/foo, to: /opt/foo}]   # copied with their mode;
//          {from: nginx.conf, to: /etc/nginx/nginx.conf}          # relative: next to the recipe
//   binaries: [/usr/bin/python3.11, /usr/lib/python3.11/lib-dynload]  # plus shared libraries (ldd)
//   trees: [{path: /usr/lib/python3.11, exclude: [test, idlelib]}]  # whole directory trees
//   self: /usr/bin/minik8s         # the minik8s binary building the image (debug info
//                                  # stripped), with its libraries
//   siblings: [/usr/bin/minik8s-mesh-proxy]  # binaries installed beside that minik8s binary,
//                                  # found by the file name (stripped too), with their libraries
//   busybox: /usr/bin/busybox      # a symlink for every applet (busybox --list-full)
//   symlinks: {/usr/bin/python3: python3.11}
//   dirs: [/tmp, /proc]            # empty directories (/tmp gets mode 1777)
//   entrypoint: [...]  cmd: [...]  env: [PATH=...]  workingDir: /
//
// Paths are placed in the image the way this host resolves their directories (Debian 12 has a
// merged /usr: /bin -> usr/bin), and the host's top-level symlinks (/bin, /lib, /lib64, /sbin)
// are reproduced, so dynamic loaders and scripts find what they expect. Reads the host file
// system and runs `ldd` and busybox; no shared state, safe to call from several threads.
#pragma once

#include <string>

#include "common/status.h"
#include "kubelet/images/oci_image.h"

namespace minik8s::kubelet::images {

// Parses the recipe text; `recipePath` only names it in error messages.
Result<ImageSpec> loadImageRecipe(const std::string& yamlText, const std::string& recipePath);
Result<ImageSpec> loadImageRecipeFile(const std::string& recipePath);

}  // namespace minik8s::kubelet::images
