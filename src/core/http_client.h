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
// On someone's behalf (HttpClientOptions::egress set: A2A push, webhooks,
// MCP HTTP servers) the URL first goes through EgressPolicy::Check
// (core/egress.h; a refusal is its kInvalidArgument, field "url", and no
// connection is made) and the connection is pinned to the checked address:
// CURLOPT_CONNECT_TO names it as a numeric address (no second lookup, so no
// DNS rebinding), and the socket-open callback refuses any other address
// curl might try. Without a policy (the CLI, internal calls) URLs go as given.
//
// Where it sits: in core because the CLI (`maestro task ... --server`) and the
// webhook dispatcher (src/notify) both need it, core is the lowest module both
// depend on, and it needs nothing above core (no store, no engine); libcurl is
// a PRIVATE dependency of maestro_core, so no curl type appears here. The LLM client
// (src/llm) keeps its own curl transfer: it needs request-body streaming from
// files, cancellation and retry classification that this small API leaves out.
// Proxies from the environment (http_proxy, ...) are not used; redirects are not
// followed.
//
// Thread safety: stateless apart from the immutable options; every call uses
// its own curl handles, so one HttpClient may be used from many threads at once.
// Callbacks run on the calling thread, inside the call.
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
  size_t max_body_bytes = 64 * 1024 * 1024;  // Request() only: a bigger reply body is an error
  // Set for every request made on someone's behalf (see above); null: an
  // internal call, not checked.
  std::shared_ptr<const EgressPolicy> egress;
};

struct HttpReply {
  int status = 0;        // HTTP status of the final response
  HttpHeaders headers;   // of the final response
  std::string body;      // Request(): the whole body; Stream(): empty
  bool stopped = false;  // Stream(): a callback ended the transfer early

  // The first header named `name` (ASCII case-insensitive), or "" if none.
  std::string Header(std::string_view name) const;
};

class HttpClient {
 public:
  // Called once the final response's status and headers are in (body empty);
  // return false to stop before the body.
  using HeadFn = std::function<bool(const HttpReply& head)>;
  // Called with each piece of the final response's body as it arrives; return
  // false to stop the transfer (the call then returns the reply, stopped=true).
  using ChunkFn = std::function<bool(std::string_view chunk)>;
  // Polled at least every 50 ms while a transfer runs, also while nothing
  // arrives; true ends it (the call returns the reply so far, stopped=true).
  // Lets a waiter abandon a silent stream (a cancel, its own deadline).
  using StopFn = std::function<bool()>;

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

  const HttpClientOptions& options() const { return options_; }

 private:
  HttpClientOptions options_;
};

// `text` percent-encoded for use in a URL path segment or query value (every
// byte but A-Z a-z 0-9 - . _ ~ becomes %XX).
std::string UrlEncode(std::string_view text);

// `url` without a user:password@ part (for messages and logs).
std::string RedactUrl(const std::string& url);

}  // namespace maestro
