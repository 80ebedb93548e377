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
// attempt per change, 5 s timeout, failures logged).
//
// Thread safety: every method may be called from any thread. One delivery
// thread, started with the first config, is woken by EventSignal::WatchTask
// for the tasks with configs and re-reads them every 2 s for commits made
// by other processes; the destructor stops and joins it.
#pragma once

#include <cstdint>
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
#include "api/event_signal.h"
#include "core/http_client.h"
#include "core/mutex.h"
#include "core/status.h"

namespace maestro::api::a2a {

class A2aPushNotifier {
 public:
  // Reads a task's facts for a notification (the config's owner was checked
  // when it was set).
  using ReadFn = std::function<Result<TaskFacts>(const std::string& task_id)>;
  static constexpr size_t kMaxConfigsPerTask = 10;
  static constexpr size_t kMaxTasks = 10000;

  A2aPushNotifier(EventSignal& signal, ReadFn read);
  ~A2aPushNotifier();
  A2aPushNotifier(const A2aPushNotifier&) = delete;
  A2aPushNotifier& operator=(const A2aPushNotifier&) = delete;

  // Adds the config (id "" → the task id) or replaces the one with its id.
  // Returns the stored config; kResourceExhausted over the limits above
  // (a new task over kMaxTasks first evicts the configs of a task whose
  // terminal state was already sent).
  Result<PushConfig> Set(const std::string& task_id, PushConfig config) EXCLUDES(mu_);
  // The config `config_id` of the task ("" → its first); nullopt if none.
  std::optional<PushConfig> Get(const std::string& task_id, const std::string& config_id) const
      EXCLUDES(mu_);
  std::vector<PushConfig> List(const std::string& task_id) const EXCLUDES(mu_);
  // False when the task has no such config.
  bool Delete(const std::string& task_id, const std::string& config_id) EXCLUDES(mu_);

 private:
  struct Watched {
    std::vector<PushConfig> configs;
    std::string sent_key;   // StatusKey of the last notification ("" = none yet)
    bool finished = false;  // that notification was of a terminal state
    uint64_t watch = 0;     // EventSignal watch id
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
  // Sends the task's Task to its URLs if its status changed since the last.
  void Deliver(const std::string& task_id) EXCLUDES(mu_);
  void Forget(const std::string& task_id) REQUIRES(mu_);

  EventSignal& signal_;
  const ReadFn read_;
  const HttpClient http_;
  const std::shared_ptr<Wakeup> wakeup_ = std::make_shared<Wakeup>();
  // Lock order: mu_ before wakeup_->mu.
  mutable Mutex mu_;
  std::map<std::string, Watched> tasks_ GUARDED_BY(mu_);
  std::thread thread_ GUARDED_BY(mu_);  // started by the first Set
};

}  // namespace maestro::api::a2a
