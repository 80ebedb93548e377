#include "api/a2a_push.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

namespace maestro::api::a2a {

namespace {

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

A2aPushNotifier::A2aPushNotifier(A2aPushRecords& records, notify::EventSignal& signal, ReadFn read,
                                 PushOptions options)
    : records_(records),
      signal_(signal),
      read_(std::move(read)),
      options_(WithPolicy(std::move(options))),
      http_(DeliveryOptions(options_)) {
  // Started now, not by a first Set: configs kept from before a restart (or
  // set through another process) are served by this one too.
  thread_ = std::thread([this] { Run(); });
  for (size_t i = 0; i < std::max<size_t>(1, options_.senders); ++i) {
    senders_.emplace_back([this] { Send(); });
  }
}

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
  if (thread_.joinable()) thread_.join();
  for (auto& s : senders_) s.join();
  MutexLock lock(&mu_);
  for (const auto& [id, watch] : watches_) signal_.Unwatch(watch);
  watches_.clear();
}

void A2aPushNotifier::MarkDirty(const std::string& task_id) {
  MutexLock w(&wakeup_->mu);
  wakeup_->dirty.insert(task_id);
  wakeup_->cv.SignalAll();
}

void A2aPushNotifier::WatchLocked(const std::string& task_id) {
  if (watches_.count(task_id)) return;
  // The wake only marks the task: the watcher thread reads and claims.
  watches_[task_id] = signal_.WatchTask(task_id, [w = std::weak_ptr<Wakeup>(wakeup_), task_id] {
    if (auto wakeup = w.lock()) {
      MutexLock l(&wakeup->mu);
      wakeup->dirty.insert(task_id);
      wakeup->cv.SignalAll();
    }
  });
}

namespace {

PushConfig A2aPushConfigOf(const A2aPushConfigRecord& r) {
  PushConfig c;
  c.id = r.id;
  c.url = r.url;
  c.token = r.token;
  c.auth_scheme = r.auth_scheme;
  c.credentials = r.credentials;
  return c;
}

}  // namespace

Result<PushConfig> A2aPushNotifier::Set(const std::string& task_id, const std::string& owner,
                                        PushConfig config) {
  if (config.id.empty()) config.id = task_id;
  // Refused here, before it is stored (and checked again at each delivery:
  // the name may resolve elsewhere by then).
  if (auto checked = options_.egress->Check(config.url); !checked.ok()) {
    return InvalidArgument(checked.status().message(), "url");
  }
  A2aPushConfigRecord r;
  r.task_id = task_id;
  r.owner = owner;
  r.id = config.id;
  r.url = config.url;
  r.token = config.token;
  r.auth_scheme = config.auth_scheme;
  r.credentials = config.credentials;
  MAESTRO_ASSIGN_OR_RETURN(auto stored, records_.PutA2aPushConfig(r, kMaxConfigsPerTask));
  {
    MutexLock lock(&mu_);
    WatchLocked(task_id);
  }
  MarkDirty(task_id);
  return A2aPushConfigOf(stored);
}

Result<PushConfig> A2aPushNotifier::Get(const std::string& task_id, const std::string& owner,
                                        const std::string& config_id) const {
  MAESTRO_ASSIGN_OR_RETURN(auto r, records_.GetA2aPushConfig(task_id, owner, config_id));
  return A2aPushConfigOf(r);
}

Result<std::vector<PushConfig>> A2aPushNotifier::List(const std::string& task_id,
                                                      const std::string& owner) const {
  MAESTRO_ASSIGN_OR_RETURN(auto rows, records_.ListA2aPushConfigs(task_id, owner));
  std::vector<PushConfig> out;
  for (const auto& r : rows) out.push_back(A2aPushConfigOf(r));
  return out;
}

Status A2aPushNotifier::Delete(const std::string& task_id, const std::string& owner,
                               const std::string& config_id) {
  MAESTRO_RETURN_IF_ERROR(records_.DeleteA2aPushConfig(task_id, owner, config_id));
  MarkDirty(task_id);  // the next pass drops the watch when no open config is left
  return Status::Ok();
}

void A2aPushNotifier::Run() {
  Wakeup& w = *wakeup_;
  const std::chrono::milliseconds poll(std::max<int64_t>(10, options_.poll_ms));
  bool first = true;
  while (true) {
    std::set<std::string> pass;
    bool woken = false;
    if (!first) {
      MutexLock lock(&w.mu);
      woken =
          w.cv.WaitFor(&w.mu, poll, [&]() REQUIRES(w.mu) { return w.stop || !w.dirty.empty(); });
      if (w.stop) return;
      if (woken) pass.swap(w.dirty);
    }
    first = false;
    // The poll tick (and the first pass) looks at every open config: what
    // another process committed, or set, is seen here.
    Pass(woken ? &pass : nullptr);
  }
}

void A2aPushNotifier::Pass(const std::set<std::string>* only) {
  auto open = records_.ListOpenA2aPushConfigs(kMaxOpenPerPass);
  if (!open.ok()) {
    if (open.status().code() != StatusCode::kUnimplemented) {
      spdlog::warn("a2a push: reading the configs: {}", open.status().ToString());
    }
    return;
  }
  std::map<std::string, std::vector<A2aPushConfigRecord>> by_task;
  for (auto& c : *open) by_task[c.task_id].push_back(std::move(c));
  {
    MutexLock lock(&mu_);
    // A task with no open config left is not watched any more (unless the
    // list was cut at its limit: then what is missing is unknown).
    const bool whole = open->size() < static_cast<size_t>(kMaxOpenPerPass);
    for (auto it = watches_.begin(); it != watches_.end();) {
      if (!whole || by_task.count(it->first)) {
        ++it;
      } else {
        signal_.Unwatch(it->second);
        it = watches_.erase(it);
      }
    }
    for (const auto& [task_id, configs] : by_task) WatchLocked(task_id);
  }
  for (const auto& [task_id, configs] : by_task) {
    if (only && !only->count(task_id)) continue;
    Deliver(task_id, configs);
  }
}

void A2aPushNotifier::Deliver(const std::string& task_id,
                              const std::vector<A2aPushConfigRecord>& configs) {
  auto facts = read_(task_id);
  if (!facts.ok()) {
    spdlog::warn("a2a push: task {}: {}", task_id, facts.status().ToString());
    if (facts.status().code() != StatusCode::kNotFound) return;
    // The task is gone: its configs have nothing more to say.
    for (const auto& c : configs) {
      (void)records_.ClaimA2aPushDelivery(c.task_id, c.owner, c.id, c.sent_key, "gone", true);
    }
    return;
  }
  const std::string key = StatusKey(*facts);
  const bool terminal = IsTerminal(StateOf(*facts));
  std::shared_ptr<const std::string> body;
  for (const auto& c : configs) {
    if (c.sent_key == key) continue;
    // Of the processes that saw this change, one wins the claim and sends.
    auto claimed =
        records_.ClaimA2aPushDelivery(c.task_id, c.owner, c.id, c.sent_key, key, terminal);
    if (!claimed.ok()) {
      spdlog::warn("a2a push: task {}: claiming a delivery: {}", task_id,
                   claimed.status().ToString());
      continue;
    }
    if (!*claimed) continue;
    if (!body) body = std::make_shared<const std::string>(DumpJson(TaskJson(*facts, 0)));
    Delivery d{task_id, c.url, {{"Content-Type", "application/json"}}, body};
    if (!c.token.empty()) d.headers.emplace_back("X-A2A-Notification-Token", c.token);
    if (!c.auth_scheme.empty()) {
      d.headers.emplace_back("Authorization", c.auth_scheme + " " + c.credentials);
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
