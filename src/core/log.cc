#include "core/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>

namespace maestro {

Status InitLogging(const std::string& level, const std::string& format) {
  auto lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off") {
    return InvalidArgument("unknown log level '" + level + "'", "log.level");
  }
  auto logger = spdlog::stderr_color_mt("maestro");
  if (format == "json") {
    // One JSON object per line; the message is already key=value text, so it
    // needs no escaping beyond what %v gives for our own messages.
    logger->set_pattern(R"({"ts":"%Y-%m-%dT%H:%M:%S.%eZ","level":"%l","thread":%t,"msg":"%v"})",
                        spdlog::pattern_time_type::utc);
  } else if (format == "text") {
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %^%-5l%$ [%t] %v", spdlog::pattern_time_type::utc);
  } else {
    return InvalidArgument("unknown log format '" + format + "'", "log.format");
  }
  logger->set_level(lvl);
  spdlog::set_default_logger(logger);
  return Status::Ok();
}

}  // namespace maestro
