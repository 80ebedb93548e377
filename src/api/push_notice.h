// What a store event means for a person's browser: the Web Push notice the
// PushDispatcher (notify/push_dispatcher.h) sends to the task owner's
// subscriptions. Built on the inbox's meaning of a job status change
// (api/notification_view.h MeaningOf): a job parking on waiting_human is
// "needs you" (urgency high), a task's last job succeeding is "finished",
// failing is "failed"; an answered question and a handoff are no news.
//
// The payload is small JSON and holds no secret and nothing the model wrote:
//   {"task_id", "task_name" (the title, else the instruction's first line,
//    60 bytes), "outcome", "summary", "url": "/tasks/<id>", "event_id"}
// (task_name is the owner's own text; the service worker shows it as text).
//
// Thread safety: reads the store (thread-safe); no state of its own.
#pragma once

#include <optional>

#include "notify/push_dispatcher.h"
#include "store/store.h"

namespace maestro::api {

std::optional<PushNotice> ComposePushNotice(Store& store, const Event& event);

}  // namespace maestro::api
