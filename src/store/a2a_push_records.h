// A2aPushRecords: the A2A push-notification role of the Store
// (store/store.h; issue 48 item 3, sql/sql_a2a_push.cc) — the per-task
// push configs A2A clients set (tasks/pushNotificationConfig/set, or
// message/send's configuration.pushNotificationConfig), durable so a restart
// or another API process on the same database keeps them, and the claim that
// makes each status change of a task go to a config once across processes.
//
// Who uses it: the A2A endpoint's push notifier (api/a2a_push.h) keeps the
// configs here and claims each delivery before it POSTs.
//
// Ownership: every row is the config of one user (the one who set it) on
// one task; every read, replace and delete names the owner, so another
// user's config is kNotFound and its token is never returned to them.
//
// The delivery claim: a config's `sent_key` is the A2A status key
// (api/a2a_task_view.h StatusKey) of the last notification claimed for it.
// ClaimA2aPushDelivery moves it from the value the caller read to the new
// key in one conditional UPDATE: of several processes that see the same
// change, exactly one gets true and sends. The claim comes before the POST,
// so delivery is at most once (a process that dies between claim and POST
// loses that notification, as the in-memory notifier's best effort did).
//
// Not pure, so other Store implementations (test fakes) need not provide
// them; the defaults answer kUnimplemented.
//
// Thread safety: every method may be called from any thread concurrently.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "store/types.h"
#include "store/unsupported.h"

namespace maestro {

// One A2A PushNotificationConfig (A2A 0.3 §6.8) of one user on one task.
struct A2aPushConfigRecord {
  std::string task_id;
  std::string owner;        // the user who set it; only they get, list or delete it
  std::string id;           // the client's id, unique per (task, owner)
  std::string url;          // checked by the egress policy before it is stored
  std::string token;        // sent back as X-A2A-Notification-Token
  std::string auth_scheme;  // authentication: "Bearer", "Basic", or "" (none)
  std::string credentials;
  std::string sent_key;  // StatusKey of the last claimed notification ("" none)
  bool done = false;     // that key was a terminal state: nothing more to send
  TimeMs created_at = 0;
  TimeMs updated_at = 0;
};

class A2aPushRecords {
 public:
  virtual ~A2aPushRecords() = default;

  // Adds `c` (task_id, owner, id, url, token, auth_scheme, credentials), or
  // replaces the owner's config with that id on the task; a replaced one's
  // sent_key and done are cleared (the current status goes to the new URL).
  // kInvalidArgument naming the field for an empty task_id, owner, id or
  // url; kResourceExhausted when the owner already has `max_per_task`
  // configs on the task and this id is new.
  virtual Result<A2aPushConfigRecord> PutA2aPushConfig(const A2aPushConfigRecord& /*c*/,
                                                       int /*max_per_task*/) {
    return NotSupportedByStore();
  }
  // The owner's config `id` of the task ("" → the owner's oldest);
  // kNotFound when there is none.
  virtual Result<A2aPushConfigRecord> GetA2aPushConfig(const std::string& /*task_id*/,
                                                       const std::string& /*owner*/,
                                                       const std::string& /*id*/) {
    return NotSupportedByStore();
  }
  // The owner's configs of the task, oldest first.
  virtual Result<std::vector<A2aPushConfigRecord>> ListA2aPushConfigs(
      const std::string& /*task_id*/, const std::string& /*owner*/) {
    return NotSupportedByStore();
  }
  // kNotFound unless the owner has config `id` on the task.
  virtual Status DeleteA2aPushConfig(const std::string& /*task_id*/, const std::string& /*owner*/,
                                     const std::string& /*id*/) {
    return NotSupportedByStore();
  }
  // Configs of every owner still to be served (done false), ordered by task
  // then age, at most `limit`: what the delivery watchers poll.
  virtual Result<std::vector<A2aPushConfigRecord>> ListOpenA2aPushConfigs(int /*limit*/) {
    return NotSupportedByStore();
  }
  // Claims the notification of status `key` for the config (task_id, owner,
  // id): true when its sent_key was `expected` and is now `key` (done set to
  // `terminal`); false when another process claimed first, the config was
  // replaced or deleted, or already says `key`.
  virtual Result<bool> ClaimA2aPushDelivery(const std::string& /*task_id*/,
                                            const std::string& /*owner*/, const std::string& /*id*/,
                                            const std::string& /*expected*/,
                                            const std::string& /*key*/, bool /*terminal*/) {
    return NotSupportedByStore();
  }
};

}  // namespace maestro
