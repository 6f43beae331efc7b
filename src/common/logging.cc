#include "common/logging.h"

// spdlog and fmt are compiled into the binary here rather than linked to Debian's shared
// libraries (src/CMakeLists.txt): spdlog in its header-only mode (no file but this one includes
// it), and fmt's out-of-line functions (vformat, format_error, floating-point formatting...)
// from its format-inl.h, with the template instantiations format.h declares extern.
#include <fmt/format-inl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <iterator>

FMT_BEGIN_NAMESPACE
namespace detail {
template auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template auto thousands_sep_impl<wchar_t>(locale_ref) -> thousands_sep_result<wchar_t>;
template auto decimal_point_impl<char>(locale_ref) -> char;
template auto decimal_point_impl<wchar_t>(locale_ref) -> wchar_t;
}  // namespace detail
FMT_END_NAMESPACE

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
