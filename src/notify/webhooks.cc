#include "notify/webhooks.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "core/http_client.h"

namespace maestro {

namespace {

Json EventBody(const Event& e) {
  return {{"id", e.id},         {"type", e.type},       {"task_id", e.task_id},
          {"job_id", e.job_id}, {"payload", e.payload}, {"created_at", e.created_at}};
}

bool Wanted(const WebhookConfig& hook, const Event& e) {
  return hook.events.empty() ||
         std::find(hook.events.begin(), hook.events.end(), e.type) != hook.events.end();
}

}  // namespace

std::string HmacSha256Hex(const std::string& key, const std::string& body) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(body.data()), body.size(), mac, &len);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += kHex[mac[i] >> 4];
    out += kHex[mac[i] & 15];
  }
  return out;
}

WebhookDispatcher::WebhookDispatcher(NotificationRecords& store, WebhookOptions options)
    : store_(store), options_(std::move(options)) {}

WebhookDispatcher::~WebhookDispatcher() { Stop(); }

void WebhookDispatcher::Start() {
  for (const auto& hook : options_.hooks) {
    // Said once at startup, where the operator looks: each delivery to it
    // will be refused (and logged) until egress.allow names it.
    if (options_.egress) {
      auto checked = options_.egress->Check(hook.url);
      if (!checked.ok() && checked.status().code() == StatusCode::kInvalidArgument) {
        spdlog::warn("webhook {}: {}", RedactUrl(hook.url), checked.status().message());
      }
    }
    threads_.emplace_back([this, hook] { Run(hook); });
  }
}

void WebhookDispatcher::Notify() { sleep_.Notify(); }

void WebhookDispatcher::Stop() {
  sleep_.Stop();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

void WebhookDispatcher::Run(const WebhookConfig& hook) {
  const std::string cursor_name = "webhook:" + hook.url;
  for (;;) {
    if (sleep_.stopped()) return;
    auto cursor = store_.GetCursor(cursor_name);
    auto events = cursor.ok() ? store_.ListAllEvents(*cursor, 100)
                              : Result<std::vector<Event>>(cursor.status());
    if (!events.ok()) {
      spdlog::warn("webhook: cannot read events: {}", events.status().message());
      if (!sleep_.Sleep(options_.poll_ms, false)) return;
      continue;
    }
    for (const auto& e : *events) {
      if (Wanted(hook, e) && !Deliver(hook, e)) return;
      if (Status st = store_.SetCursor(cursor_name, e.id); !st.ok()) {
        spdlog::warn("webhook: cannot save cursor: {}", st.message());
      }
    }
    if (events->empty() && !sleep_.Sleep(options_.poll_ms, true)) return;
  }
}

bool WebhookDispatcher::Deliver(const WebhookConfig& hook, const Event& e) {
  const std::string body = DumpJson(EventBody(e));
  const std::string signature = "sha256=" + HmacSha256Hex(hook.secret, body);
  // timeout_ms bounds the connect and each wait for the receiver's next byte.
  HttpClientOptions http;
  http.connect_timeout_ms = options_.timeout_ms;
  http.idle_timeout_ms = options_.timeout_ms;
  http.egress = options_.egress ? options_.egress : std::make_shared<const EgressPolicy>();
  const HttpClient client(http);
  const HttpHeaders headers = {{"Content-Type", "application/json"},
                               {"X-Maestro-Signature", signature},
                               {"X-Maestro-Event", e.type},
                               {"X-Maestro-Delivery", e.id}};
  int64_t backoff = options_.initial_backoff_ms;
  for (int attempt = 1; attempt <= options_.max_attempts; ++attempt) {
    // Only the status matters: the answer's body is read and dropped.
    auto res = client.Stream("POST", hook.url, headers, body, {}, {});
    WebhookDelivery d;
    d.event_id = e.id;
    d.url = hook.url;
    d.attempt = attempt;
    if (res.ok()) {
      d.http_status = res->status;
      d.ok = res->status >= 200 && res->status < 300;
      if (!d.ok) d.error = "HTTP " + std::to_string(res->status);
    } else {
      d.error = res.status().message();
    }
    if (Status st = store_.RecordDelivery(d); !st.ok()) {
      spdlog::warn("webhook: cannot record delivery: {}", st.message());
    }
    if (d.ok) return true;
    const bool refused = !res.ok() && res.status().code() == StatusCode::kInvalidArgument &&
                         res.status().field() == "url";
    spdlog::warn("webhook {} event {} attempt {}/{} failed: {}", hook.url, e.id, attempt,
                 options_.max_attempts, d.error);
    if (attempt == options_.max_attempts || refused) break;  // a refusal stays one
    if (!sleep_.Sleep(backoff, false)) return false;
    backoff = std::min(backoff * 2, options_.max_backoff_ms);
  }
  return true;  // given up; the log has every attempt
}

}  // namespace maestro
