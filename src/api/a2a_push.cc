#include "api/a2a_push.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

namespace maestro::api::a2a {

namespace {

constexpr std::chrono::milliseconds kPollInterval{2000};

// A null policy is the strict one: a push URL is never unchecked.
PushOptions WithPolicy(PushOptions p) {
  if (!p.egress) p.egress = std::make_shared<const EgressPolicy>();
  return p;
}

HttpClientOptions DeliveryOptions(const PushOptions& p) {
  HttpClientOptions o;
  o.connect_timeout_ms = p.connect_timeout_ms;
  o.total_timeout_ms = p.total_timeout_ms;
  o.egress = p.egress;
  return o;
}

}  // namespace

A2aPushNotifier::A2aPushNotifier(notify::EventSignal& signal, ReadFn read, PushOptions options)
    : signal_(signal),
      read_(std::move(read)),
      options_(WithPolicy(std::move(options))),
      http_(DeliveryOptions(options_)) {}

A2aPushNotifier::~A2aPushNotifier() {
  stopping_ = true;
  {
    MutexLock w(&wakeup_->mu);
    wakeup_->stop = true;
    wakeup_->cv.SignalAll();
  }
  {
    MutexLock q(&queue_mu_);
    stop_ = true;
    queue_cv_.SignalAll();
  }
  std::thread thread;
  std::vector<std::thread> senders;
  {
    MutexLock lock(&mu_);
    for (auto& [id, w] : tasks_) signal_.Unwatch(w.watch);
    thread.swap(thread_);
    senders.swap(senders_);
  }
  if (thread.joinable()) thread.join();
  for (auto& s : senders) s.join();
}

void A2aPushNotifier::MarkDirty(const std::string& task_id) {
  MutexLock w(&wakeup_->mu);
  wakeup_->dirty.insert(task_id);
  wakeup_->cv.SignalAll();
}

void A2aPushNotifier::StartThreads() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { Run(); });
  for (size_t i = 0; i < std::max<size_t>(1, options_.senders); ++i) {
    senders_.emplace_back([this] { Send(); });
  }
}

Result<PushConfig> A2aPushNotifier::Set(const std::string& task_id, const std::string& owner,
                                        PushConfig config) {
  if (config.id.empty()) config.id = task_id;
  // Refused here, before it is stored (and checked again at each delivery:
  // the name may resolve elsewhere by then).
  if (auto checked = options_.egress->Check(config.url); !checked.ok()) {
    return InvalidArgument(checked.status().message(), "url");
  }
  MutexLock lock(&mu_);
  auto it = tasks_.find(task_id);
  if (it == tasks_.end()) {
    if (tasks_.size() >= kMaxTasks) {
      // A finished task's configs have nothing more to say: they make room.
      auto done = std::find_if(tasks_.begin(), tasks_.end(),
                               [](const auto& entry) { return entry.second.finished; });
      if (done == tasks_.end()) {
        return Status(StatusCode::kResourceExhausted,
                      "too many tasks with push notification configs on this server",
                      "pushNotificationConfig");
      }
      Forget(std::string(done->first));
    }
    it = tasks_.emplace(task_id, Watched{}).first;
    // The wake only marks the task: the watcher thread reads and queues.
    it->second.watch = signal_.WatchTask(task_id, [w = std::weak_ptr<Wakeup>(wakeup_), task_id] {
      if (auto wakeup = w.lock()) {
        MutexLock l(&wakeup->mu);
        wakeup->dirty.insert(task_id);
        wakeup->cv.SignalAll();
      }
    });
  }
  auto& configs = it->second.configs;
  auto same = std::find_if(configs.begin(), configs.end(), [&](const Owned& c) {
    return c.owner == owner && c.config.id == config.id;
  });
  const size_t mine = std::count_if(configs.begin(), configs.end(),
                                    [&](const Owned& c) { return c.owner == owner; });
  if (same != configs.end()) {
    *same = Owned{owner, config, ""};  // the current status goes out to the new URL
  } else if (mine >= kMaxConfigsPerTask) {
    return Status(StatusCode::kResourceExhausted,
                  "a user may set at most " + std::to_string(kMaxConfigsPerTask) +
                      " push notification configs on a task",
                  "pushNotificationConfig");
  } else {
    configs.push_back(Owned{owner, config, ""});
  }
  MarkDirty(task_id);
  StartThreads();
  return config;
}

std::optional<PushConfig> A2aPushNotifier::Get(const std::string& task_id, const std::string& owner,
                                               const std::string& config_id) const {
  MutexLock lock(&mu_);
  auto it = tasks_.find(task_id);
  if (it == tasks_.end()) return std::nullopt;
  for (const auto& c : it->second.configs) {
    if (c.owner == owner && (config_id.empty() || c.config.id == config_id)) return c.config;
  }
  return std::nullopt;
}

std::vector<PushConfig> A2aPushNotifier::List(const std::string& task_id,
                                              const std::string& owner) const {
  MutexLock lock(&mu_);
  std::vector<PushConfig> out;
  auto it = tasks_.find(task_id);
  if (it == tasks_.end()) return out;
  for (const auto& c : it->second.configs) {
    if (c.owner == owner) out.push_back(c.config);
  }
  return out;
}

