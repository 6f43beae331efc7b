#include "common/logging.h"

namespace minik8s {

void initLogging(const std::string& level, const std::string& component) {
  spdlog::set_level(spdlog::level::from_str(level));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%L%$ [" + component + "] %v");
}

}  // namespace minik8s
