#include "llm/llm_client.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <random>
#include <thread>

#include "core/http_client.h"
#include "core/sse_parser.h"
#include "core/strings.h"
#include "core/utf8.h"
#include "llm/wire.h"

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

// One attempt: the request body, the reply's parsing and the attempt's
// classification. The transfer itself is core's HttpClient (Exchange): this
// class only reads what it delivers; the provider's shapes are its
// WireFormat's.
class Transfer {
 public:
  Transfer(const ModelProfile& p, const WireFormat& wire, const HttpClient& http, bool stream,
           const LlmEventFn& on_event, CancelToken* cancel)
      : profile_(p),
        wire_(wire),
        http_(http),
        stream_(stream),
        cancel_(cancel),
        on_event_(on_event),
        reader_(wire.NewReader([this](const LlmEvent& ev) { OnDelta(ev); })),
        parser_([this](const SseEvent& ev) { OnSse(ev); }) {}

  AttemptOutcome Run(const ChatRequest& req);

 private:
  bool OnHead(const HttpReply& head);
  bool OnBody(std::string_view bytes);
  void OnDelta(const LlmEvent& ev) {
    if (ttft_ms_ < 0) ttft_ms_ = MsSince(start_);
    if (on_event_) on_event_(ev);
  }
  void OnSse(const SseEvent& ev) {
    if (!stream_error_.ok()) return;
    Status st = reader_->OnEvent(ev);
    if (!st.ok()) stream_error_ = std::move(st);
  }
  bool Cancelled() const { return cancel_ && cancel_->IsCancelled(); }
  AttemptOutcome Classify(const HttpOutcome& x);

  const ModelProfile& profile_;
  const WireFormat& wire_;
  const HttpClient& http_;
  bool stream_;
  CancelToken* cancel_;
  const LlmEventFn& on_event_;
  std::unique_ptr<ReplyReader> reader_;
  SseParser parser_;
  std::unique_ptr<LlmBody> body_;
  SteadyClock::time_point start_ = SteadyClock::now();
  int64_t ttft_ms_ = -1;
  int http_status_ = 0;
  bool json_reply_ = false;  // 2xx with a JSON (not SSE) content type
  std::string err_body_;     // body of a non-2xx reply (capped)
  std::string json_body_;    // body of a non-streamed reply
  int64_t retry_after_ms_ = -1;
  Status stream_error_;
};

// The final response's head: its status, Retry-After and content type.
bool Transfer::OnHead(const HttpReply& head) {
  http_status_ = head.status;
  for (const auto& [key, value] : head.headers) {
    std::string name = Lower(key);
    if (name == "retry-after-ms") {
      retry_after_ms_ = std::atoll(value.c_str());
    } else if (name == "retry-after" && retry_after_ms_ < 0 && !value.empty() &&
               std::isdigit(static_cast<unsigned char>(value.front()))) {
      // Delta-seconds form only; an HTTP-date falls back to our backoff.
      retry_after_ms_ = static_cast<int64_t>(std::atof(value.c_str()) * 1000);
    } else if (name == "content-type") {
      json_reply_ = Lower(value).find("application/json") != std::string::npos;
    }
  }
  return true;
}

