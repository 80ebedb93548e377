// api_bench: the latency a client sees through the real `maestro serve`.
//
//   create→first LLM request   POST /api/local/tasks until the LLM server
//                              receives the job's first chat request (store
//                              transaction, worker wake-up, claim, context
//                              dir, prompt build, request streaming)
//   LLM delta→SSE client       a content delta written by the LLM server
//                              until a client of GET /api/local/jobs/:id/stream
//                              reads it (SSE parse, engine, JobStreamHub, API)
//
// The LLM server is a zero-latency OpenAI-compatible fake running INSIDE this
// process, so "sent" and "received" are read from one steady clock: each
// streamed delta carries its send time as its text ("<ns>;"). maestro-fakellm
// is not used here because its request log has no timestamps.
//
// Usage: api_bench [--tasks 200] [--deltas 2000] [--delta-gap-us 1000]
// Build with the release preset; needs the maestro binary (MAESTRO_BIN).
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/json.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace {

using maestro::Json;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

std::string Chunk(const Json& delta, const Json& finish = nullptr) {
  Json c = {
      {"id", "bench"},
      {"object", "chat.completion.chunk"},
      {"choices", Json::array({{{"index", 0}, {"delta", delta}, {"finish_reason", finish}}})}};
  return "data: " + c.dump() + "\n\n";
}

std::string CompleteCall() {
  Json args = {{"status", "success"}, {"result", "ok"}};
  return Chunk({{"tool_calls",
                 Json::array(
                     {{{"index", 0},
                       {"id", "call_1"},
                       {"type", "function"},
                       {"function", {{"name", "complete"}, {"arguments", args.dump()}}}}})}}) +
         Chunk(Json::object(), "tool_calls") + "data: [DONE]\n\n";
}

// The in-process fake LLM server.
class FakeLlm {
 public:
  FakeLlm(int deltas, int gap_us) : deltas_(deltas), gap_us_(gap_us) {
    srv_.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
      const int64_t arrived = NowNs();
      Json body = Json::parse(req.body, nullptr, false);
      std::string text = body.is_object() ? body["messages"].back().dump() : "";
      auto tag_at = text.find("bench-task-");
      std::string tag = tag_at == std::string::npos ? "" : text.substr(tag_at, 16);
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (!tag.empty() && !first_request_.count(tag)) first_request_[tag] = arrived;
      }
      arrived_.notify_all();
      bool stream_bench = text.find("stream-bench") != std::string::npos;
      res.set_chunked_content_provider(
          "text/event-stream", [this, stream_bench](size_t, httplib::DataSink& sink) {
            if (stream_bench) {
              std::this_thread::sleep_for(500ms);  // the SSE client connects meanwhile
              for (int i = 0; i < deltas_; ++i) {
                std::string c = Chunk({{"content", std::to_string(NowNs()) + ";"}});
                if (!sink.write(c.data(), c.size())) return false;
                std::this_thread::sleep_for(std::chrono::microseconds(gap_us_));
              }
            }
            std::string end = CompleteCall();
            sink.write(end.data(), end.size());
            sink.done();
            return true;
          });
    });
    // Every SSE chunk is a small write of its own: without TCP_NODELAY the
    // last one waits ~40 ms for the client's delayed ACK, and the next task
    // would measure that wait behind a busy worker instead of its own path.
    srv_.set_tcp_nodelay(true);
    port_ = srv_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { srv_.listen_after_bind(); });
  }
  ~FakeLlm() {
    srv_.stop();
    thread_.join();
  }
  int port() const { return port_; }
  // Blocks (no polling: a spinning client would take CPU from the server on
  // a 2-core machine) until `tag`'s first request arrived, or `timeout`.
  std::optional<int64_t> AwaitFirstRequest(const std::string& tag,
                                           std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!arrived_.wait_for(lock, timeout, [&] { return first_request_.count(tag) > 0; })) {
      return std::nullopt;
    }
    return first_request_[tag];
  }

 private:
  httplib::Server srv_;
  std::thread thread_;
  int port_ = 0;
  int deltas_, gap_us_;
  std::mutex mu_;
  std::condition_variable arrived_;
  std::map<std::string, int64_t> first_request_;
};

double Pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

httplib::Client Api(int port) {
  httplib::Client c("127.0.0.1", port);
  c.set_bearer_token_auth("tok");
  c.set_read_timeout(60, 0);
  return c;
}

