// A UTC wall time as epoch milliseconds: the fire times the schedule tests
// expect.
#pragma once

#include <date/date.h>

#include <chrono>

#include "core/clock.h"

namespace maestro::schedule {

inline TimeMs Utc(int y, unsigned m, unsigned d, int h = 0, int min = 0) {
  using namespace std::chrono;
  auto day = date::sys_days{date::year{y} / m / d};
  return duration_cast<milliseconds>((day + hours(h) + minutes(min)).time_since_epoch()).count();
}

}  // namespace maestro::schedule
