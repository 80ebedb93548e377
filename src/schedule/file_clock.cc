#include "schedule/file_clock.h"

#include <spdlog/spdlog.h>

#include <charconv>

namespace maestro::schedule {

Result<TimeMs> ParseClockFile(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t\r\n");
  const size_t end = text.find_last_not_of(" \t\r\n");
  if (begin == std::string::npos)
    return InvalidArgument("empty: expected milliseconds since the epoch");
  TimeMs value = 0;
  const char* first = text.data() + begin;
  const char* last = text.data() + end + 1;
  auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec != std::errc() || ptr != last || value < 0) {
    return InvalidArgument("'" + text.substr(begin, end + 1 - begin) +
                           "' is not milliseconds since the epoch");
  }
  return value;
}

Result<std::unique_ptr<FileClock>> FileClock::Open(Env& env, std::string path) {
  auto text = ReadFileToString(env, path);
  if (!text.ok())
    return InvalidArgument("schedules.clock_file " + path + ": " + text.status().message());
  auto now = ParseClockFile(*text);
  if (!now.ok())
    return InvalidArgument("schedules.clock_file " + path + ": " + now.status().message());
  return std::unique_ptr<FileClock>(new FileClock(env, std::move(path), *now));
}

TimeMs FileClock::NowMs() const {
  auto text = ReadFileToString(env_, path_);
  Result<TimeMs> now = text.ok() ? ParseClockFile(*text) : Result<TimeMs>(text.status());
  if (now.ok()) {
    last_ = *now;
    return *now;
  }
  if (!warned_.exchange(true)) {
    spdlog::warn("scheduler: clock file {}: {}; keeping the last time", path_,
                 now.status().message());
  }
  return last_;
}

}  // namespace maestro::schedule
