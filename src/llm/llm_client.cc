#include "llm/llm_client.h"

#include <curl/curl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <mutex>
#include <random>
#include <thread>

#include "core/sse_parser.h"
#include "core/strings.h"
#include "core/utf8.h"
#include "llm/request_body.h"
#include "llm/stream_assembler.h"

namespace maestro::llm {
namespace {

using SteadyClock = std::chrono::steady_clock;

int64_t MsSince(SteadyClock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - t).count();
}

constexpr size_t kMaxErrorBody = 64 * 1024;
constexpr size_t kMaxJsonBody = 64 * 1024 * 1024;  // a non-streamed answer
constexpr int kPollMs = 25;                        // cancel/idle check period

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// What one attempt ended with.
struct AttemptOutcome {
  Status status;
  LlmErrorKind kind = LlmErrorKind::kNone;
  int http_status = 0;
  int64_t retry_after_ms = -1;
  ChatResponse response;
};

AttemptOutcome Fail(LlmErrorKind kind, Status st, int http = 0) {
  AttemptOutcome o;
  o.kind = kind;
  o.status = std::move(st);
  o.http_status = http;
  return o;
}

// The calling thread's curl multi and easy handles, kept between transfers:
// the multi handle's connection cache holds the kept-alive connection to the
// LLM server, so the requests of an agent loop do not each pay a TCP connect
// (and the server an accept), and the easy handle is reset rather than
// re-created (its buffers stay allocated). A transfer started while the
// thread's pair is busy (never today: no LLM call is made from inside a curl
// callback) gets a private pair.
class ThreadCurl {
 public:
  struct Handles {
    CURLM* multi = nullptr;
    CURL* easy = nullptr;
    bool ok() const { return multi != nullptr && easy != nullptr; }
  };
  ThreadCurl() = default;
  ThreadCurl(const ThreadCurl&) = delete;
  ThreadCurl& operator=(const ThreadCurl&) = delete;
  ~ThreadCurl() {
    if (own_.easy) curl_easy_cleanup(own_.easy);
    if (own_.multi) curl_multi_cleanup(own_.multi);
  }
  // The handles for one transfer (check ok()); give them back with Release.
  Handles Acquire() {
    if (busy_) return {curl_multi_init(), curl_easy_init()};
    if (!own_.multi) own_.multi = curl_multi_init();
    if (own_.easy) {
      curl_easy_reset(own_.easy);  // every option back to its default
    } else {
      own_.easy = curl_easy_init();
    }
    busy_ = own_.ok();
    return own_;
  }
  void Release(Handles h) {
    if (h.multi == own_.multi && h.easy == own_.easy) {
      busy_ = false;
      return;
    }
    if (h.easy) curl_easy_cleanup(h.easy);
    if (h.multi) curl_multi_cleanup(h.multi);
  }

 private:
  Handles own_;
  bool busy_ = false;
};

thread_local ThreadCurl t_curl;

// One HTTP exchange: owns the easy handle, the request body and the parser.
class Transfer {
 public:
  Transfer(const ModelProfile& p, bool stream, const LlmEventFn& on_event, CancelToken* cancel)
      : profile_(p),
        stream_(stream),
        cancel_(cancel),
        on_event_(on_event),
        assembler_([this](const LlmEvent& ev) { OnDelta(ev); }),
        parser_([this](const SseEvent& ev) { OnSse(ev); }) {}

  AttemptOutcome Run(const ChatRequest& req);

 private:
  static size_t ReadCb(char* buf, size_t size, size_t n, void* self);
  static size_t WriteCb(char* buf, size_t size, size_t n, void* self);
  static size_t HeaderCb(char* buf, size_t size, size_t n, void* self);
  static int ProgressCb(void* self, curl_off_t, curl_off_t, curl_off_t, curl_off_t);
  static int SeekCb(void* self, curl_off_t offset, int origin);

  void OnDelta(const LlmEvent& ev) {
    if (ttft_ms_ < 0) ttft_ms_ = MsSince(start_);
    if (on_event_) on_event_(ev);
  }
  void OnSse(const SseEvent& ev) {
    if (!stream_error_.ok()) return;
    Status st = assembler_.OnData(ev.data);
    if (!st.ok()) stream_error_ = std::move(st);
  }
  bool Cancelled() const { return cancel_ && cancel_->IsCancelled(); }
  AttemptOutcome Classify(CURLcode rc, bool cancelled, bool stalled, bool timed_out);

