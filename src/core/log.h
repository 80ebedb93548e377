// Logging: spdlog, configured once at process start.
//
// Text format for people at a terminal; JSON lines (`log.format: json`) for
// log collectors. Messages carry key=value pairs ("job=01J… status=running")
// so both formats stay greppable. Libraries log through spdlog's default
// logger; tests leave it at warn to keep output quiet.
#pragma once

#include <spdlog/spdlog.h>

#include <string>

#include "core/status.h"

namespace maestro {

// `level`: trace|debug|info|warn|error; `format`: text|json.
Status InitLogging(const std::string& level, const std::string& format);

}  // namespace maestro
