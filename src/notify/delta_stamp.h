// The wall-clock stamp of a live job delta.
//
// Where it sits: between the engine and the JobStreamHub (notify/job_stream.h)
// — the server's delta sink stamps each delta before publishing it, so the
// UI can show tool durations even for deltas it replays after a reload (the
// engine's deltas carry no time of their own).
//
// Thread safety: a pure function.
#pragma once

#include "core/clock.h"
#include "core/json.h"

namespace maestro {

// `delta` with `at` = now (ms since epoch) when it is an object; any other
// value unchanged.
inline Json StampDelta(Json delta, TimeMs now) {
  if (delta.is_object()) delta["at"] = now;
  return delta;
}

}  // namespace maestro