// A piece of the body: an error text, SSE, or a whole JSON answer. False
// stops the transfer (cancelled, a broken stream, an oversized answer).
bool Transfer::OnBody(std::string_view bytes) {
  if (Cancelled()) return false;
  if (http_status_ < 200 || http_status_ >= 300) {
    err_body_.append(bytes.substr(0, kMaxErrorBody - std::min(kMaxErrorBody, err_body_.size())));
    return true;
  }
  if (stream_ && !json_reply_) {
    parser_.Feed(bytes);
    return stream_error_.ok();
  }
  if (json_body_.size() + bytes.size() > kMaxJsonBody) return false;
  json_body_.append(bytes);
  return true;
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
  auto body = wire_.OpenBody(profile_, spec);
  if (!body.ok()) return Fail(LlmErrorKind::kTerminal, body.status());
  body_ = std::move(body).value();

  // The body streams from the conversation file; a resend (a kept-alive
  // connection the server had closed) rewinds it.
  HttpBodySource source;
  source.size = body_->size();
  source.read = [this](char* buf, size_t n) -> Result<size_t> {
    if (Cancelled()) return Status(StatusCode::kCancelled, "LLM call cancelled");
    size_t k = body_->Read(buf, n);
    if (!body_->error().ok()) return body_->error();
    return k;
  };
  source.rewind = [this] { return body_->Rewind(); };

  HttpCall call;
  call.method = "POST";
  call.url = wire_.Url(profile_, stream_);
  call.headers = {{"Content-Type", "application/json"},
                  {"Accept", stream_ ? "text/event-stream" : "application/json"}};
  wire_.AddHeaders(profile_, &call.headers);
  for (const auto& [k, v] : profile_.extra_headers) {
    // An empty value has always meant "send no such header" here (curl's
    // "Name: "); HttpClient would send it empty ("Name;").
    if (!v.empty()) call.headers.emplace_back(k, v);
  }
  call.body_source = &source;
  call.on_head = [this](const HttpReply& head) { return OnHead(head); };
  call.on_chunk = [this](std::string_view bytes) { return OnBody(bytes); };
  call.should_stop = [this] { return Cancelled(); };
  HttpOutcome x = http_.Exchange(call);
  if (http_status_ == 0) http_status_ = x.reply.status;  // a head cut before its end
  return Classify(x);
}

AttemptOutcome Transfer::Classify(const HttpOutcome& x) {
  const int http = http_status_;
  const bool stalled = x.end == HttpEnd::kIdleTimeout;
  const bool timed_out = x.end == HttpEnd::kTotalTimeout;
  if (Cancelled())
    return Fail(LlmErrorKind::kCancelled, Status(StatusCode::kCancelled, "LLM call cancelled"),
                http);
  if (!body_->error().ok()) return Fail(LlmErrorKind::kTerminal, body_->error(), http);
  if (http != 0 && (http < 200 || http >= 300)) {
    std::string msg = fmt::format("HTTP {} from {}: {}", http, profile_.base_url,
                                  ValidUtf8(Utf8Prefix(err_body_, 500)));
    switch (wire_.ClassifyHttpError(http, err_body_)) {
      case LlmErrorKind::kContextLengthExceeded:
        return Fail(LlmErrorKind::kContextLengthExceeded,
                    Status(StatusCode::kResourceExhausted, msg), http);
      case LlmErrorKind::kRetryable: {
        AttemptOutcome o = Fail(LlmErrorKind::kRetryable, Unavailable(msg), http);
        o.retry_after_ms = retry_after_ms_;
        return o;
      }
      default:
        return Fail(LlmErrorKind::kTerminal, InvalidArgument(msg), http);
    }
  }
  if (http != 0 && (!stream_ || json_reply_)) {
    if (x.end != HttpEnd::kComplete) {
      return Fail(LlmErrorKind::kRetryable, Unavailable("response cut short"), http);
    }
    Json j = Json::parse(json_body_, nullptr, false);
    if (j.is_discarded())
      return Fail(LlmErrorKind::kRetryable, Unavailable("response is not JSON"), http);
    Status st = reader_->OnJson(j);
    if (!st.ok()) {
      return Fail(st.code() == StatusCode::kInvalidArgument ? LlmErrorKind::kTerminal
                                                            : LlmErrorKind::kRetryable,
                  st, http);
    }
  } else if (http != 0) {
    parser_.Finish();
    // A provider's in-stream error that names the request as wrong (the
    // reader's InvalidArgument: Anthropic's invalid_request_error, Gemini's
    // INVALID_ARGUMENT) fails the same way again: terminal, not retried.
    if (!stream_error_.ok()) {
      return Fail(stream_error_.code() == StatusCode::kInvalidArgument ? LlmErrorKind::kTerminal
                                                                       : LlmErrorKind::kRetryable,
                  stream_error_, http);
    }
    // A finish reason means the answer is whole even if the usage tail was lost.
    if (!reader_->complete()) {
      std::string why = stalled ? fmt::format("stream stalled for {} ms", profile_.idle_timeout_ms)
                        : timed_out ? "attempt timed out"
                        : x.end != HttpEnd::kComplete
                            ? fmt::format("stream cut: {}", x.transport_error)
                            : std::string("stream ended before finish_reason");
      return Fail(LlmErrorKind::kRetryable, Unavailable(why), http);
    }
  } else {
    // No HTTP response at all: connection refused/reset, DNS, timeout.
    std::string why = stalled     ? fmt::format("no response for {} ms", profile_.idle_timeout_ms)
                      : timed_out ? std::string("attempt timed out")
                                  : x.transport_error;
    bool terminal = x.status.code() == StatusCode::kInvalidArgument;  // a bad base_url
    return Fail(terminal ? LlmErrorKind::kTerminal : LlmErrorKind::kRetryable,
                terminal ? InvalidArgument(why, "llm.base_url")
                         : Unavailable(fmt::format("{}: {}", profile_.base_url, why)),
                0);
  }
  AttemptOutcome o;
  o.http_status = http;
  o.response = reader_->Take();
  o.response.usage.ttft_ms = ttft_ms_;
  return o;
}

