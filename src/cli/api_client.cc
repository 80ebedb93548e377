#include "cli/api_client.h"

#include <cstdlib>
#include <fstream>
#include <iostream>

#include "cli/runtime.h"

namespace maestro::cli {
namespace {

constexpr int64_t kConnectTimeoutMs = 5'000;
constexpr int64_t kReadTimeoutMs = 60'000;  // no byte from the server for this long

HttpClient Client(int64_t idle_timeout_ms) {
  HttpClientOptions opts;
  opts.connect_timeout_ms = kConnectTimeoutMs;
  opts.idle_timeout_ms = idle_timeout_ms;
  return HttpClient(opts);
}

Result<ApiReply> ToReply(Result<HttpReply> r) {
  if (!r.ok()) return r.status();
  ApiReply out;
  out.status = r->status;
  out.raw = std::move(r->body);
  auto parsed = ParseJson(out.raw);
  if (parsed.ok()) out.body = std::move(parsed).value();
  return out;
}

std::string ReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

}  // namespace

Result<ClientOptions> ResolveClientOptions(const std::string& server_flag,
                                           const std::string& token_flag,
                                           const std::string& config_flag) {
  ClientOptions o;
  if (!server_flag.empty()) {
    o.server = server_flag;
  } else if (const char* s = std::getenv("MAESTRO_SERVER"); s && *s) {
    o.server = s;
  }
  while (!o.server.empty() && o.server.back() == '/') o.server.pop_back();
  if (!token_flag.empty()) {
    o.token = token_flag;
    o.token_source = "--token";
    return o;
  }
  if (const char* t = std::getenv("MAESTRO_TOKEN"); t && *t) {
    o.token = t;
    o.token_source = "MAESTRO_TOKEN";
    return o;
  }
  // LoadConfig only reads: a missing data dir stays missing.
  auto cfg = LoadEffectiveConfig(config_flag);
  if (!cfg.ok()) return cfg.status();
  o.token_file = cfg->data_dir + "/admin_token";
  o.token = ReadFirstLine(o.token_file);
  if (!o.token.empty()) o.token_source = o.token_file;
  return o;
}

std::string ApiClient::Url(const std::string& path) const { return o_.server + path; }

HttpHeaders ApiClient::Headers() const {
  HttpHeaders h;
  if (!o_.token.empty()) h.emplace_back("Authorization", "Bearer " + o_.token);
  return h;
}

Result<ApiReply> ApiClient::Get(const std::string& path) const {
  return ToReply(Client(kReadTimeoutMs).Request("GET", Url(path), Headers()));
}

Result<ApiReply> ApiClient::Post(const std::string& path, const Json& body) const {
  HttpHeaders h = Headers();
  h.emplace_back("Content-Type", "application/json");
  return ToReply(Client(kReadTimeoutMs).Request("POST", Url(path), h, body.dump()));
}

Result<HttpReply> ApiClient::Stream(const std::string& path, const std::string& last_event_id,
                                    int64_t idle_timeout_ms, const HttpClient::HeadFn& on_head,
                                    const HttpClient::ChunkFn& on_chunk,
                                    const HttpClient::StopFn& should_stop) const {
  HttpHeaders h = Headers();
  h.emplace_back("Accept", "text/event-stream");
  if (!last_event_id.empty()) h.emplace_back("Last-Event-ID", last_event_id);
  return Client(idle_timeout_ms).Stream("GET", Url(path), h, {}, on_head, on_chunk, should_stop);
}

int ReportTransportError(const ClientOptions& o, const Status& st) {
  // Nothing answered (refused, unknown host, connect timeout) — as opposed
  // to a server that answered and then broke off or went silent.
  const std::string_view m = st.message();
  const bool nobody =
      (st.code() == StatusCode::kUnavailable && m.starts_with("cannot reach")) ||
      (st.code() == StatusCode::kDeadlineExceeded && m.find("onnect") != std::string_view::npos);
  if (nobody) {
    std::cerr << "maestro: no server at " << RedactUrl(o.server)
              << " (start one with `maestro serve`, or name one with --server / MAESTRO_SERVER)\n";
    return 2;
  }
  std::cerr << "maestro: " << st.message() << "\n";
  return st.code() == StatusCode::kInvalidArgument ? 2 : 1;
}

int ReportHttpError(const ClientOptions& o, const ApiReply& r) {
  if (r.status == 401) {
    std::string from =
        o.token_source.empty()
            ? "no token was found (none of --token, MAESTRO_TOKEN, " + o.token_file + ")"
            : "the token came from " + o.token_source;
    std::cerr << "maestro: the server at " << RedactUrl(o.server)
              << " refused the token (401): " << from
              << "; pass the server's token with --token or MAESTRO_TOKEN (it is in the "
                 "admin_token file of the server's data dir)\n";
    return 2;
  }
  std::string msg = r.raw;
  if (r.body.is_object() && r.body.contains("error") && r.body["error"].is_object()) {
    msg = r.body["error"].value("message", r.raw);
  }
  std::cerr << "maestro: " << r.status << ": " << msg << "\n";
  return r.status < 500 ? 2 : 1;
}

}  // namespace maestro::cli
