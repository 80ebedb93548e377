// NotificationRecords: the role of the Store (store/store.h; sql_api.cc,
// sql_push.cc) that tells people what happened — the every-task event feed
// with named durable cursors the dispatchers read from, the webhook delivery
// log, a user's notification list and their Web Push subscriptions.
//
// Who uses it: the webhook and Web Push dispatchers (notify/webhooks.h,
// notify/push_dispatcher.h) follow the feed under their cursors and record
// deliveries / drop dead subscriptions; the API lists and marks
// notifications and keeps a user's subscriptions (api/).
//
// Not pure, so other Store implementations (test fakes) need not provide
// them; the defaults answer kUnimplemented.
//
// Thread safety: every method may be called from any thread concurrently.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "store/api_types.h"
#include "store/push_types.h"
#include "store/types.h"
#include "store/unsupported.h"

namespace maestro {

class NotificationRecords {
 public:
  virtual ~NotificationRecords() = default;

  // Events of every task with id > after_id, oldest first (webhook dispatch).
  virtual Result<std::vector<Event>> ListAllEvents(const std::string& /*after_id*/, int /*limit*/) {
    return NotSupportedByStore();
  }
  // A named durable cursor ("" when never set), e.g. the webhook dispatcher's.
  virtual Result<std::string> GetCursor(const std::string& /*name*/) {
    return NotSupportedByStore();
  }
  virtual Status SetCursor(const std::string& /*name*/, const std::string& /*value*/) {
    return NotSupportedByStore();
  }
  virtual Status RecordDelivery(const WebhookDelivery& /*delivery*/) {
    return NotSupportedByStore();
  }
  // Newest first.
  virtual Result<std::vector<WebhookDelivery>> ListDeliveries(int /*limit*/) {
    return NotSupportedByStore();
  }
  // job.status events entering waiting_human / succeeded / failed of tasks
  // owned by `user`, newest first.
  virtual Result<std::vector<Notification>> ListNotifications(const std::string& /*user*/,
                                                              bool /*unread_only*/, int /*limit*/) {
    return NotSupportedByStore();
  }
  // Marks the given notification ids read ({} = all of the user's).
  virtual Status MarkNotificationsRead(const std::string& /*user*/,
                                       const std::vector<std::string>& /*ids*/) {
    return NotSupportedByStore();
  }
  // Web Push subscriptions (sql_push.cc). Add keeps one row per (owner,
  // endpoint): a browser subscribing again gets its keys replaced; a new
  // endpoint past `max_per_owner` is kResourceExhausted.
  virtual Result<PushSubscription> AddPushSubscription(const PushSubscription& /*sub*/,
                                                       int /*max_per_owner*/) {
    return NotSupportedByStore();
  }
  // The owner's subscriptions, oldest first.
  virtual Result<std::vector<PushSubscription>> ListPushSubscriptions(
      const std::string& /*owner*/) {
    return NotSupportedByStore();
  }
  // kNotFound unless `id` is one of `owner`'s subscriptions.
  virtual Status DeletePushSubscription(const std::string& /*owner*/, const std::string& /*id*/) {
    return NotSupportedByStore();
  }
};

}  // namespace maestro
