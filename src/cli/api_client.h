// ApiClient: how the `maestro task …` commands reach a running `maestro
// serve` (docs/api.md, docs/cli.md). Where it sits: the CLI only; client.cc
// (one request per command) and task_watch.cc (SSE streams) use it.
//
// Which server and token (ResolveClientOptions): --server > MAESTRO_SERVER >
// http://127.0.0.1:8080; --token > MAESTRO_TOKEN > the data dir's
// admin_token file (data dir from --config / MAESTRO_DATA_DIR / the
// default), read only: nothing is created.
//
// Failures are worded once here (ReportFailure): no server → exit 2 with
// "maestro: no server at URL (…)"; 401 → exit 2 naming where the token came
// from; other 4xx → 2; 5xx and broken transfers → 1.
//
// Thread safety: an ApiClient is immutable after construction and may be
// used from several threads at once (HttpClient is).
#pragma once

#include <functional>
#include <string>

#include "core/http_client.h"
#include "core/json.h"
#include "core/sse_parser.h"
#include "core/status.h"

namespace maestro::cli {

inline constexpr const char* kDefaultServer = "http://127.0.0.1:8080";

struct ClientOptions {
  std::string server = kDefaultServer;
  std::string token;
  // Where `token` came from, for the 401 message: "--token", "MAESTRO_TOKEN",
  // "<dir>/admin_token" or "" (no token found).
  std::string token_source;
  // The admin_token file that was (or would have been) read.
  std::string token_file;
  bool json = false;  // --json: print the server's JSON unchanged
};

// Applies the precedence above. `config_flag` is --config ("" for none).
Result<ClientOptions> ResolveClientOptions(const std::string& server_flag,
                                           const std::string& token_flag,
                                           const std::string& config_flag);

// One reply of the server (any status) with its body parsed when it is JSON.
struct ApiReply {
  int status = 0;
  Json body;  // null when the body is not JSON
  std::string raw;
};

class ApiClient {
 public:
  explicit ApiClient(ClientOptions o) : o_(std::move(o)) {}
  const ClientOptions& options() const { return o_; }
  std::string Url(const std::string& path) const;

  // A Status only when no reply came (kUnavailable: nothing answers).
  Result<ApiReply> Get(const std::string& path) const;
  Result<ApiReply> Post(const std::string& path, const Json& body) const;

  // GET `path` as an SSE stream; `on_head` sees the status first (return
  // false to stop), `on_chunk` the body pieces, `should_stop` is polled.
  Result<HttpReply> Stream(const std::string& path, const std::string& last_event_id,
                           int64_t idle_timeout_ms, const HttpClient::HeadFn& on_head,
                           const HttpClient::ChunkFn& on_chunk,
                           const HttpClient::StopFn& should_stop) const;

 private:
  HttpHeaders Headers() const;
  ClientOptions o_;
};

// Prints the one-line error for a failed call and returns its exit code.
int ReportTransportError(const ClientOptions& o, const Status& st);
int ReportHttpError(const ClientOptions& o, const ApiReply& r);

}  // namespace maestro::cli