// Creates `n` tasks one after another; each waits for its first LLM request.
std::vector<double> CreateToFirstRequest(int port, FakeLlm& fake, int n) {
  std::vector<double> ms;
  auto api = Api(port);
  for (int i = 0; i < n; ++i) {
    char tag[32];
    std::snprintf(tag, sizeof(tag), "bench-task-%05d", i);
    const int64_t t0 = NowNs();
    auto r = api.Post("/api/local/tasks", Json{{"instruction", std::string(tag)}}.dump(),
                      "application/json");
    if (!r || r->status != 201) {
      std::fprintf(stderr, "create failed: %s\n", r ? r->body.c_str() : "no reply");
      continue;
    }
    std::optional<int64_t> got = fake.AwaitFirstRequest(tag, 10s);
    if (got) ms.push_back(static_cast<double>(*got - t0) / 1e6);
  }
  return ms;
}

// One task whose LLM reply streams `deltas` timestamped deltas; a job stream
// client measures each one's arrival.
std::vector<double> DeltaToSse(int port) {
  auto api = Api(port);
  auto r = api.Post("/api/local/tasks", Json{{"instruction", "stream-bench"}}.dump(),
                    "application/json");
  if (!r || r->status != 201) return {};
  std::string job = Json::parse(r->body)["job"]["id"];
  std::vector<double> ms;
  std::string buf;
  auto sse = Api(port);
  sse.Get(("/api/local/jobs/" + job + "/stream").c_str(), [&](const char* data, size_t n) {
    const int64_t now = NowNs();
    buf.append(data, n);
    size_t pos;
    while ((pos = buf.find("\n\n")) != std::string::npos) {
      std::string frame = buf.substr(0, pos);
      buf.erase(0, pos + 2);
      if (frame.find("event: end") != std::string::npos) return false;
      auto d = frame.find("data: ");
      if (d == std::string::npos) continue;
      Json j = Json::parse(frame.substr(d + 6), nullptr, false);
      if (!j.is_object() || j.value("type", "") != "text") continue;
      std::string text = j.value("text", "");
      for (size_t at = 0, semi; (semi = text.find(';', at)) != std::string::npos; at = semi + 1) {
        ms.push_back(static_cast<double>(now - std::stoll(text.substr(at, semi - at))) / 1e6);
      }
    }
    return true;
  });
  return ms;
}

int ArgInt(int argc, char** argv, const std::string& name, int def) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (argv[i] == name) return std::stoi(argv[i + 1]);
  }
  return def;
}

}  // namespace

int main(int argc, char** argv) {
  const int tasks = ArgInt(argc, argv, "--tasks", 200);
  const int deltas = ArgInt(argc, argv, "--deltas", 2000);
  const int gap_us = ArgInt(argc, argv, "--delta-gap-us", 1000);
  maestro::testing::TempDir dir;
  FakeLlm fake(deltas, gap_us);
  const int port = maestro::testing::FreePort();
  std::ofstream(dir.File("maestro.yaml"))
      << "workers: 2\nlog:\n  level: warn\njobs:\n  poll_interval_ms: 1000\n"
      << "llm:\n  base_url: http://127.0.0.1:" << fake.port() << "/v1\n  model: fake\n";
  maestro::testing::Process serve({MAESTRO_BIN, "--config", dir.File("maestro.yaml"), "serve"},
                                  {{"MAESTRO_DATA_DIR", dir.File("data")},
                                   {"MAESTRO_LISTEN", "127.0.0.1:" + std::to_string(port)},
                                   {"MAESTRO_ADMIN_TOKEN", "tok"}},
                                  dir.File("serve.out"), dir.File("serve.err"));
  httplib::Client health("127.0.0.1", port);
  bool up = false;
  for (int i = 0; i < 1000 && !up; ++i) {
    auto r = health.Get("/api/health");
    up = r && r->status == 200;
    if (!up) std::this_thread::sleep_for(10ms);
  }
  if (!up) {
    std::fprintf(stderr, "maestro serve did not start:\n%s\n", serve.Stderr().c_str());
    return 1;
  }
  auto create = CreateToFirstRequest(port, fake, tasks);
  auto delta = DeltaToSse(port);
  std::printf("create->first LLM request: n=%zu p50=%.2f ms p99=%.2f ms max=%.2f ms\n",
              create.size(), Pct(create, 0.5), Pct(create, 0.99), Pct(create, 1.0));
  std::printf("LLM delta->SSE client:     n=%zu p50=%.3f ms p99=%.3f ms max=%.3f ms\n",
              delta.size(), Pct(delta, 0.5), Pct(delta, 0.99), Pct(delta, 1.0));
  std::printf(
      "summary: create_p50_ms=%.2f create_p99_ms=%.2f delta_p50_ms=%.3f delta_p99_ms=%.3f\n",
      Pct(create, 0.5), Pct(create, 0.99), Pct(delta, 0.5), Pct(delta, 0.99));
  return create.size() == static_cast<size_t>(tasks) && delta.size() == static_cast<size_t>(deltas)
             ? 0
             : 2;
}
