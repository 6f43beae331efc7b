// Logging: LOG_INFO("pod {} started", name), written by spdlog's default logger (thread-safe).
// The format string is checked at compile time, but formatting and writing happen in
// logging.cc: a file that logs instantiates neither spdlog nor fmt's formatting engine, which
// were a third of a typical controller's object code and compile time. initLogging() picks the
// level from a string (trace, debug, info, warn, error). As with spdlog's default
// SPDLOG_ACTIVE_LEVEL, LOG_TRACE and LOG_DEBUG compile to nothing unless MINIK8S_LOG_ACTIVE_LEVEL
// is lowered (0 trace, 1 debug).
#pragma once

#include <fmt/core.h>

#include <string>

#ifndef MINIK8S_LOG_ACTIVE_LEVEL
#define MINIK8S_LOG_ACTIVE_LEVEL 2
#endif

namespace minik8s {

// Sets the level and the pattern of the default logger; `component` prefixes every line.
void initLogging(const std::string& level, const std::string& component);

namespace logging {

enum class Level { kTrace = 0, kDebug = 1, kInfo = 2, kWarn = 3, kError = 4 };  // spdlog's values

bool enabled(Level level);
void write(Level level, const char* file, int line, const char* function, fmt::string_view format,
           fmt::format_args args);

template <typename... Args>
void log(Level level, const char* file, int line, const char* function,
         fmt::format_string<Args...> format, Args&&... args) {
  if (enabled(level)) write(level, file, line, function, format, fmt::make_format_args(args...));
}

}  // namespace logging
}  // namespace minik8s

#define MINIK8S_LOG(level, ...)                                                          \
  ::minik8s::logging::log(level, __FILE__, __LINE__, static_cast<const char*>(__func__), \
                          __VA_ARGS__)
#if MINIK8S_LOG_ACTIVE_LEVEL <= 0
#define LOG_TRACE(...) MINIK8S_LOG(::minik8s::logging::Level::kTrace, __VA_ARGS__)
#else
#define LOG_TRACE(...) (void)0
#endif
#if MINIK8S_LOG_ACTIVE_LEVEL <= 1
#define LOG_DEBUG(...) MINIK8S_LOG(::minik8s::logging::Level::kDebug, __VA_ARGS__)
#else
#define LOG_DEBUG(...) (void)0
#endif
#define LOG_INFO(...) MINIK8S_LOG(::minik8s::logging::Level::kInfo, __VA_ARGS__)
#define LOG_WARN(...) MINIK8S_LOG(::minik8s::logging::Level::kWarn, __VA_ARGS__)
#define LOG_ERROR(...) MINIK8S_LOG(::minik8s::logging::Level::kError, __VA_ARGS__)