  const ModelProfile& profile_;
  bool stream_;
  CancelToken* cancel_;
  const LlmEventFn& on_event_;
  StreamAssembler assembler_;
  SseParser parser_;
  std::unique_ptr<RequestBody> body_;
  CURL* easy_ = nullptr;
  SteadyClock::time_point start_ = SteadyClock::now();
  SteadyClock::time_point last_activity_ = start_;
  int64_t ttft_ms_ = -1;
  long http_status_ = 0;
  bool json_reply_ = false;  // 2xx with a JSON (not SSE) content type
  std::string err_body_;     // body of a non-2xx reply (capped)
  std::string json_body_;    // body of a non-streamed reply
  int64_t retry_after_ms_ = -1;
  Status stream_error_;
};

size_t Transfer::ReadCb(char* buf, size_t size, size_t n, void* self) {
  auto* t = static_cast<Transfer*>(self);
  t->last_activity_ = SteadyClock::now();
  if (t->Cancelled()) return CURL_READFUNC_ABORT;
  size_t k = t->body_->Read(buf, size * n);
  if (!t->body_->error().ok()) return CURL_READFUNC_ABORT;
  return k;
}

size_t Transfer::HeaderCb(char* buf, size_t size, size_t n, void* self) {
  auto* t = static_cast<Transfer*>(self);
  std::string_view line(buf, size * n);
  t->last_activity_ = SteadyClock::now();
  if (line.starts_with("HTTP/")) {  // a new response (after 100-continue or a redirect)
    t->retry_after_ms_ = -1;
    t->json_reply_ = false;
    return size * n;
  }
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return size * n;
  std::string name = Lower(Trim(line.substr(0, colon), kHttpSpace));
  std::string_view value = Trim(line.substr(colon + 1), kHttpSpace);
  if (name == "retry-after-ms") {
    t->retry_after_ms_ = std::atoll(std::string(value).c_str());
  } else if (name == "retry-after" && t->retry_after_ms_ < 0 && !value.empty() &&
             std::isdigit(static_cast<unsigned char>(value.front()))) {
    // Delta-seconds form only; an HTTP-date falls back to our backoff.
    t->retry_after_ms_ = static_cast<int64_t>(std::atof(std::string(value).c_str()) * 1000);
  } else if (name == "content-type") {
    t->json_reply_ = Lower(value).find("application/json") != std::string::npos;
  }
  return size * n;
}

size_t Transfer::WriteCb(char* buf, size_t size, size_t n, void* self) {
  auto* t = static_cast<Transfer*>(self);
  size_t len = size * n;
  t->last_activity_ = SteadyClock::now();
  if (t->Cancelled()) return 0;
  if (t->http_status_ == 0) curl_easy_getinfo(t->easy_, CURLINFO_RESPONSE_CODE, &t->http_status_);
  std::string_view bytes(buf, len);
  if (t->http_status_ < 200 || t->http_status_ >= 300) {
    t->err_body_.append(
        bytes.substr(0, kMaxErrorBody - std::min(kMaxErrorBody, t->err_body_.size())));
    return len;
  }
  if (t->stream_ && !t->json_reply_) {
    t->parser_.Feed(bytes);
    return t->stream_error_.ok() ? len : 0;
  }
  if (t->json_body_.size() + len > kMaxJsonBody) return 0;
  t->json_body_.append(bytes);
  return len;
}

int Transfer::ProgressCb(void* self, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<Transfer*>(self)->Cancelled() ? 1 : 0;
}

// libcurl rewinds the body to resend it when a reused connection turns out
// closed by the server; only a rewind to the start is ever asked for.
int Transfer::SeekCb(void* self, curl_off_t offset, int origin) {
  if (offset != 0 || origin != SEEK_SET) return CURL_SEEKFUNC_CANTSEEK;
  return static_cast<Transfer*>(self)->body_->Rewind().ok() ? CURL_SEEKFUNC_OK : CURL_SEEKFUNC_FAIL;
}

AttemptOutcome Transfer::Run(const ChatRequest& req) {
  RequestBodySpec spec;
  spec.model = profile_.model;
  spec.stream = stream_;
  spec.params = req.params;
  spec.tools_path = req.tools_path;
  spec.tools_json = req.tools_json;
  spec.messages_path = req.messages_path;
  spec.messages_known_bytes = req.messages_known_bytes;
  spec.request_json_path = req.request_json_path;
  auto body = RequestBody::Open(spec);
  if (!body.ok()) return Fail(LlmErrorKind::kTerminal, body.status());
  body_ = std::move(body).value();

  ThreadCurl::Handles handles = t_curl.Acquire();
  if (!handles.ok()) {
    t_curl.Release(handles);
    return Fail(LlmErrorKind::kRetryable, Internal("curl initialisation failed"));
  }
  easy_ = handles.easy;
  CURLM* multi = handles.multi;
  std::string url = profile_.base_url;
  while (!url.empty() && url.back() == '/') url.pop_back();
  url += "/chat/completions";

  curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, "Content-Type: application/json");
  headers = curl_slist_append(headers,
                              stream_ ? "Accept: text/event-stream" : "Accept: application/json");
  headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip
  if (!profile_.api_key.empty()) {
    headers = curl_slist_append(headers, ("Authorization: Bearer " + profile_.api_key).c_str());
  }
  for (const auto& [k, v] : profile_.extra_headers) {
    headers = curl_slist_append(headers, (k + ": " + v).c_str());
  }

