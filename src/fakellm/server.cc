#include "fakellm/server.h"

#include <fmt/format.h>
#include <httplib.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <thread>

#include "fakellm/provider_api.h"
#include "fakellm/reply_text.h"

namespace maestro::fakellm {
namespace {

Json ErrorBody(int status, const std::string& message, const std::string& type) {
  return {{"error", {{"code", status}, {"message", message}, {"type", type}}}};
}

std::string ErrorType(int status) {
  if (status == 429) return "rate_limit_error";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

Json ToolCallsJson(const ScriptReply& r) {
  Json out = Json::array();
  for (const ScriptToolCall& c : r.tool_calls) {
    out.push_back({{"id", c.id},
                   {"type", "function"},
                   {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
  }
  return out;
}

}  // namespace

struct FakeLlmServer::Impl {
  Impl(ServerOptions o, Script s)
      : opts(std::move(o)),
        script(std::move(s)),
        cache(opts.slots, opts.slot_similarity),
        anthropic(NewAnthropicApi(opts, &script)),
        gemini(NewGeminiApi(opts, &script)) {}

  ServerOptions opts;
  Script script;
  PromptCache cache;
  std::unique_ptr<ProviderApi> anthropic;
  std::unique_ptr<ProviderApi> gemini;
  httplib::Server svr;
  std::atomic<bool> stopping{false};
  std::atomic<int64_t> seq{0};
  Mutex mu;
  Json records GUARDED_BY(mu) = Json::array();

  // Sleeps in small steps; false when the server stops or the peer is gone.
  bool Sleep(int64_t ms, httplib::DataSink* sink) {
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < until) {
      if (stopping.load() || (sink && !sink->is_writable())) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return !stopping.load();
  }

  void Record(Json rec) {
    MutexLock lock(&mu);
    if (!opts.record_path.empty()) {
      // One append per record: a test reading the file sees whole lines.
      auto out = opts.env->NewAppendableFile(opts.record_path);
      if (out.ok()) (*out)->Append(rec.dump() + "\n").IgnoreError();
    }
    records.push_back(std::move(rec));
  }

  void HandleChat(const httplib::Request& req, httplib::Response& res);
  void HandleProvider(ProviderApi& api, const httplib::Request& req, httplib::Response& res);
  std::vector<std::string> StreamEvents(const ScriptReply& r, const std::string& id,
                                        const Json& timings, const Json& usage, bool include_usage);
  void Routes();
};

std::vector<std::string> FakeLlmServer::Impl::StreamEvents(const ScriptReply& r,
                                                           const std::string& id,
                                                           const Json& timings, const Json& usage,
                                                           bool include_usage) {
  int64_t created = std::chrono::duration_cast<std::chrono::seconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
  auto chunk = [&](Json delta, Json finish) {
    return Json{
        {"id", id},
        {"object", "chat.completion.chunk"},
        {"created", created},
        {"model", opts.model},
        {"choices",
         Json::array(
             {{{"index", 0}, {"delta", std::move(delta)}, {"finish_reason", std::move(finish)}}})}};
  };
  std::vector<std::string> ev;
  ev.push_back(chunk({{"role", "assistant"}, {"content", nullptr}}, nullptr).dump());
  for (const std::string& piece : SplitUtf8(r.reasoning, static_cast<size_t>(r.chunk_chars))) {
    ev.push_back(chunk({{"reasoning_content", piece}}, nullptr).dump());
  }
  for (const std::string& piece : SplitUtf8(r.text, static_cast<size_t>(r.chunk_chars))) {
    ev.push_back(chunk({{"content", piece}}, nullptr).dump());
  }
  for (size_t i = 0; i < r.tool_calls.size(); ++i) {
    const ScriptToolCall& c = r.tool_calls[i];
    ev.push_back(chunk({{"tool_calls",
                         Json::array({{{"index", i},
                                       {"id", c.id},
                                       {"type", "function"},
                                       {"function", {{"name", c.name}, {"arguments", ""}}}}})}},
                       nullptr)
                     .dump());
    for (const std::string& piece : SplitUtf8(c.arguments, static_cast<size_t>(r.chunk_chars))) {
      ev.push_back(chunk({{"tool_calls",
                           Json::array({{{"index", i}, {"function", {{"arguments", piece}}}}})}},
                         nullptr)
                       .dump());
    }
  }
  Json last = chunk(Json::object(), r.finish_reason);
  last["timings"] = timings;  // llama-server puts timings on the last choice chunk
  ev.push_back(last.dump());
  if (include_usage) {
    ev.push_back(Json{
        {"id", id},
        {"object", "chat.completion.chunk"},
        {"created", created},
        {"model", opts.model},
        {"choices", Json::array()},
        {"usage",
         usage}}.dump());
  }
  ev.push_back("[DONE]");
  return ev;
}

void FakeLlmServer::Impl::HandleChat(const httplib::Request& req, httplib::Response& res) {
  int64_t n = seq.fetch_add(1);
  // remote_port tells a test which requests shared one connection.
  Json rec = {{"index", n},
              {"path", req.path},
              {"body_bytes", req.body.size()},
              {"remote_port", req.remote_port}};
  bool big = req.body.size() > opts.record_body_max;
  Json body;
  if (big) {
    // Validate without building a DOM; huge bodies are only counted.
    if (!Json::accept(req.body))
      body = Json(Json::value_t::discarded);
    else
      body = Json::object();
  } else {
    body = Json::parse(req.body, nullptr, false);
  }
  if (body.is_discarded() || !body.is_object() || (!big && !body.contains("messages"))) {
    rec["error"] = "invalid request body";
    Record(rec);
    res.status = 400;
    res.set_content(
        ErrorBody(400, "invalid JSON body or no messages", "invalid_request_error").dump(),
        "application/json");
    return;
  }
  if (!big) rec["body"] = body;
  bool stream =
      big ? req.body.find("\"stream\":true") != std::string::npos : body.value("stream", false);
  bool include_usage = stream && (big || (body.contains("stream_options") &&
                                          body["stream_options"].value("include_usage", false)));
  ScriptReply reply = script.Next(body);
  rec["reply"] = reply.index;
  if (reply.delay_ms > 0 && !stream && !Sleep(reply.delay_ms, nullptr)) return;
  if (reply.status != 200) {
    rec["status"] = reply.status;
    Record(rec);
    res.status = reply.status;
    if (reply.retry_after_s >= 0)
      res.set_header("Retry-After", std::to_string(reply.retry_after_s));
    if (reply.retry_after_ms >= 0)
      res.set_header("retry-after-ms", std::to_string(reply.retry_after_ms));
    res.set_content(ErrorBody(reply.status, reply.error_message, ErrorType(reply.status)).dump(),
                    "application/json");
    return;
  }
  Json tool_calls = ToolCallsJson(reply);
  std::string generated =
      reply.reasoning.empty() ? "" : "<think>\n" + reply.reasoning + "\n</think>\n\n";
  generated += RenderAssistantBody(reply.text, tool_calls) + "<|im_end|>";
  Tokens gen = Tokenize(generated);
  CacheFigures f;
  if (big) {
    f.prompt_tokens = f.prompt_n = static_cast<int64_t>(req.body.size() / 4);
  } else {
    Tokens prompt = Tokenize(RenderPrompt(body));
    if (opts.ctx_size > 0 && static_cast<int64_t>(prompt.size() + gen.size()) > opts.ctx_size) {
      rec["status"] = 400;
      Record(rec);
      res.status = 400;
      Json err = ErrorBody(400, "the request exceeds the available context size, try increasing it",
                           "exceed_context_size_error");
      err["error"]["n_prompt_tokens"] = prompt.size();
      err["error"]["n_ctx"] = opts.ctx_size;
      res.set_content(err.dump(), "application/json");
      return;
    }
    f = cache.Process(prompt, gen);
  }
  rec["status"] = 200;
  rec["cache"] = {{"slot", f.slot},
                  {"prompt_tokens", f.prompt_tokens},
                  {"cache_n", f.cache_n},
                  {"prompt_n", f.prompt_n},
                  {"similarity", f.similarity}};
  Record(rec);
  spdlog::info("fakellm request={} slot={} prompt={} cache_n={} prompt_n={}", n, f.slot,
               f.prompt_tokens, f.cache_n, f.prompt_n);

  Json timings = {{"cache_n", f.cache_n},
                  {"prompt_n", f.prompt_n},
                  {"predicted_n", gen.size()},
                  {"prompt_ms", 1.0},
                  {"predicted_ms", 1.0}};
  Json usage = {{"prompt_tokens", f.prompt_tokens},
                {"completion_tokens", gen.size()},
                {"total_tokens", f.prompt_tokens + static_cast<int64_t>(gen.size())},
                {"prompt_tokens_details", {{"cached_tokens", f.cache_n}}}};
  std::string id = fmt::format("chatcmpl-fake-{}", n);
  if (!stream) {
    Json msg = {{"role", "assistant"}, {"content", reply.text}};
    if (!reply.reasoning.empty()) msg["reasoning_content"] = reply.reasoning;
    if (!tool_calls.empty()) msg["tool_calls"] = tool_calls;
    Json out = {
        {"id", id},
        {"object", "chat.completion"},
        {"model", opts.model},
        {"choices",
         Json::array({{{"index", 0}, {"message", msg}, {"finish_reason", reply.finish_reason}}})},
        {"usage", usage},
        {"timings", timings}};
    res.set_content(out.dump(), "application/json");
    return;
  }
  struct StreamState {
    std::vector<std::string> events;
    size_t next = 0;
  };
  auto st = std::make_shared<StreamState>();
  st->events = StreamEvents(reply, id, timings, usage, include_usage);
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream", [this, st, reply](size_t, httplib::DataSink& sink) {
        if (st->next == 0 && reply.delay_ms > 0 && !Sleep(reply.delay_ms, &sink)) return false;
        if (st->next >= st->events.size()) {
          sink.done();
          return true;
        }
        if (reply.cut_after >= 0 && st->next >= static_cast<size_t>(reply.cut_after)) {
          return false;  // drop the connection without the terminating chunk
        }
        if (st->next > 0 && reply.token_delay_ms > 0 && !Sleep(reply.token_delay_ms, &sink)) {
          return false;
        }
        std::string frame;
        if (reply.keepalive && st->next > 0) frame += ": keep-alive\n\n";
        frame += "data: " + st->events[st->next++] + "\n\n";
        return sink.write(frame.data(), frame.size());
      });
}

// A provider fake's answer on the wire: the same pacing and faults as the
// chat-completions route (delay, token delay, a cut stream).
void FakeLlmServer::Impl::HandleProvider(ProviderApi& api, const httplib::Request& req,
                                         httplib::Response& res) {
  ProviderRequest pr;
  pr.seq = seq.fetch_add(1);
  pr.path = req.path;
  pr.body = req.body;
  for (const auto& [k, v] : req.headers) {
    std::string name = k;
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    pr.headers[name] = v;
  }
  for (const auto& [k, v] : req.params) pr.query[k] = v;
  Json rec = {{"index", pr.seq},
              {"path", req.path},
              {"body_bytes", req.body.size()},
              {"remote_port", req.remote_port}};
  HttpAnswer a = api.Handle(pr, &rec);
  Record(rec);
  res.status = a.status;
  for (const auto& [k, v] : a.headers) res.set_header(k, v);
  if (!a.streamed) {
    if (a.delay_ms > 0 && !Sleep(a.delay_ms, nullptr)) return;
    res.set_content(a.body, a.content_type);
    return;
  }
  auto st = std::make_shared<std::pair<HttpAnswer, size_t>>(std::move(a), 0);
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream", [this, st](size_t, httplib::DataSink& sink) {
        HttpAnswer& ans = st->first;
        size_t& next = st->second;
        if (next == 0 && ans.delay_ms > 0 && !Sleep(ans.delay_ms, &sink)) return false;
        if (next >= ans.frames.size()) {
          sink.done();
          return true;
        }
        if (ans.cut_after >= 0 && next >= static_cast<size_t>(ans.cut_after)) return false;
        if (next > 0 && ans.token_delay_ms > 0 && !Sleep(ans.token_delay_ms, &sink)) return false;
        const std::string& frame = ans.frames[next++];
        return sink.write(frame.data(), frame.size());
      });
}

void FakeLlmServer::Impl::Routes() {
  // Each SSE frame is its own small write: without TCP_NODELAY the last one
  // waits for the client's delayed ACK (40 ms on Linux), as no streaming LLM
  // server makes its clients wait.
  svr.set_tcp_nodelay(true);
  auto chat = [this](const httplib::Request& req, httplib::Response& res) { HandleChat(req, res); };
  svr.Post("/v1/chat/completions", chat);
  svr.Post("/chat/completions", chat);
  svr.Post("/v1/messages", [this](const httplib::Request& req, httplib::Response& res) {
    HandleProvider(*anthropic, req, res);
  });
  svr.Post(R"(/v1beta/models/([^/:]+):(generateContent|streamGenerateContent))",
           [this](const httplib::Request& req, httplib::Response& res) {
             HandleProvider(*gemini, req, res);
           });
  svr.Get("/health", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"status":"ok"})", "application/json");
  });
  auto models = [this](const httplib::Request&, httplib::Response& res) {
    Json out = {{"object", "list"},
                {"data", Json::array({{{"id", opts.model},
                                       {"object", "model"},
                                       {"owned_by", "maestro-fakellm"},
                                       {"meta", {{"n_ctx", opts.ctx_size}}}}})}};
    res.set_content(out.dump(), "application/json");
  };
  svr.Get("/v1/models", models);
  svr.Get("/models", models);
  svr.Get("/v1/_requests", [this](const httplib::Request&, httplib::Response& res) {
    MutexLock lock(&mu);
    res.set_content(Json{{"requests", records}}.dump(), "application/json");
  });
  svr.Delete("/v1/_requests", [this](const httplib::Request&, httplib::Response& res) {
    MutexLock lock(&mu);
    records = Json::array();
    res.set_content(R"({"cleared":true})", "application/json");
  });
}

FakeLlmServer::FakeLlmServer(ServerOptions opts, Script script)
    : impl_(std::make_unique<Impl>(std::move(opts), std::move(script))) {
  impl_->Routes();
}

FakeLlmServer::~FakeLlmServer() { Stop(); }

Result<int> FakeLlmServer::Bind() {
  int port =
      impl_->opts.port == 0
          ? impl_->svr.bind_to_any_port(impl_->opts.host)
          : (impl_->svr.bind_to_port(impl_->opts.host, impl_->opts.port) ? impl_->opts.port : -1);
  if (port <= 0) {
    return Unavailable(fmt::format("cannot bind {}:{}", impl_->opts.host, impl_->opts.port));
  }
  return port;
}

void FakeLlmServer::Run() { impl_->svr.listen_after_bind(); }

void FakeLlmServer::Stop() {
  impl_->stopping.store(true);
  impl_->svr.stop();
}

}  // namespace maestro::fakellm
