// Web Push subscriptions (issue 45 item 6): a browser's push endpoint and
// keys, registered by a user from the UI's bell (POST /api/local/push/
// subscriptions). The PushDispatcher (notify/push_dispatcher.h) sends that
// user's notices to each; the push service's 404/410 removes one.
//
// Plain data; the Store methods that keep them are in store.h.
#pragma once

#include <string>

#include "store/types.h"

namespace maestro {

struct PushSubscription {
  std::string id;
  std::string owner;     // the user who subscribed; only they list or delete it
  std::string endpoint;  // the push service's URL for this browser (RFC 8030)
  std::string p256dh;    // base64url of the browser's 65-byte P-256 point
  std::string auth;      // base64url of the browser's 16-byte auth secret
  TimeMs created_at = 0;
};

}  // namespace maestro
