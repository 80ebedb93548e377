// What a notification tells the user: the store lists raw job status changes
// (api_types.h Notification); this says what they mean for the task. A job
// that "succeeded" is not always a finished task: an answered ASK ends its job
// and a follow-up carries on, and a handoff ends its job with a continuation
// queued. The UI shows `summary` and `task_name` as they are.
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "core/json.h"
#include "store/api_types.h"

namespace maestro::api {

struct NotificationMeaning {
  // question_answered | handed_off | finished | failed | needs_you
  std::string outcome;
  // "question answered", "handed off to a fresh session", "finished",
  // "failed", "needs you"
  std::string summary;
};

NotificationMeaning MeaningOf(const Notification& n);

// A task's name for people: its title, else the title the store gives its
// instruction (AutoTitle), cut to `max_chars` bytes (at a UTF-8 boundary,
// "…" added).
std::string TaskDisplayName(std::string_view title, std::string_view instruction,
                            size_t max_chars = 60);

// The JSON of GET /api/local/notifications (docs/api.md).
Json NotificationJson(const Notification& n);

}  // namespace maestro::api
