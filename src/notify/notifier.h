// Notifier: the one home of commit fan-out — what happens after the store
// commits. It owns the live streams' EventSignal and JobStreamHub and the
// webhook and Web Push dispatchers, and it is what the worker pool's wake-up
// subscribes to.
//
// Where it sits: made first (cli/runtime.cc OpenRuntime), before the store,
// so the store's hooks point at it from the start (Bind puts them into
// StoreOptions): nothing is set later and nothing is nulled at shutdown. A
// commit reaches it as
//   on_commit(events)   → Committed: EventSignal::Notify (the task and job
//                         streams, MCP and A2A waits), then every kCommit
//                         subscriber (the webhook and push dispatchers: they
//                         re-read the events table)
//   on_job_available()  → JobAvailable: every kJobAvailable subscriber (the
//                         worker pool's Notify, subscribed once it started)
// On PostgreSQL with `database.notify` both hooks are also called by the
// store's LISTEN thread for other processes' commits (notify/event_signal.h).
// The engine publishes a running job's deltas through PublishDelta into
// job_streams(); the API reads them (and the EventSignal) through a
// reference, it owns neither. Across processes (PostgreSQL): a process that
// runs jobs also relays its deltas (StartDeltaRelay, notify/delta_relay.h),
// and a process that serves streams (`hear_deltas`) hears the others'
// through the store's LISTEN thread (on_deltas) into the same hub.
//
// Subscriptions: Subscribe() returns a move-only Subscription; destroying
// it (or Cancel()) unsubscribes. After Cancel() returns the callback is not
// running on any thread and never runs again, even when commits fan out
// concurrently on other threads — so a subscriber may be destroyed right
// after. Cancel() must not be called from inside that subscription's own
// callback (it would wait for itself). Callbacks must be cheap and must not
// block: they run on the committing thread, outside the Notifier's lock.
//
// Dispatchers: StartWebhooks/StartPush make, subscribe and start one
// (at most one of each); StopDispatchers() unsubscribes and stops them. They
// read the store they were given, so StopDispatchers() must run before that
// store goes (Runtime::Stop and ~Runtime do).
//
// Thread safety: Committed, JobAvailable, Subscribe and Cancel may be called
// from any thread, concurrently. StartWebhooks/StartPush/StopDispatchers from
// one controlling thread (they are still locked against each other).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "core/mutex.h"
#include "notify/delta_relay.h"
#include "notify/event_signal.h"
#include "notify/job_stream.h"
#include "notify/push_dispatcher.h"
#include "notify/webhooks.h"
#include "store/store.h"

namespace maestro::notify {

struct NotifierOptions {
  size_t job_stream_buffer = 1024;  // newest deltas kept per job (JobStreamHub)
  // Take other processes' relayed deltas into job_streams() (an API process
  // on PostgreSQL); Bind then sets the store's on_deltas.
  bool hear_deltas = false;
};

class Notifier {
 public:
  // What a subscriber is woken for.
  enum class Topic {
    kCommit,        // any commit (on_commit)
    kJobAvailable,  // a commit made a job claimable (on_job_available)
  };

  class Subscription {
   public:
    Subscription() = default;
    Subscription(Subscription&& other) noexcept;
    Subscription& operator=(Subscription&& other) noexcept;
    Subscription(const Subscription&) = delete;
    Subscription& operator=(const Subscription&) = delete;
    ~Subscription() { Cancel(); }
    // Unsubscribes; returns once no call of the callback is in flight.
    // Idempotent.
    void Cancel();
    bool active() const { return notifier_ != nullptr; }

   private:
    friend class Notifier;
    Subscription(Notifier* notifier, uint64_t id) : notifier_(notifier), id_(id) {}
    Notifier* notifier_ = nullptr;
    uint64_t id_ = 0;
  };

  explicit Notifier(NotifierOptions options = {});
  ~Notifier();  // StopDispatchers(); every Subscription must be gone first
  Notifier(const Notifier&) = delete;
  Notifier& operator=(const Notifier&) = delete;

  // Points `so`'s on_commit and on_job_available at this Notifier. The
  // Notifier must outlive the store opened with `so`.
  void Bind(StoreOptions& so);

  // The store's hooks.
  void Committed(const std::vector<CommittedEvent>& events) EXCLUDES(mu_);
  void JobAvailable() EXCLUDES(mu_);

  // The live streams' wake-ups on commits, and the running jobs' deltas.
  EventSignal& signal() { return signal_; }
  JobStreamHub& job_streams() { return hub_; }

  // A job's delta from the engine of this process: into job_streams(), and
  // to the other processes when a relay runs.
  void PublishDelta(const std::string& job_id, const Json& delta);
  // A run (claim) of the job starts here (JobStreamHub::BeginRun).
  void BeginRun(const std::string& job_id, int64_t fencing_token) {
    hub_.BeginRun(job_id, fencing_token);
  }
  // Relays this process's deltas through `send` (PgStore::Notify on
  // kDeltasChannel) from now on; before the workers start. Once.
  void StartDeltaRelay(DeltaRelay::SendFn send, DeltaRelayOptions options = {});
  // The relay's counters (all zero without one).
  DeltaRelay::Stats relay_stats() const;
  // Other processes' relayed deltas heard (the store's on_deltas).
  void RelayedDeltas(const std::string& payload) { reader_.Receive(payload); }

  // Calls `wake` on every event of `topic` until the Subscription goes.
  [[nodiscard]] Subscription Subscribe(Topic topic, std::function<void()> wake) EXCLUDES(mu_);

  // Makes, subscribes (kCommit) and starts the dispatcher; the Notifier owns
  // it until StopDispatchers(). A second call replaces nothing: it is
  // ignored with a warning.
  void StartWebhooks(NotificationRecords& store, WebhookOptions options) EXCLUDES(dispatch_mu_);
  void StartPush(NotificationRecords& store, PushOptions options) EXCLUDES(dispatch_mu_);
  // Unsubscribes the dispatchers, then stops them (their threads joined),
  // and sends what the delta relay still holds. Idempotent.
  void StopDispatchers() EXCLUDES(dispatch_mu_);

  // Live subscriptions (tests).
  size_t subscribers() const EXCLUDES(mu_);

 private:
  struct Subscriber {
    Topic topic;
    std::function<void()> wake;
    int in_flight = 0;  // calls running now; guarded by the Notifier's mu_
  };

  void Fan(Topic topic) EXCLUDES(mu_);
  void Unsubscribe(uint64_t id) EXCLUDES(mu_);

  const NotifierOptions options_;
  const std::string origin_;  // this process, in relayed payloads
  EventSignal signal_;
  JobStreamHub hub_;
  DeltaRelayReader reader_;
  // Set once before the workers start; read on every delta.
  std::unique_ptr<DeltaRelay> relay_owner_ GUARDED_BY(dispatch_mu_);
  std::atomic<DeltaRelay*> relay_{nullptr};

  mutable Mutex mu_;
  CondVar idle_;  // a call ended: Unsubscribe may be waiting for it
  uint64_t next_id_ GUARDED_BY(mu_) = 1;
  std::map<uint64_t, std::shared_ptr<Subscriber>> subscribers_ GUARDED_BY(mu_);

  Mutex dispatch_mu_;
  std::unique_ptr<WebhookDispatcher> webhooks_ GUARDED_BY(dispatch_mu_);
  std::unique_ptr<PushDispatcher> push_ GUARDED_BY(dispatch_mu_);
  Subscription webhooks_wake_ GUARDED_BY(dispatch_mu_);
  Subscription push_wake_ GUARDED_BY(dispatch_mu_);
};

}  // namespace maestro::notify
