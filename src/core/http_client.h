// HttpClient: the one place where maestro speaks HTTP as a client (libcurl).
//
// What: a synchronous request → reply call, and a streaming variant that hands
// the reply body to a callback chunk by chunk (SSE, long polls) and lets the
// callback stop the transfer. A reply with any HTTP status, 4xx and 5xx
// included, is a reply, not an error; a Status means no (complete) reply:
//   kUnavailable       "cannot reach <url>: <curl error>" (connection refused,
//                      DNS, reset before any reply) or the link broke mid-reply
//   kDeadlineExceeded  connect, total or idle timeout elapsed
//   kInvalidArgument   malformed URL or a scheme other than http/https
//   kResourceExhausted a buffered reply body above max_body_bytes
// URLs in messages have their user:password@ part removed.
//
// Exchange() is the general form both are made of, for a caller that
// classifies failures itself (the LLM client's retries, src/llm): a request
// body pulled from a callback while it is sent (a conversation file, never
// held in memory), and an HttpOutcome that says how the exchange ended (idle
// or total timeout, stopped, failed with libcurl's words) beside the reply as
// far as it came. Every call of every form runs through one libcurl driver.
//
// On someone's behalf (HttpClientOptions::egress set: A2A push, webhooks,
// MCP HTTP servers) the URL first goes through EgressPolicy::Check
// (core/egress.h; a refusal is its kInvalidArgument, field "url", and no
// connection is made) and the connection is pinned to the checked address:
// CURLOPT_CONNECT_TO names it as a numeric address (no second lookup, so no
// DNS rebinding), and the socket-open callback refuses any other address
// curl might try. Without a policy (the CLI, internal calls: the LLM, OTLP)
// URLs go as given. Redirects are not followed; proxies from the environment
// (http_proxy, ...) are used only with env_proxy (the LLM client: an operator
// may reach the model's server through one), never with a policy.
//
// Connections: by default every call opens its own. keep_connections (internal
// calls only; ignored with an egress policy) keeps the curl handles of
// finished calls on the client, so the next call reuses the kept-alive
// connection (an agent loop's requests to its model server pay one TCP
// connect, not one each); a kept connection the server has meanwhile closed
// is replaced and the request resent, its body rewound (HttpBodySource).
//
// Where it sits: in core because the CLI (`maestro task ... --server`), the
// webhook dispatcher (src/notify) and the LLM client (src/llm) all need it,
// core is the lowest module they depend on, and it needs nothing above core
// (no store, no engine); libcurl is a PRIVATE dependency of maestro_core, so
// no curl type appears here.
//
// Thread safety: apart from the immutable options, the only state is the pool
// of kept handles (keep_connections), behind a mutex; a call takes a free pair
// or makes one, so one HttpClient may be used from many threads at once, and
// copies share the pool. Callbacks run on the calling thread, inside the call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/egress.h"
#include "core/status.h"

namespace maestro {

// Request or reply headers in order, as (name, value); names are sent as given.
using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct HttpClientOptions {
  int64_t connect_timeout_ms = 10'000;  // name lookup + TCP (+ TLS) connect
  int64_t total_timeout_ms = 0;         // the whole exchange; 0 = no limit
  int64_t idle_timeout_ms = 0;          // after connecting, no byte moved for this long; 0 = none
  // A buffered reply body (Request, or Exchange without on_chunk) above this
  // is an error.
  size_t max_body_bytes = 64 * 1024 * 1024;
  // Set for every request made on someone's behalf (see above); null: an
  // internal call, not checked.
  std::shared_ptr<const EgressPolicy> egress;
  // (Below the fields above, so their positional initialisers stay valid.)
  int64_t poll_ms = 50;           // longest wait between checks of should_stop and the idle timeout
  bool keep_connections = false;  // reuse connections across calls (see above)
  bool env_proxy = false;         // honour http_proxy/https_proxy/no_proxy (no policy only)
};

struct HttpReply {
  int status = 0;        // HTTP status of the final response
  HttpHeaders headers;   // of the final response
  std::string body;      // Request(): the whole body; Stream(): empty
  bool stopped = false;  // Stream(): a callback ended the transfer early

