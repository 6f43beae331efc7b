#include "common/logging.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <iterator>

namespace minik8s {

void initLogging(const std::string& level, const std::string& component) {
  spdlog::set_level(spdlog::level::from_str(level));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%L%$ [" + component + "] %v");
}

namespace logging {

bool enabled(Level level) {
  return spdlog::default_logger_raw()->should_log(static_cast<spdlog::level::level_enum>(level));
}

void write(Level level, const char* file, int line, const char* function, fmt::string_view format,
           fmt::format_args args) {
  fmt::memory_buffer text;
  fmt::vformat_to(std::back_inserter(text), format, args);
  spdlog::default_logger_raw()->log(spdlog::source_loc{file, line, function},
                                    static_cast<spdlog::level::level_enum>(level),
                                    spdlog::string_view_t(text.data(), text.size()));
}

}  // namespace logging
}  // namespace minik8s
