#include "common/file_util.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace minik8s {

Result<std::string> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFoundMessage("cannot read " + path + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::NotFoundMessage("cannot read " + path + ": read error");
  return text.str();
}

}  // namespace minik8s