  curl_easy_setopt(easy_, CURLOPT_URL, url.c_str());
  curl_easy_setopt(easy_, CURLOPT_POST, 1L);
  curl_easy_setopt(easy_, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(easy_, CURLOPT_READFUNCTION, &Transfer::ReadCb);
  curl_easy_setopt(easy_, CURLOPT_READDATA, this);
  curl_easy_setopt(easy_, CURLOPT_SEEKFUNCTION, &Transfer::SeekCb);
  curl_easy_setopt(easy_, CURLOPT_SEEKDATA, this);
  curl_easy_setopt(easy_, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body_->size()));
  curl_easy_setopt(easy_, CURLOPT_WRITEFUNCTION, &Transfer::WriteCb);
  curl_easy_setopt(easy_, CURLOPT_WRITEDATA, this);
  curl_easy_setopt(easy_, CURLOPT_HEADERFUNCTION, &Transfer::HeaderCb);
  curl_easy_setopt(easy_, CURLOPT_HEADERDATA, this);
  curl_easy_setopt(easy_, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(easy_, CURLOPT_XFERINFOFUNCTION, &Transfer::ProgressCb);
  curl_easy_setopt(easy_, CURLOPT_XFERINFODATA, this);
  curl_easy_setopt(easy_, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy_, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(profile_.connect_timeout_ms));
  curl_easy_setopt(easy_, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(easy_, CURLOPT_UPLOAD_BUFFERSIZE, 64L * 1024);
  curl_multi_add_handle(multi, easy_);

  bool cancelled = false, stalled = false, timed_out = false;
  int running = 1;
  while (true) {
    CURLMcode mc = curl_multi_perform(multi, &running);
    if (mc != CURLM_OK || running == 0) break;
    if (Cancelled()) {
      cancelled = true;
      break;
    }
    if (profile_.idle_timeout_ms > 0 &&
        std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - last_activity_)
                .count() > profile_.idle_timeout_ms) {
      stalled = true;
      break;
    }
    if (profile_.total_timeout_ms > 0 && MsSince(start_) > profile_.total_timeout_ms) {
      timed_out = true;
      break;
    }
    curl_multi_poll(multi, nullptr, 0, kPollMs, nullptr);
  }
  CURLcode rc = CURLE_OK;
  int left = 0;
  while (CURLMsg* msg = curl_multi_info_read(multi, &left)) {
    if (msg->msg == CURLMSG_DONE) rc = msg->data.result;
  }
  if (Cancelled()) cancelled = true;
  curl_easy_getinfo(easy_, CURLINFO_RESPONSE_CODE, &http_status_);
  AttemptOutcome out = Classify(rc, cancelled, stalled, timed_out);
  curl_multi_remove_handle(multi, easy_);  // a finished transfer's connection stays cached
  t_curl.Release(handles);
  curl_slist_free_all(headers);
  easy_ = nullptr;
  return out;
}

AttemptOutcome Transfer::Classify(CURLcode rc, bool cancelled, bool stalled, bool timed_out) {
  int http = static_cast<int>(http_status_);
  if (cancelled)
    return Fail(LlmErrorKind::kCancelled, Status(StatusCode::kCancelled, "LLM call cancelled"),
                http);
  if (!body_->error().ok()) return Fail(LlmErrorKind::kTerminal, body_->error(), http);
  if (http != 0 && (http < 200 || http >= 300)) {
    std::string msg = fmt::format("HTTP {} from {}: {}", http, profile_.base_url,
                                  ValidUtf8(Utf8Prefix(err_body_, 500)));
    if (IsContextLengthError(http, err_body_)) {
      return Fail(LlmErrorKind::kContextLengthExceeded, Status(StatusCode::kResourceExhausted, msg),
                  http);
    }
    if (http == 429 || http == 408 || http >= 500) {
      AttemptOutcome o = Fail(LlmErrorKind::kRetryable, Unavailable(msg), http);
      o.retry_after_ms = retry_after_ms_;
      return o;
    }
    return Fail(LlmErrorKind::kTerminal, InvalidArgument(msg), http);
  }
  if (http != 0 && (!stream_ || json_reply_)) {
    if (rc != CURLE_OK || stalled || timed_out) {
      return Fail(LlmErrorKind::kRetryable, Unavailable("response cut short"), http);
    }
    Json j = Json::parse(json_body_, nullptr, false);
    if (j.is_discarded())
      return Fail(LlmErrorKind::kRetryable, Unavailable("response is not JSON"), http);
    Status st = assembler_.ApplyCompletion(j);
    if (!st.ok()) return Fail(LlmErrorKind::kRetryable, st, http);
  } else if (http != 0) {
    parser_.Finish();
    if (!stream_error_.ok()) return Fail(LlmErrorKind::kRetryable, stream_error_, http);
    // A finish_reason means the answer is whole even if the usage/[DONE] tail was lost.
    if (!assembler_.has_finish()) {
      std::string why = stalled ? fmt::format("stream stalled for {} ms", profile_.idle_timeout_ms)
                        : timed_out      ? "attempt timed out"
                        : rc != CURLE_OK ? fmt::format("stream cut: {}", curl_easy_strerror(rc))
                                         : std::string("stream ended before finish_reason");
      return Fail(LlmErrorKind::kRetryable, Unavailable(why), http);
    }
  } else {
    // No HTTP response at all: connection refused/reset, DNS, timeout.
    std::string why = stalled     ? fmt::format("no response for {} ms", profile_.idle_timeout_ms)
                      : timed_out ? std::string("attempt timed out")
                                  : std::string(curl_easy_strerror(rc));
    bool terminal = rc == CURLE_URL_MALFORMAT || rc == CURLE_UNSUPPORTED_PROTOCOL;
    return Fail(terminal ? LlmErrorKind::kTerminal : LlmErrorKind::kRetryable,
                terminal ? InvalidArgument(why, "llm.base_url")
                         : Unavailable(fmt::format("{}: {}", profile_.base_url, why)),
                0);
  }
  AttemptOutcome o;
  o.http_status = http;
  o.response = assembler_.Take();
  o.response.usage.ttft_ms = ttft_ms_;
  return o;
}

std::once_flag g_curl_init;

}  // namespace

