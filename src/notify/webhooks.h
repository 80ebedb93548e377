// WebhookDispatcher: delivers the store's events to configured webhook URLs.
//
// Where it sits: beside the API in `maestro serve`. Deliveries are driven
// from the events table, not from in-memory hooks: each webhook has a durable
// cursor (store cursor "webhook:<url>") holding the last event id it is done
// with, so events committed while the server was down are delivered after a
// restart and nothing is lost (delivery is at-least-once: a crash between the
// POST and the cursor update repeats that one event; receivers dedupe by the
// X-Maestro-Delivery header, which is the event id).
//
// Each delivery is a POST of the event JSON with
//   X-Maestro-Signature: sha256=<hex HMAC-SHA256(secret, body)>
//   X-Maestro-Event: <event type>, X-Maestro-Delivery: <event id>
// A non-2xx answer or a connection error is retried with exponential backoff
// up to `max_attempts`; then the event is given up (the cursor moves on so
// one dead receiver cannot stall the log forever). Every attempt is recorded
// in the delivery log (webhook_deliveries); errors never contain the secret.
//
// The URLs are the operator's, yet they go through the egress policy like
// every URL maestro calls on someone's behalf (core/egress.h): a receiver
// on an internal address is reached only when `egress.allow` names it, and
// the connection is pinned to the address checked. A refused URL is not
// retried (the attempt is logged with the refusal) and the event is given
// up.
//
// Thread safety: one thread per webhook; Notify/Stop may be called from any
// thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/config.h"
#include "core/egress.h"
#include "notify/wakeable_sleep.h"
#include "store/store.h"

namespace maestro {

struct WebhookOptions {
  std::vector<WebhookConfig> hooks;
  int max_attempts = 5;
  int64_t initial_backoff_ms = 500;
  int64_t max_backoff_ms = 60'000;
  int64_t poll_ms = 2'000;  // re-check the events table without a Notify
  int64_t timeout_ms = 10'000;
  // Which receivers are reachable; the default admits no internal address.
  std::shared_ptr<const EgressPolicy> egress = std::make_shared<const EgressPolicy>();
};

// Lowercase hex HMAC-SHA256 of `body` under `key` (OpenSSL).
std::string HmacSha256Hex(const std::string& key, const std::string& body);

class WebhookDispatcher {
 public:
  WebhookDispatcher(NotificationRecords& store, WebhookOptions options);
  ~WebhookDispatcher();

  void Start();
  // Wakes the threads (new events were committed).
  void Notify();
  void Stop();

 private:
  void Run(const WebhookConfig& hook);
  // Delivers one event with retries; false when stopped meanwhile.
  bool Deliver(const WebhookConfig& hook, const Event& e);

  NotificationRecords& store_;
  const WebhookOptions options_;
  notify::WakeableSleep sleep_;  // Notify/Stop wake the threads' waits
  std::vector<std::thread> threads_;
};

}  // namespace maestro
