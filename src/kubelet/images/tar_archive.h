// Deterministic tar archives in memory: the layer and the outer OCI layout of local images.
//
// TarWriter emits POSIX ustar entries (PAX records for names or link targets longer than ustar
// allows) with uid/gid 0 and mtime 0, so the same input always yields the same bytes and thus the
// same sha256 digest. readTar() parses ustar, PAX ('x') and GNU long-name ('L'/'K') entries, the
// forms docker, buildah and containerd write. Plain values; not thread-safe, no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace minik8s::kubelet::images {

enum class TarEntryType { kFile, kDirectory, kSymlink };

struct TarEntry {
  std::string path;  // relative, no leading slash: "usr/bin/busybox"; directories without '/'
  TarEntryType type = TarEntryType::kFile;
  uint32_t mode = 0644;
  std::string data;        // file content
  std::string linkTarget;  // symlink target
};

class TarWriter {
 public:
  void add(const TarEntry& entry);
  // Appends the two zero blocks that end an archive and returns the bytes.
  std::string finish();

 private:
  void writeHeader(const std::string& name, char typeflag, uint32_t mode, uint64_t size,
                   const std::string& linkName);
  std::string out_;
};

// Parses an archive; entries of other types (hard links, devices) are returned as kFile with
// empty data and are ignored by callers that only look for regular files.
Result<std::vector<TarEntry>> readTar(const std::string& bytes);

}  // namespace minik8s::kubelet::images
