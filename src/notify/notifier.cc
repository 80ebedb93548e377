#include "notify/notifier.h"

#include <spdlog/spdlog.h>

#include <utility>

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

Notifier::Notifier(NotifierOptions options) : hub_(options.job_stream_buffer) {}

Notifier::~Notifier() { StopDispatchers(); }

void Notifier::Bind(StoreOptions& so) {
  so.on_commit = [this](const std::vector<CommittedEvent>& events) { Committed(events); };
  so.on_job_available = [this] { JobAvailable(); };
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
}

}  // namespace maestro::notify