bool IsContextLengthError(int http_status, std::string_view body) {
  if (http_status < 400) return false;
  std::string b = Lower(body);
  for (const char* needle :
       {"context_length_exceeded", "exceed_context_size_error", "maximum context length",
        "exceeds the available context size", "context size has been exceeded",
        "prompt is too long", "input is too large", "too many tokens"}) {
    if (b.find(needle) != std::string::npos) return true;
  }
  return false;
}

int64_t BackoffDelayMs(const ModelProfile& p, int retry, double unit_random) {
  double base = static_cast<double>(p.backoff_base_ms) * std::pow(2.0, std::max(0, retry - 1));
  base = std::min(base, static_cast<double>(p.backoff_max_ms));
  double factor = 1.0 + p.backoff_jitter * (2.0 * unit_random - 1.0);
  return std::max<int64_t>(0, static_cast<int64_t>(base * factor));
}

std::map<std::string, ModelProfile> ProfilesFromConfig(const Config& cfg) {
  std::map<std::string, ModelProfile> out;
  out["default"] = ProfileFromConfig(cfg.llm);
  for (const auto& [name, llm] : cfg.llm_profiles) {
    ModelProfile p = ProfileFromConfig(llm);
    p.name = name;
    out[name] = p;
  }
  return out;
}