  // The first header named `name` (ASCII case-insensitive), or "" if none.
  std::string Header(std::string_view name) const;
};

// Called once the final response's status and headers are in (body empty);
// return false to stop before the body.
using HttpHeadFn = std::function<bool(const HttpReply& head)>;
// Called with each piece of the final response's body as it arrives; return
// false to stop the transfer (the call then returns the reply, stopped=true).
using HttpChunkFn = std::function<bool(std::string_view chunk)>;
// Polled at least every poll_ms (50 ms) while a transfer runs, also while
// nothing arrives; true ends it (the call returns the reply so far,
// stopped=true). Lets a waiter abandon a silent stream (a cancel, its own
// deadline).
using HttpStopFn = std::function<bool()>;

// A request body produced while it is sent: `size` bytes pulled by `read`.
struct HttpBodySource {
  uint64_t size = 0;  // exact; sent as Content-Length
  // Copies up to `n` next bytes into `buf` and returns how many (0 only at
  // the end). An error aborts the transfer and is the call's Status.
  std::function<Result<size_t>(char* buf, size_t n)> read;
  // Starts the body over from its first byte (curl resends a request on a
  // fresh connection when a kept-alive one turns out closed). Empty: cannot,
  // and such a resend fails the call.
  std::function<Status()> rewind;
};

// One exchange for HttpClient::Exchange.
struct HttpCall {
  std::string method = "GET";  // as Request's `method`
  std::string url;
  HttpHeaders headers;                          // give the body's Content-Type here
  std::string_view body;                        // sent as Request's; must outlive the call
  const HttpBodySource* body_source = nullptr;  // instead of `body`; must outlive the call
  HttpHeadFn on_head;                           // may be empty
  HttpChunkFn on_chunk;    // empty: the body is buffered into reply.body (max_body_bytes)
  HttpStopFn should_stop;  // may be empty
};

// How an exchange ended.
enum class HttpEnd {
  kComplete,      // the whole reply arrived
  kStopped,       // a callback ended it; the reply so far, stopped=true
  kIdleTimeout,   // connected, then no byte moved for idle_timeout_ms
  kTotalTimeout,  // total_timeout_ms elapsed
  kFailed,        // anything else: unreachable, connect timeout, cut, refused, bad URL, too big
};

struct HttpOutcome {
  HttpEnd end = HttpEnd::kFailed;
  // What Request/Stream return for this end: OK for kComplete and kStopped,
  // else the error of the list above (or the body source's error).
  Status status;
  // As far as it came: status 0 when no response began; a buffered body may
  // be partial unless kComplete.
  HttpReply reply;
  // libcurl's words for a failure ("Timeout was reached", "Failure when
  // receiving data from the peer"); "" for kComplete and kStopped.
  std::string transport_error;
};

struct HttpKeptHandles;  // keep_connections: the curl handles of finished calls (.cc)

class HttpClient {
 public:
  using HeadFn = HttpHeadFn;
  using ChunkFn = HttpChunkFn;
  using StopFn = HttpStopFn;

  explicit HttpClient(HttpClientOptions options = {});

  // `method` is GET, POST, PUT, DELETE, ... (HEAD reads no body). `body` is
  // sent when non-empty, or always for POST/PUT/PATCH; give its Content-Type
  // in `headers`.
  Result<HttpReply> Request(std::string_view method, const std::string& url,
                            const HttpHeaders& headers = {}, std::string_view body = {}) const;

  // As Request, but the body goes to `on_chunk` instead of HttpReply::body
  // (no size limit). Any callback may be empty; an empty `on_chunk` drops
  // the body.
  Result<HttpReply> Stream(std::string_view method, const std::string& url,
                           const HttpHeaders& headers, std::string_view body, const HeadFn& on_head,
                           const ChunkFn& on_chunk, const StopFn& should_stop = {}) const;

  // The general form: never an error Status of its own; everything is in
  // the outcome. A callback's stop is HttpEnd::kStopped with an OK status.
  HttpOutcome Exchange(const HttpCall& call) const;

  const HttpClientOptions& options() const { return options_; }

 private:
  HttpClientOptions options_;
  std::shared_ptr<HttpKeptHandles> kept_;  // null without keep_connections
};

// `text` percent-encoded for use in a URL path segment or query value (every
// byte but A-Z a-z 0-9 - . _ ~ becomes %XX).
std::string UrlEncode(std::string_view text);

// `url` without a user:password@ part (for messages and logs).
std::string RedactUrl(const std::string& url);

}  // namespace maestro
