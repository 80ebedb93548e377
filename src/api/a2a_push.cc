#include "api/a2a_push.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

namespace maestro::api::a2a {

namespace {

constexpr std::chrono::milliseconds kPollInterval{2000};

HttpClientOptions DeliveryOptions() {
  HttpClientOptions o;
  o.connect_timeout_ms = 5'000;
  o.total_timeout_ms = 5'000;
  o.max_body_bytes = 64 * 1024;  // the receiver's answer is not read
  return o;
}

}  // namespace

A2aPushNotifier::A2aPushNotifier(EventSignal& signal, ReadFn read)
    : signal_(signal), read_(std::move(read)), http_(DeliveryOptions()) {}

A2aPushNotifier::~A2aPushNotifier() {
  {
    MutexLock w(&wakeup_->mu);
    wakeup_->stop = true;
    wakeup_->cv.SignalAll();
  }
  std::thread thread;
  {
    MutexLock lock(&mu_);
    for (auto& [id, w] : tasks_) signal_.Unwatch(w.watch);
    thread.swap(thread_);
  }
  if (thread.joinable()) thread.join();
}

void A2aPushNotifier::MarkDirty(const std::string& task_id) {
  MutexLock w(&wakeup_->mu);
  wakeup_->dirty.insert(task_id);
  wakeup_->cv.SignalAll();
}

Result<PushConfig> A2aPushNotifier::Set(const std::string& task_id, PushConfig config) {
  if (config.id.empty()) config.id = task_id;
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
    // The wake only marks the task: the delivery thread reads and POSTs.
    it->second.watch = signal_.WatchTask(task_id, [w = std::weak_ptr<Wakeup>(wakeup_), task_id] {
      if (auto wakeup = w.lock()) {
        MutexLock l(&wakeup->mu);
        wakeup->dirty.insert(task_id);
        wakeup->cv.SignalAll();
      }
    });
  }
  auto& configs = it->second.configs;
  auto same = std::find_if(configs.begin(), configs.end(),
                           [&](const PushConfig& c) { return c.id == config.id; });
  if (same != configs.end()) {
    *same = config;
  } else if (configs.size() >= kMaxConfigsPerTask) {
    return Status(
        StatusCode::kResourceExhausted,
        "a task takes at most " + std::to_string(kMaxConfigsPerTask) + " push notification configs",
        "pushNotificationConfig");
  } else {
    configs.push_back(config);
  }
  it->second.sent_key.clear();  // the current status goes out to the new URL too
  MarkDirty(task_id);
  if (!thread_.joinable()) thread_ = std::thread([this] { Run(); });
  return config;
}

std::optional<PushConfig> A2aPushNotifier::Get(const std::string& task_id,
                                               const std::string& config_id) const {
  MutexLock lock(&mu_);
  auto it = tasks_.find(task_id);
  if (it == tasks_.end() || it->second.configs.empty()) return std::nullopt;
  if (config_id.empty()) return it->second.configs.front();
  for (const auto& c : it->second.configs) {
    if (c.id == config_id) return c;
  }
  return std::nullopt;
}

std::vector<PushConfig> A2aPushNotifier::List(const std::string& task_id) const {
  MutexLock lock(&mu_);
  auto it = tasks_.find(task_id);
  return it == tasks_.end() ? std::vector<PushConfig>{} : it->second.configs;
}

bool A2aPushNotifier::Delete(const std::string& task_id, const std::string& config_id) {
  MutexLock lock(&mu_);
  auto it = tasks_.find(task_id);
  if (it == tasks_.end()) return false;
  auto& configs = it->second.configs;
  const size_t before = configs.size();
  configs.erase(std::remove_if(configs.begin(), configs.end(),
                               [&](const PushConfig& c) { return c.id == config_id; }),
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
  std::vector<PushConfig> configs;
  const std::string key = facts.ok() ? StatusKey(*facts) : "";
  {
    MutexLock lock(&mu_);
    auto it = tasks_.find(task_id);
    if (it == tasks_.end()) return;
    if (!facts.ok()) {
      spdlog::warn("a2a push: task {}: {}", task_id, facts.status().ToString());
      if (facts.status().code() == StatusCode::kNotFound) Forget(task_id);
      return;
    }
    if (it->second.sent_key == key) return;
    it->second.sent_key = key;
    it->second.finished = IsTerminal(StateOf(*facts));
    configs = it->second.configs;
  }
  const std::string body = DumpJson(TaskJson(*facts, 0));
  for (const auto& c : configs) {
    HttpHeaders headers = {{"Content-Type", "application/json"}};
    if (!c.token.empty()) headers.emplace_back("X-A2A-Notification-Token", c.token);
    if (!c.auth_scheme.empty()) {
      headers.emplace_back("Authorization", c.auth_scheme + " " + c.credentials);
    }
    auto reply = http_.Request("POST", c.url, headers, body);
    if (!reply.ok()) {
      spdlog::warn("a2a push: task {} to {}: {}", task_id, RedactUrl(c.url),
                   reply.status().message());
    } else if (reply->status < 200 || reply->status >= 300) {
      spdlog::warn("a2a push: task {} to {}: HTTP {}", task_id, RedactUrl(c.url), reply->status);
    }
  }
}

}  // namespace maestro::api::a2a