ModelProfile ProfileFromConfig(const LlmConfig& cfg) {
  ModelProfile p;
  p.base_url = cfg.base_url;
  p.api_key = cfg.api_key;
  p.api_key_env = cfg.api_key_env;
  p.model = cfg.model;
  p.context_length = cfg.context_length;
  p.stream = cfg.stream;
  p.vision = cfg.vision;
  p.extra_headers = cfg.headers;
  p.connect_timeout_ms = cfg.connect_timeout_ms;
  p.idle_timeout_ms = cfg.idle_timeout_ms;
  p.total_timeout_ms = cfg.total_timeout_ms;
  p.max_attempts = cfg.max_attempts;
  return p;
}

OpenAiClient::OpenAiClient(ModelProfile profile) : profile_(std::move(profile)) {
  std::call_once(g_curl_init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  if (profile_.api_key.empty() && !profile_.api_key_env.empty()) {
    if (const char* v = std::getenv(profile_.api_key_env.c_str())) profile_.api_key = v;
  }
  profile_.max_attempts = std::max(1, profile_.max_attempts);
}

LlmCallResult OpenAiClient::Chat(const ChatRequest& request, const LlmEventFn& on_event,
                                 CancelToken* cancel) {
  auto start = SteadyClock::now();
  bool stream = request.stream.value_or(profile_.stream);
  thread_local std::mt19937_64 rng{std::random_device{}()};
  LlmCallResult result;
  for (int attempt = 1;; ++attempt) {
    result.attempts = attempt;
    Transfer transfer(profile_, stream, on_event, cancel);
    AttemptOutcome out = transfer.Run(request);
    result.http_status = out.http_status;
    if (out.kind == LlmErrorKind::kNone) {
      result.status = Status::Ok();
      result.error_kind = LlmErrorKind::kNone;
      result.response = std::move(out.response);
      LlmUsage& u = result.response.usage;
      u.total_ms = MsSince(start);
      spdlog::info(
          "prompt_cache reused={} prompt={} pct={:.1f} completion={} ttft_ms={} "
          "total_ms={} model={} attempts={}",
          u.cached_tokens, u.prompt_tokens, u.CachedPct(), u.completion_tokens, u.ttft_ms,
          u.total_ms, profile_.model, attempt);
      return result;
    }
    result.status = out.status;
    result.error_kind = out.kind;
    if (out.kind != LlmErrorKind::kRetryable || attempt >= profile_.max_attempts) {
      spdlog::warn("llm call failed kind={} attempts={} error={}", LlmErrorKindName(out.kind),
                   attempt, out.status.ToString());
      return result;
    }
    int64_t delay =
        out.retry_after_ms >= 0
            ? std::min(out.retry_after_ms, profile_.max_retry_after_ms)
            : BackoffDelayMs(profile_, attempt, std::uniform_real_distribution<double>(0, 1)(rng));
    spdlog::warn("llm retry attempt={} delay_ms={} error={}", attempt, delay,
                 out.status.ToString());
    if (on_event) {
      LlmEvent ev;
      ev.kind = LlmEvent::Kind::kRetry;
      ev.attempt = attempt;
      ev.delay_ms = delay;
      ev.error = out.status.ToString();
      on_event(ev);
    }
    bool cancelled = cancel
                         ? cancel->WaitFor(std::chrono::milliseconds(delay))
                         : (std::this_thread::sleep_for(std::chrono::milliseconds(delay)), false);
    if (cancelled) {
      result.status = Status(StatusCode::kCancelled, "LLM call cancelled during retry backoff");
      result.error_kind = LlmErrorKind::kCancelled;
      return result;
    }
  }
}

}  // namespace maestro::llm
