#include "notify/notifier.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "core/ids.h"

namespace maestro::notify {

Notifier::Subscription::Subscription(Subscription&& other) noexcept
    : notifier_(std::exchange(other.notifier_, nullptr)), id_(std::exchange(other.id_, 0)) {}

Notifier::Subscription& Notifier::Subscription::operator=(Subscription&& other) noexcept {
  if (this != &other) {
    Cancel();
    notifier_ = std::exchange(other.notifier_, nullptr);
    id_ = std::exchange(other.id_, 0);
  }
  return *this;
}

void Notifier::Subscription::Cancel() {
  if (Notifier* n = std::exchange(notifier_, nullptr)) n->Unsubscribe(id_);
}

Notifier::Notifier(NotifierOptions options)
    : options_(options),
      origin_(NewUuid()),
      hub_(options.job_stream_buffer),
      reader_(origin_,
              [this](const std::string& job_id, uint64_t seq, Json data, std::string json) {
                hub_.Inject(job_id, seq, std::move(data), std::move(json));
              }) {}

Notifier::~Notifier() { StopDispatchers(); }

void Notifier::Bind(StoreOptions& so) {
  so.on_commit = [this](const std::vector<CommittedEvent>& events) { Committed(events); };
  so.on_job_available = [this] { JobAvailable(); };
  if (options_.hear_deltas) {
    so.on_deltas = [this](const std::string& payload) { RelayedDeltas(payload); };
  }
}

void Notifier::PublishDelta(const std::string& job_id, const Json& delta) {
  DeltaRelay* relay = relay_.load(std::memory_order_acquire);
  std::string json;
  const uint64_t seq = hub_.Publish(job_id, delta, relay ? &json : nullptr);
  if (relay) relay->Publish(job_id, seq, json);
}

void Notifier::StartDeltaRelay(DeltaRelay::SendFn send, DeltaRelayOptions options) {
  MutexLock lock(&dispatch_mu_);
  if (relay_owner_) {
    spdlog::warn("the delta relay runs already; a second start is ignored");
    return;
  }
  options.origin = origin_;
  relay_owner_ = std::make_unique<DeltaRelay>(std::move(options), std::move(send));
  relay_.store(relay_owner_.get(), std::memory_order_release);
}

DeltaRelay::Stats Notifier::relay_stats() const {
  DeltaRelay* relay = relay_.load(std::memory_order_acquire);
  return relay ? relay->stats() : DeltaRelay::Stats{};
}

void Notifier::Committed(const std::vector<CommittedEvent>& events) {
  signal_.Notify(events);
  Fan(Topic::kCommit);
}

void Notifier::JobAvailable() { Fan(Topic::kJobAvailable); }

Notifier::Subscription Notifier::Subscribe(Topic topic, std::function<void()> wake) {
  MutexLock lock(&mu_);
  const uint64_t id = next_id_++;
  subscribers_.emplace(id, std::make_shared<Subscriber>(Subscriber{topic, std::move(wake)}));
  return Subscription(this, id);
}

void Notifier::Fan(Topic topic) {
  // The callbacks run outside the lock (a commit on another thread fans out
  // meanwhile); each is counted in flight so Unsubscribe can wait for it.
  std::vector<std::shared_ptr<Subscriber>> woken;
  {
    MutexLock lock(&mu_);
    for (auto& [id, s] : subscribers_) {
      if (s->topic != topic) continue;
      ++s->in_flight;
      woken.push_back(s);
    }
  }
  for (auto& s : woken) s->wake();
  if (woken.empty()) return;
  {
    MutexLock lock(&mu_);
    for (auto& s : woken) --s->in_flight;
  }
  idle_.SignalAll();
}

void Notifier::Unsubscribe(uint64_t id) {
  MutexLock lock(&mu_);
  auto it = subscribers_.find(id);
  if (it == subscribers_.end()) return;
  std::shared_ptr<Subscriber> s = std::move(it->second);
  subscribers_.erase(it);
  // No new call can start (it is gone from the map); wait for those running.
  idle_.Wait(&mu_, [&]() REQUIRES(mu_) { return s->in_flight == 0; });
}

size_t Notifier::subscribers() const {
  MutexLock lock(&mu_);
  return subscribers_.size();
}

void Notifier::StartWebhooks(NotificationRecords& store, WebhookOptions options) {
  MutexLock lock(&dispatch_mu_);
  if (webhooks_) {
    spdlog::warn("notifier: webhooks already started");
    return;
  }
  webhooks_ = std::make_unique<WebhookDispatcher>(store, std::move(options));
  webhooks_wake_ = Subscribe(Topic::kCommit, [d = webhooks_.get()] { d->Notify(); });
  webhooks_->Start();
}

void Notifier::StartPush(NotificationRecords& store, PushOptions options) {
  MutexLock lock(&dispatch_mu_);
  if (push_) {
    spdlog::warn("notifier: push already started");
    return;
  }
  push_ = std::make_unique<PushDispatcher>(store, std::move(options));
  push_wake_ = Subscribe(Topic::kCommit, [d = push_.get()] { d->Notify(); });
  push_->Start();
}

void Notifier::StopDispatchers() {
  MutexLock lock(&dispatch_mu_);
  // Unsubscribed first: once Cancel returns no commit is inside Notify(),
  // so the dispatchers can stop and go.
  webhooks_wake_.Cancel();
  push_wake_.Cancel();
  if (webhooks_) webhooks_->Stop();
  if (push_) push_->Stop();
  webhooks_.reset();
  push_.reset();
  // Stopped, not freed: a worker still draining may publish (it is then
  // only in this process's hub).
  if (relay_owner_) relay_owner_->Stop();
}

}  // namespace maestro::notify