// The transfer settings of a profile: an internal call (no egress policy:
// the operator configured the URL), its connection kept between calls, the
// environment's proxy honoured, cancel and stall checked every 25 ms.
HttpClientOptions TransferOptions(const ModelProfile& p) {
  HttpClientOptions o;
  o.connect_timeout_ms = p.connect_timeout_ms;
  o.idle_timeout_ms = p.idle_timeout_ms;
  o.total_timeout_ms = p.total_timeout_ms;
  o.poll_ms = kPollMs;
  o.keep_connections = true;
  o.env_proxy = true;
  return o;
}

}  // namespace

bool IsContextLengthError(int http_status, std::string_view body) {
  if (http_status < 400) return false;
  std::string b = Lower(body);
  for (const char* needle :
       {"context_length_exceeded", "exceed_context_size_error", "maximum context length",
        "exceeds the available context size", "context size has been exceeded",
        "prompt is too long", "input is too large", "too many tokens",
        "exceeds the maximum number of tokens"}) {
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
  out["default"] = cfg.llm;
  out["default"].name = "default";
  for (const auto& [name, profile] : cfg.llm_profiles) {
    ModelProfile& p = out[name] = profile;
    p.name = name;
  }
  return out;
}

HttpLlmClient::HttpLlmClient(ModelProfile profile)
    : profile_(std::move(profile)),
      wire_(WireFormatFor(profile_)),
      http_(TransferOptions(profile_)) {
  if (profile_.api_key.empty() && !profile_.api_key_env.empty()) {
    if (const char* v = std::getenv(profile_.api_key_env.c_str())) profile_.api_key = v;
  }
  profile_.max_attempts = std::max(1, profile_.max_attempts);
}

LlmCallResult HttpLlmClient::Chat(const ChatRequest& request, const LlmEventFn& on_event,
                                  CancelToken* cancel) {
  auto start = SteadyClock::now();
  bool stream = request.stream.value_or(profile_.stream);
  thread_local std::mt19937_64 rng{std::random_device{}()};
  LlmCallResult result;
  for (int attempt = 1;; ++attempt) {
    result.attempts = attempt;
    Transfer transfer(profile_, *wire_, http_, stream, on_event, cancel);
    AttemptOutcome out = transfer.Run(request);
    result.http_status = out.http_status;
    if (out.kind == LlmErrorKind::kNone) {
      result.status = Status::Ok();
      result.error_kind = LlmErrorKind::kNone;
      result.response = std::move(out.response);
      LlmUsage& u = result.response.usage;
      u.total_ms = MsSince(start);
      spdlog::info(
          "prompt_cache reused={} written={} prompt={} pct={:.1f} completion={} ttft_ms={} "
          "total_ms={} provider={} model={} attempts={}",
          u.cached_tokens, u.cache_write_tokens, u.prompt_tokens, u.CachedPct(),
          u.completion_tokens, u.ttft_ms, u.total_ms, profile_.provider, profile_.model, attempt);
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