bool A2aPushNotifier::Delete(const std::string& task_id, const std::string& owner,
                             const std::string& config_id) {
  MutexLock lock(&mu_);
  auto it = tasks_.find(task_id);
  if (it == tasks_.end()) return false;
  auto& configs = it->second.configs;
  const size_t before = configs.size();
  configs.erase(
      std::remove_if(configs.begin(), configs.end(),
                     [&](const Owned& c) { return c.owner == owner && c.config.id == config_id; }),
      configs.end());
  const bool removed = configs.size() != before;
  if (configs.empty()) Forget(task_id);
  return removed;
}

void A2aPushNotifier::Forget(const std::string& task_id) {
  auto it = tasks_.find(task_id);
  if (it == tasks_.end()) return;
  signal_.Unwatch(it->second.watch);
  tasks_.erase(it);
}

void A2aPushNotifier::Run() {
  Wakeup& w = *wakeup_;
  while (true) {
    std::set<std::string> pass;
    {
      MutexLock lock(&w.mu);
      const bool woken = w.cv.WaitFor(&w.mu, kPollInterval,
                                      [&]() REQUIRES(w.mu) { return w.stop || !w.dirty.empty(); });
      if (w.stop) return;
      if (woken) pass.swap(w.dirty);
    }
    if (pass.empty()) {  // the poll tick: what another process committed is seen here
      MutexLock lock(&mu_);
      for (const auto& [id, watched] : tasks_) pass.insert(id);
    }
    for (const auto& task_id : pass) Deliver(task_id);
  }
}

void A2aPushNotifier::Deliver(const std::string& task_id) {
  auto facts = read_(task_id);
  const std::string key = facts.ok() ? StatusKey(*facts) : "";
  std::vector<Owned> due;
  {
    MutexLock lock(&mu_);
    auto it = tasks_.find(task_id);
    if (it == tasks_.end()) return;
    if (!facts.ok()) {
      spdlog::warn("a2a push: task {}: {}", task_id, facts.status().ToString());
      if (facts.status().code() == StatusCode::kNotFound) Forget(task_id);
      return;
    }
    it->second.finished = IsTerminal(StateOf(*facts));
    for (auto& c : it->second.configs) {
      if (c.sent_key == key) continue;
      c.sent_key = key;
      due.push_back(c);
    }
  }
  if (due.empty()) return;
  auto body = std::make_shared<const std::string>(DumpJson(TaskJson(*facts, 0)));
  for (const auto& c : due) {
    Delivery d{task_id, c.config.url, {{"Content-Type", "application/json"}}, body};
    if (!c.config.token.empty()) d.headers.emplace_back("X-A2A-Notification-Token", c.config.token);
    if (!c.config.auth_scheme.empty()) {
      d.headers.emplace_back("Authorization", c.config.auth_scheme + " " + c.config.credentials);
    }
    Enqueue(c.owner, std::move(d));
  }
}

void A2aPushNotifier::Enqueue(const std::string& owner, Delivery d) {
  MutexLock q(&queue_mu_);
  auto& queue = queues_[owner];
  if (queue.size() >= kMaxQueuedPerUser) {
    spdlog::warn("a2a push: {} notifications of one user queued; the oldest (task {}) is dropped",
                 queue.size(), queue.front().task_id);
    queue.pop_front();
  }
  queue.push_back(std::move(d));
  if (!in_flight_.count(owner) && std::find(ready_.begin(), ready_.end(), owner) == ready_.end()) {
    ready_.push_back(owner);
    queue_cv_.Signal();
  }
}

void A2aPushNotifier::Send() {
  // The receiver's answer is not read: only its status matters.
  static const HttpClient::ChunkFn kDrop = [](std::string_view) { return true; };
  const HttpClient::StopFn stop = [this] { return stopping_.load(); };
  MutexLock q(&queue_mu_);
  while (true) {
    queue_cv_.Wait(&queue_mu_, [&]() REQUIRES(queue_mu_) { return stop_ || !ready_.empty(); });
    if (stop_) return;
    const std::string owner = ready_.front();
    ready_.pop_front();
    auto queue = queues_.find(owner);
    if (queue == queues_.end() || queue->second.empty()) continue;
    Delivery d = std::move(queue->second.front());
    queue->second.pop_front();
    in_flight_.insert(owner);
    q.Unlock();
    auto reply = http_.Stream("POST", d.url, d.headers, *d.body, {}, kDrop, stop);
    if (!reply.ok()) {
      spdlog::warn("a2a push: task {} to {}: {}", d.task_id, RedactUrl(d.url),
                   reply.status().message());
    } else if (!reply->stopped && (reply->status < 200 || reply->status >= 300)) {
      spdlog::warn("a2a push: task {} to {}: HTTP {}", d.task_id, RedactUrl(d.url), reply->status);
    }
    q.Lock();
    in_flight_.erase(owner);
    auto again = queues_.find(owner);
    if (again != queues_.end() && !again->second.empty()) {
      ready_.push_back(owner);  // the owner's next, after the others waiting
      queue_cv_.Signal();
    } else if (again != queues_.end()) {
      queues_.erase(again);
    }
  }
}

}  // namespace maestro::api::a2a
