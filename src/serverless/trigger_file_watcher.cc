#include "serverless/trigger_file_watcher.h"

#include <fnmatch.h>

#include <filesystem>
#include <system_error>

namespace minik8s::serverless {

namespace fs = std::filesystem;

DirectorySnapshot snapshotDirectory(const std::string& dir, const std::string& pattern,
                                    size_t maxFiles) {
  DirectorySnapshot out;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  if (ec) return out;
  for (const fs::recursive_directory_iterator end; it != end; it.increment(ec)) {
    if (ec) break;
    const fs::directory_entry& entry = *it;
    std::error_code statEc;
    if (!entry.is_regular_file(statEc) || statEc) continue;
    const std::string name = entry.path().filename().string();
    if (fnmatch(pattern.c_str(), name.c_str(), 0) != 0) continue;
    FileStamp stamp;
    stamp.size = entry.file_size(statEc);
    if (statEc) continue;
    auto mtime = entry.last_write_time(statEc);
    if (statEc) continue;
    stamp.mtimeNs =
        std::chrono::duration_cast<std::chrono::nanoseconds>(mtime.time_since_epoch()).count();
    out[fs::relative(entry.path(), dir, statEc).string()] = stamp;
    if (out.size() >= maxFiles) break;
  }
  return out;
}

std::vector<FileChange> diffSnapshots(const DirectorySnapshot& before,
                                      const DirectorySnapshot& after) {
  std::vector<FileChange> out;
  for (const auto& [path, stamp] : after) {
    auto it = before.find(path);
    if (it == before.end()) {
      out.push_back({path, true, stamp.size});
    } else if (!(it->second == stamp)) {
      out.push_back({path, false, stamp.size});
    }
  }
  return out;
}

}  // namespace minik8s::serverless
