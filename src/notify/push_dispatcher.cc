#include "notify/push_dispatcher.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "core/http_client.h"

namespace maestro {

namespace {

constexpr const char* kCursor = "push";

int64_t NowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The endpoint for logs: its origin only (the path is a capability).
std::string ShownEndpoint(const std::string& endpoint) {
  auto origin = push::EndpointOrigin(endpoint);
  return origin.ok() ? *origin + "/…" : "(malformed endpoint)";
}

}  // namespace

PushDispatcher::PushDispatcher(NotificationRecords& store, PushOptions options)
    : store_(store), options_(std::move(options)) {}

PushDispatcher::~PushDispatcher() { Stop(); }

void PushDispatcher::Start() {
  threads_.emplace_back([this] { ReadLoop(); });
  for (int i = 0; i < std::max(1, options_.senders); ++i) {
    threads_.emplace_back([this] { SendLoop(); });
  }
}

void PushDispatcher::Notify() { sleep_.Notify(); }

void PushDispatcher::Stop() {
  sleep_.Stop();
  {
    MutexLock lock(&mu_);
    stopped_ = true;
  }
  cv_.SignalAll();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

bool PushDispatcher::Enqueue(Delivery d) {
  MutexLock lock(&mu_);
  cv_.Wait(&mu_, [&]() REQUIRES(mu_) {
    return stopped_ || queue_.size() < std::max<size_t>(1, options_.queue_capacity);
  });
  if (stopped_) return false;
  queue_.push_back(std::move(d));
  cv_.SignalAll();
  return true;
}

void PushDispatcher::ReadLoop() {
  // The position is kept here and saved only after a page that queued a
  // delivery, every kSaveEvery events, and at Stop: most events are nobody's
  // notice, and a write per commit would double the store's writes. A crash
  // re-reads at most kSaveEvery events that queued nothing.
  constexpr int kSaveEvery = 1000;
  std::string pos;
  bool loaded = false;
  int unsaved = 0;
  auto save = [&] {
    if (unsaved == 0) return;
    if (Status st = store_.SetCursor(kCursor, pos); !st.ok()) {
      spdlog::warn("push: cannot save cursor: {}", st.message());
      return;
    }
    unsaved = 0;
  };
  for (;;) {
    if (sleep_.stopped()) break;
    if (!loaded) {
      auto cursor = store_.GetCursor(kCursor);
      if (!cursor.ok()) {
        spdlog::warn("push: cannot read the cursor: {}", cursor.status().message());
        if (!sleep_.Sleep(options_.poll_ms, false)) break;
        continue;
      }
      pos = *cursor;
      loaded = true;
    }
    auto events = store_.ListAllEvents(pos, 100);
    if (!events.ok()) {
      spdlog::warn("push: cannot read events: {}", events.status().message());
      if (!sleep_.Sleep(options_.poll_ms, false)) break;
      continue;
    }
    bool queued = false;
    bool stopping = false;
    for (const auto& e : *events) {
      std::optional<PushNotice> notice = options_.compose ? options_.compose(e) : std::nullopt;
      if (notice && !notice->owner.empty()) {
        auto subs = store_.ListPushSubscriptions(notice->owner);
        if (!subs.ok()) {
          spdlog::warn("push: cannot list subscriptions: {}", subs.status().message());
        } else {
          const std::string body = DumpJson(notice->payload);
          for (const auto& sub : *subs) {
            // A browser subscribed after the event is not told about it.
            if (sub.created_at > notice->created_at) continue;
            if (!Enqueue({sub, body, notice->urgency})) {
              stopping = true;
              break;
            }
            queued = true;
          }
        }
      }
      if (stopping) break;
      pos = e.id;
      ++unsaved;
    }
    if (stopping) break;
    if (queued || unsaved >= kSaveEvery) save();
    if (events->empty() && !sleep_.Sleep(options_.poll_ms, true)) break;
  }
  if (loaded) save();
}

void PushDispatcher::SendLoop() {
  for (;;) {
    Delivery d;
    {
      MutexLock lock(&mu_);
      cv_.Wait(&mu_, [&]() REQUIRES(mu_) { return stopped_ || !queue_.empty(); });
      if (stopped_) return;
      d = std::move(queue_.front());
      queue_.pop_front();
    }
    cv_.SignalAll();  // the reader may wait for room
    if (!Send(d)) return;
  }
}

bool PushDispatcher::Send(const Delivery& d) {
  const std::string shown = ShownEndpoint(d.sub.endpoint);
  auto ua_public = push::Base64UrlDecode(d.sub.p256dh);
  auto auth = push::Base64UrlDecode(d.sub.auth);
  if (!ua_public || !auth) {
    spdlog::warn("push {}: subscription {} has malformed keys; skipped", shown, d.sub.id);
    return true;
  }
  HttpClientOptions http;
  http.connect_timeout_ms = options_.timeout_ms;
  http.idle_timeout_ms = options_.timeout_ms;
  http.total_timeout_ms = 3 * options_.timeout_ms;
  http.egress = options_.egress ? options_.egress : std::make_shared<const EgressPolicy>();
  const HttpClient client(http);
  int64_t backoff = options_.initial_backoff_ms;
  for (int attempt = 1; attempt <= options_.max_attempts; ++attempt) {
    // A fresh salt and ephemeral key per request (RFC 8291 §2: never reuse).
    auto body = push::EncryptAes128Gcm(d.body, *ua_public, *auth);
    auto authorization =
        push::VapidAuthorization(*options_.key, d.sub.endpoint, options_.subject, NowSeconds());
    if (!body.ok() || !authorization.ok()) {
      spdlog::warn("push {}: cannot build the message: {}", shown,
                   (!body.ok() ? body.status() : authorization.status()).message());
      return true;
    }
    const HttpHeaders headers = {{"Content-Type", "application/octet-stream"},
                                 {"Content-Encoding", "aes128gcm"},
                                 {"TTL", std::to_string(options_.ttl_seconds)},
                                 {"Urgency", d.urgency},
                                 {"Authorization", *authorization}};
    auto res = client.Stream("POST", d.sub.endpoint, headers, *body, {}, {});
    if (res.ok() && res->status >= 200 && res->status < 300) return true;
    if (res.ok() && (res->status == 404 || res->status == 410)) {
      // RFC 8030 §6.2/§7.3: the subscription expired or was unsubscribed.
      spdlog::info("push {}: HTTP {}; subscription {} of {} removed", shown, res->status, d.sub.id,
                   d.sub.owner);
      if (Status st = store_.DeletePushSubscription(d.sub.owner, d.sub.id);
          !st.ok() && st.code() != StatusCode::kNotFound) {
        spdlog::warn("push: cannot remove subscription {}: {}", d.sub.id, st.message());
      }
      return true;
    }
    std::string error = res.ok() ? "HTTP " + std::to_string(res->status) : res.status().message();
    // The endpoint's path is a capability: the log shows its origin only.
    for (size_t at = error.find(d.sub.endpoint); at != std::string::npos && !d.sub.endpoint.empty();
         at = error.find(d.sub.endpoint, at + shown.size())) {
      error.replace(at, d.sub.endpoint.size(), shown);
    }
    const bool refused = !res.ok() && res.status().code() == StatusCode::kInvalidArgument &&
                         res.status().field() == "url";
    const bool retryable = !refused && (!res.ok() || res->status == 429 || res->status >= 500);
    spdlog::warn("push {} attempt {}/{} failed: {}", shown, attempt, options_.max_attempts, error);
    if (!retryable || attempt == options_.max_attempts) break;
    if (!sleep_.Sleep(backoff, false)) return false;
    backoff = std::min(backoff * 2, options_.max_backoff_ms);
  }
  return true;  // given up; the inbox still has the notice
}

}  // namespace maestro
