// A2aPushNotifier: A2A push notifications — the per-task configs
// (tasks/pushNotificationConfig/set|get|list|delete, or message/send's
// configuration.pushNotificationConfig) and their delivery: whenever a
// task's A2A status changes (a2a_task_view.h StatusKey), its Task is POSTed
// to each of the task's URLs with the config's token in
// X-A2A-Notification-Token and its credentials in Authorization.
//
// Where it sits: owned by the A2A endpoint (a2a_endpoint.h). maestro's
// webhooks (notify/webhooks.h) are a different contract — configured URLs
// receiving every event, HMAC-signed, with a durable cursor — so A2A's
// per-task, client-set URLs are kept here, in memory: they are lost on a
// restart (a client sets them again), and delivery is best effort (one
// attempt per change, failures logged).
//
// Ownership: a config belongs to the user who set it. Get/List/Delete/Set
// see and change only the caller's own configs of the task; ids are unique
// per user (the default id, the task id, does not collide across users), so
// another user's config is "not found" and its token is never shown.
//
// Egress: a URL is checked by the EgressPolicy (core/egress.h) when it is
// set — an internal address is refused with kInvalidArgument, field
// "url" — and again at each delivery, whose connection is pinned to the
// address checked then (HttpClientOptions::egress).
//
// Delivery: the watcher thread turns status changes into deliveries, one
// FIFO per config owner; a small pool of sender threads serves the owners
// round-robin with at most one delivery in flight per owner, each bounded
// by a short connect timeout and a total timeout. One user's receivers that
// never answer hold one sender at a time, never another user's
// notifications. A user's queue keeps at most kMaxQueuedPerUser (the
// oldest is dropped).
//
// Thread safety: every method may be called from any thread. The watcher is
// woken by EventSignal::WatchTask for the tasks with configs and re-reads
// them every 2 s for commits made by other processes; it and the senders
// start with the first config; the destructor stops and joins them.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "api/a2a_protocol.h"
#include "api/a2a_task_view.h"
#include "core/egress.h"
#include "core/http_client.h"
#include "core/mutex.h"
#include "core/status.h"
#include "notify/event_signal.h"

namespace maestro::api::a2a {

struct PushOptions {
  // Which receivers are reachable; the default admits no internal address.
  std::shared_ptr<const EgressPolicy> egress = std::make_shared<const EgressPolicy>();
  size_t senders = 4;                  // delivery threads shared by all users
  int64_t connect_timeout_ms = 2'000;  // per delivery
  int64_t total_timeout_ms = 5'000;    // per delivery
};

class A2aPushNotifier {
 public:
  // Reads a task's facts for a notification (the config's owner was checked
  // when it was set).
  using ReadFn = std::function<Result<TaskFacts>(const std::string& task_id)>;
  static constexpr size_t kMaxConfigsPerTask = 10;  // per user and task
  static constexpr size_t kMaxTasks = 10000;
  static constexpr size_t kMaxQueuedPerUser = 200;

  A2aPushNotifier(notify::EventSignal& signal, ReadFn read, PushOptions options = {});
  ~A2aPushNotifier();
  A2aPushNotifier(const A2aPushNotifier&) = delete;
  A2aPushNotifier& operator=(const A2aPushNotifier&) = delete;

  // Adds `owner`'s config (id "" → the task id) or replaces `owner`'s one
  // with its id. Returns the stored config; kInvalidArgument (field "url")
  // for a URL the egress policy refuses; kResourceExhausted over the limits
  // above (a new task over kMaxTasks first evicts the configs of a task
  // whose terminal state was already sent).
  Result<PushConfig> Set(const std::string& task_id, const std::string& owner, PushConfig config)
      EXCLUDES(mu_);
  // `owner`'s config `config_id` of the task ("" → their first); nullopt if
  // none.
  std::optional<PushConfig> Get(const std::string& task_id, const std::string& owner,
                                const std::string& config_id) const EXCLUDES(mu_);
  std::vector<PushConfig> List(const std::string& task_id, const std::string& owner) const
      EXCLUDES(mu_);
  // False when `owner` has no such config on the task.
  bool Delete(const std::string& task_id, const std::string& owner, const std::string& config_id)
      EXCLUDES(mu_);

 private:
  struct Owned {
    std::string owner;
    PushConfig config;
    std::string sent_key;  // StatusKey of its last notification ("" = none yet)
  };
  struct Watched {
    std::vector<Owned> configs;
    bool finished = false;  // the last status seen was terminal
    uint64_t watch = 0;     // EventSignal watch id
  };
  struct Delivery {
    std::string task_id;
    std::string url;
    HttpHeaders headers;
    std::shared_ptr<const std::string> body;
  };
  // What the store's wakes reach: held weakly by the watch callbacks, so a
  // wake running while the notifier is destroyed touches nothing freed.
  struct Wakeup {
    Mutex mu;
    CondVar cv;
    std::set<std::string> dirty GUARDED_BY(mu);  // woken since the last pass
    bool stop GUARDED_BY(mu) = false;
  };
  void Run() EXCLUDES(mu_);
  void MarkDirty(const std::string& task_id);
  // Queues the task's Task for its configs whose last notification was of
  // another status.
  void Deliver(const std::string& task_id) EXCLUDES(mu_, queue_mu_);
  void Enqueue(const std::string& owner, Delivery d) EXCLUDES(queue_mu_);
  // A sender thread: takes the next owner's oldest delivery, in turn.
  void Send() EXCLUDES(queue_mu_);
  void StartThreads() REQUIRES(mu_);
  void Forget(const std::string& task_id) REQUIRES(mu_);

  notify::EventSignal& signal_;
  const ReadFn read_;
  const PushOptions options_;
  const HttpClient http_;
  const std::shared_ptr<Wakeup> wakeup_ = std::make_shared<Wakeup>();
  std::atomic<bool> stopping_{false};  // ends a delivery in flight
  // Lock order: mu_ before wakeup_->mu; queue_mu_ is never held with mu_.
  mutable Mutex mu_;
  std::map<std::string, Watched> tasks_ GUARDED_BY(mu_);
  std::thread thread_ GUARDED_BY(mu_);                // the watcher, started by the first Set
  std::vector<std::thread> senders_ GUARDED_BY(mu_);  // started with it

  Mutex queue_mu_;
  CondVar queue_cv_;
  std::map<std::string, std::deque<Delivery>> queues_ GUARDED_BY(queue_mu_);  // per owner
  // Owners with a queued delivery and none in flight, in serving order.
  std::deque<std::string> ready_ GUARDED_BY(queue_mu_);
  std::set<std::string> in_flight_ GUARDED_BY(queue_mu_);
  bool stop_ GUARDED_BY(queue_mu_) = false;
};

}  // namespace maestro::api::a2a
