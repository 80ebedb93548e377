// PushDispatcher: Web Push (RFC 8030) delivery of a task's "needs you",
// finished and failed notices to its owner's browsers.
//
// Where it sits: beside the WebhookDispatcher in `maestro serve` (started
// when `push.enabled`), driven the same way from the events table: one
// reader thread follows a durable cursor ("push") over the events, asks
// `compose` what an event means for a person (api/push_notice.h: a job
// parking on waiting_human, a task finishing or failing; nothing for an
// answered question or a handoff) and queues one delivery per subscription
// of the task's owner that existed when the event was written. A few sender
// threads take deliveries from the bounded queue (the reader waits when it
// is full, the cursor holding its place) and POST each:
//   body:  the notice's JSON, encrypted to the subscription (web_push.h
//          EncryptAes128Gcm), Content-Encoding: aes128gcm
//   headers: Authorization: vapid t=<JWT>, k=<key> (aud = the endpoint's
//          origin), TTL, Urgency (high for needs_you, else normal)
// 2xx is done; 404/410 mean the subscription is gone and remove it; 429,
// 5xx and connection errors are retried with backoff up to `max_attempts`;
// any other answer is given up at once. The endpoint is checked by the
// egress policy at every send (core/egress.h) and the connection pinned to
// the address checked: an endpoint whose name rebinds to an internal
// address after it was accepted is refused then, and not retried.
// The cursor is saved after a page of events that queued a delivery (and
// every 1000 events, and at Stop), not per event: a crash may repeat the
// notices of one page or lose those still queued; a push is a nudge, the
// inbox keeps every notice.
//
// Thread safety: Start/Notify/Stop from any thread; the rest is internal.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/egress.h"
#include "core/json.h"
#include "core/mutex.h"
#include "notify/wakeable_sleep.h"
#include "notify/web_push.h"
#include "store/store.h"

namespace maestro {

// What one event means for a person: whose browsers to tell, and what.
struct PushNotice {
  std::string owner;
  Json payload;                    // small JSON, never a secret
  std::string urgency = "normal";  // RFC 8030 §5.3: very-low|low|normal|high
  TimeMs created_at = 0;           // the event's; older subscriptions only
};

struct PushOptions {
  std::shared_ptr<const push::VapidKey> key;  // required
  std::string subject;                        // VAPID `sub` ("" = none)
  // nullopt: the event is nobody's business (api/push_notice.h).
  std::function<std::optional<PushNotice>(const Event&)> compose;
  int senders = 2;
  size_t queue_capacity = 256;
  int max_attempts = 3;
  int64_t initial_backoff_ms = 1'000;
  int64_t max_backoff_ms = 30'000;
  int64_t poll_ms = 2'000;  // re-read the events table without a Notify
  int64_t timeout_ms = 10'000;
  int64_t ttl_seconds = 24 * 3600;  // how long the push service keeps a message
  std::shared_ptr<const EgressPolicy> egress = std::make_shared<const EgressPolicy>();
};

class PushDispatcher {
 public:
  PushDispatcher(NotificationRecords& store, PushOptions options);
  ~PushDispatcher();

  void Start();
  // Wakes the reader (new events were committed).
  void Notify();
  void Stop();

 private:
  struct Delivery {
    PushSubscription sub;
    std::string body;  // the notice's JSON, before encryption
    std::string urgency;
  };

  void ReadLoop();
  void SendLoop();
  // Sends one delivery with retries; false when stopped meanwhile.
  bool Send(const Delivery& d);
  // Queues `d`, waiting while the queue is full; false when stopped.
  bool Enqueue(Delivery d);

  NotificationRecords& store_;
  const PushOptions options_;
  notify::WakeableSleep sleep_;  // the reader's poll and backoff waits
  Mutex mu_;                     // the queue's
  CondVar cv_;
  bool stopped_ GUARDED_BY(mu_) = false;
  std::deque<Delivery> queue_ GUARDED_BY(mu_);
  std::vector<std::thread> threads_;
};

}  // namespace maestro
