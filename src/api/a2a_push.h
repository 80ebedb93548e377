// A2aPushNotifier: A2A push notifications — the per-task configs
// (tasks/pushNotificationConfig/set|get|list|delete, or message/send's
// configuration.pushNotificationConfig) and their delivery: whenever a
// task's A2A status changes (a2a_task_view.h StatusKey), its Task is POSTed
// to each of the task's URLs with the config's token in
// X-A2A-Notification-Token and its credentials in Authorization.
//
// Where it sits: owned by the A2A endpoint (a2a_endpoint.h). The configs
// live in the store (store/a2a_push_records.h, table a2a_push_configs;
// issue 48 item 3), so a restart keeps them and every API process on one
// database sees them. maestro's webhooks (notify/webhooks.h) are a
// different contract — configured URLs receiving every event, HMAC-signed.
//
// Once across processes: each process's watcher sees a status change (its
// own commits through EventSignal, other processes' through the store's
// wakes and a 2 s poll of the open configs); before it queues a delivery it
// claims it in the store (ClaimA2aPushDelivery: the config's last sent
// status key moves from what was read to the new one in one conditional
// UPDATE), so exactly one process sends each change. The claim precedes the
// POST: delivery is at most once and best effort (one attempt, failures
// logged); a config that has sent a terminal state gets nothing more.
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
// Delivery: the watcher thread turns claimed status changes into
// deliveries, one FIFO per config owner; a small pool of sender threads
// serves the owners round-robin with at most one delivery in flight per
// owner, each bounded by a short connect timeout and a total timeout. One
// user's receivers that never answer hold one sender at a time, never
// another user's notifications. A user's queue keeps at most
// kMaxQueuedPerUser (the oldest is dropped).
//
// Thread safety: every method may be called from any thread. The watcher
// and the senders start with the notifier (configs set before a restart are
// served without a new Set); the watcher is woken by EventSignal::WatchTask
// for the tasks with open configs and polls every 2 s; the destructor stops
// and joins them.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
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
#include "store/a2a_push_records.h"

namespace maestro::api::a2a {

struct PushOptions {
  // Which receivers are reachable; the default admits no internal address.
  std::shared_ptr<const EgressPolicy> egress = std::make_shared<const EgressPolicy>();
  size_t senders = 4;                  // delivery threads shared by all users
  int64_t connect_timeout_ms = 2'000;  // per delivery
  int64_t total_timeout_ms = 5'000;    // per delivery
  int64_t poll_ms = 2'000;             // how often the open configs are read again
};

class A2aPushNotifier {
 public:
  // Reads a task's facts for a notification (the config's owner was checked
  // when it was set).
  using ReadFn = std::function<Result<TaskFacts>(const std::string& task_id)>;
  static constexpr int kMaxConfigsPerTask = 10;  // per user and task
  static constexpr int kMaxOpenPerPass = 10000;  // open configs one watcher pass reads
  static constexpr size_t kMaxQueuedPerUser = 200;

  A2aPushNotifier(A2aPushRecords& records, notify::EventSignal& signal, ReadFn read,
                  PushOptions options = {});
  ~A2aPushNotifier();
  A2aPushNotifier(const A2aPushNotifier&) = delete;
  A2aPushNotifier& operator=(const A2aPushNotifier&) = delete;

  // Adds `owner`'s config (id "" → the task id) or replaces `owner`'s one
  // with its id (the current status then goes to it). Returns the stored
  // config; kInvalidArgument (field "url") for a URL the egress policy
  // refuses; kResourceExhausted over kMaxConfigsPerTask.
  Result<PushConfig> Set(const std::string& task_id, const std::string& owner, PushConfig config)
      EXCLUDES(mu_);
  // `owner`'s config `config_id` of the task ("" → their oldest);
  // kNotFound if none.
  Result<PushConfig> Get(const std::string& task_id, const std::string& owner,
                         const std::string& config_id) const;
  Result<std::vector<PushConfig>> List(const std::string& task_id, const std::string& owner) const;
  // kNotFound when `owner` has no such config on the task.
  Status Delete(const std::string& task_id, const std::string& owner, const std::string& config_id)
      EXCLUDES(mu_);

 private:
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
  // Watches `task_id` (its commits wake the watcher); no-op if watched.
  void WatchLocked(const std::string& task_id) REQUIRES(mu_);
  // One watcher pass: reads the open configs, keeps the watches to their
  // tasks, and for the tasks in `only` (all when null) claims and queues
  // each config's notification of a new status.
  void Pass(const std::set<std::string>* only) EXCLUDES(mu_, queue_mu_);
  void Deliver(const std::string& task_id, const std::vector<A2aPushConfigRecord>& configs)
      EXCLUDES(queue_mu_);
  void Enqueue(const std::string& owner, Delivery d) EXCLUDES(queue_mu_);
  // A sender thread: takes the next owner's oldest delivery, in turn.
  void Send() EXCLUDES(queue_mu_);

  A2aPushRecords& records_;
  notify::EventSignal& signal_;
  const ReadFn read_;
  const PushOptions options_;
  const HttpClient http_;
  const std::shared_ptr<Wakeup> wakeup_ = std::make_shared<Wakeup>();
  std::atomic<bool> stopping_{false};  // ends a delivery in flight
  // Lock order: mu_ before wakeup_->mu; queue_mu_ is never held with mu_.
  mutable Mutex mu_;
  std::map<std::string, uint64_t> watches_ GUARDED_BY(mu_);  // task id → EventSignal watch
  std::thread thread_;                                       // the watcher
  std::vector<std::thread> senders_;

  Mutex queue_mu_;
  CondVar queue_cv_;
  std::map<std::string, std::deque<Delivery>> queues_ GUARDED_BY(queue_mu_);  // per owner
  // Owners with a queued delivery and none in flight, in serving order.
  std::deque<std::string> ready_ GUARDED_BY(queue_mu_);
  std::set<std::string> in_flight_ GUARDED_BY(queue_mu_);
  bool stop_ GUARDED_BY(queue_mu_) = false;
};

}  // namespace maestro::api::a2a
