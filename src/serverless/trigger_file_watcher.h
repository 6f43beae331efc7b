// The file source of a Trigger: what `minik8s serverless-file-watcher` runs in the watcher pod
// the trigger controller creates (one pod per file Trigger, the volume mounted).
//
// It scans the directory (and below it) every pollInterval and compares modification times and
// sizes: a polling scan rather than inotify, because inotify reports changes made through the
// local kernel, and on a network filesystem (GlusterFS over FUSE) a write through another
// node's client raises no event here, while a scan sees it.
// The first scan is the baseline (files already there fire nothing). Pure apart from
// snapshotDirectory's reads; not thread-safe (one watcher loop owns it).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace minik8s::serverless {

struct FileStamp {
  int64_t mtimeNs = 0;
  uint64_t size = 0;
  bool operator==(const FileStamp&) const = default;
};
using DirectorySnapshot = std::map<std::string, FileStamp>;  // relative path -> stamp

struct FileChange {
  std::string path;      // relative to the watched directory
  bool created = false;  // else modified
  uint64_t size = 0;
};

// Regular files under `dir` whose name matches the glob `pattern` (fnmatch), at most
// `maxFiles` (the rest ignored); an unreadable or missing directory is an empty snapshot.
DirectorySnapshot snapshotDirectory(const std::string& dir, const std::string& pattern,
                                    size_t maxFiles = 100000);

// What changed from `before` to `after`: new paths are created, a changed stamp is modified
// (deleted files are not events). Sorted by path.
std::vector<FileChange> diffSnapshots(const DirectorySnapshot& before,
                                      const DirectorySnapshot& after);

}  // namespace minik8s::serverless
