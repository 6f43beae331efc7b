// Logging through spdlog: LOG_INFO("pod {} started", name). initLogging() picks the level from
// a string (trace, debug, info, warn, error). spdlog's default logger is thread-safe.
#pragma once

#include <spdlog/spdlog.h>

#include <string>

#define LOG_TRACE(...) SPDLOG_TRACE(__VA_ARGS__)
#define LOG_DEBUG(...) SPDLOG_DEBUG(__VA_ARGS__)
#define LOG_INFO(...) SPDLOG_INFO(__VA_ARGS__)
#define LOG_WARN(...) SPDLOG_WARN(__VA_ARGS__)
#define LOG_ERROR(...) SPDLOG_ERROR(__VA_ARGS__)

namespace minik8s {
// Sets the level and the pattern of the default logger; `component` prefixes every line.
void initLogging(const std::string& level, const std::string& component);
}  // namespace minik8s
