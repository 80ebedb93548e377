// provider_cache_bench: the share of input tokens read from the prompt cache
// per provider (issue 50), through the real `maestro serve` and the
// provider fakes of `maestro-fakellm`.
//
// For each provider (openai: llama-server's slot cache; anthropic: explicit
// `cache_control` breakpoints; gemini: implicit prefix reuse) a fresh fake
// and serve run four walks of seed 000's prompt paths, one after another:
//   walk      a coding task: transition plan -> implement, ListDir,
//             RunCommand, complete
//   ask       a chat task that asks (complete needs_user_input), the answer
//             as a comment, the follow-up job completes
//   approval  a coding task parks on a tool approval; approved, the job
//             resumes in the same movement, runs the command, completes
//   continue  the walk's task continued: a new job replays its conversation
// Per walk it prints the prompt tokens, those read from the cache, their
// share, the lowest share of any request after the first of its job, and
// the lowest retention of such a request (what it read back of the previous
// request's whole prompt: 100% = nothing sent before was paid again; the
// rest of its prompt is what the turn added). For anthropic a second column replays every recorded
// request with its `cache_control` removed — what a translating proxy that sets no breakpoints
// sends — to a fresh fake: what such a proxy would have cached.
//
// Usage: provider_cache_bench [--min-cache-tokens 1024]
// Build with the release preset; needs MAESTRO_BIN and MAESTRO_FAKELLM_BIN.
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "core/json.h"
#include "fakellm_process.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace {

using maestro::Json;
using maestro::testing::FakeLlmProcess;
using maestro::testing::ToolCallReply;
using namespace std::chrono_literals;

// "12.34%", or "-" for a figure with no sample (< 0).
std::string Pct(double v) {
  if (v < 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f%%", v);
  return buf;
}

Json Tagged(Json reply, const std::string& tag) {
  reply["match"] = {{"any_message_contains", Json::array({tag})}};
  reply["repeat"] = 1;
  return reply;
}
Json Done(const std::string& result) {
  return ToolCallReply("complete", {{"status", "success"}, {"result", result}});
}

// The walks' replies, each step once, matched by the walk's tag (the
// Continue's by its note, which only its requests carry).
Json Script() {
  Json cmd = {{"command", "echo bench-50"}};
  Json net = {{"command", "echo approved-50"}, {"network", true}};
  Json park =
      ToolCallReply("RequestTool", {{"tool", "RunCommand"}, {"arguments", net}, {"reason", "net"}});
  Json ask = ToolCallReply(
      "complete",
      {{"status", "needs_user_input"}, {"result", "need a colour"}, {"question", "Which colour?"}});
  Json cont = Done("continued");
  cont["match"] = {{"last_message_contains", "CONT-4"}};
  cont["repeat"] = 1;
  return Json::array(
      {cont, Tagged(ToolCallReply("transition", {{"next", "implement"}}), "WALK-1"),
       Tagged(ToolCallReply("ListDir", Json::object()), "WALK-1"),
       Tagged(ToolCallReply("RunCommand", cmd), "WALK-1"), Tagged(Done("walked"), "WALK-1"),
       Tagged(ask, "ASK-2"), Tagged(Done("blue it is"), "ASK-2"),
       Tagged(ToolCallReply("transition", {{"next", "implement"}}), "APPR-3"),
       Tagged(park, "APPR-3"), Tagged(park, "APPR-3"),
       Tagged(ToolCallReply("RunCommand", net), "APPR-3"), Tagged(Done("approved"), "APPR-3")});
}

class Serve {
 public:
  Serve(maestro::testing::TempDir& dir, const std::string& provider, const std::string& base_url)
      : port_(maestro::testing::FreePort()), client_("127.0.0.1", port_) {
    std::ofstream(dir.File(provider + ".yaml"))
        << "workers: 1\njobs:\n  poll_interval_ms: 20\nllm:\n  base_url: " << base_url
        << "\n  provider: " << provider << "\n  model: fake\n  context_length: 1000000\n";
    proc_ = std::make_unique<maestro::testing::Process>(
        std::vector<std::string>{MAESTRO_BIN, "--config", dir.File(provider + ".yaml"), "serve"},
        std::map<std::string, std::string>{{"MAESTRO_DATA_DIR", dir.File(provider + "-data")},
                                           {"MAESTRO_LISTEN", "127.0.0.1:" + std::to_string(port_)},
                                           {"MAESTRO_ADMIN_TOKEN", "tok"},
                                           {"MAESTRO_LOG_LEVEL", "warn"}},
        dir.File(provider + ".out"), dir.File(provider + ".err"));
    client_.set_bearer_token_auth("tok");
    client_.set_read_timeout(30, 0);
    for (int i = 0; i < 1000 && !client_.Get("/api/health"); ++i) std::this_thread::sleep_for(10ms);
  }

  Json Post(const std::string& path, const Json& body) {
    auto r = client_.Post(path, body.dump(), "application/json");
    return r ? Json::parse(r->body, nullptr, false) : Json();
  }
  Json Get(const std::string& path) {
    auto r = client_.Get(path);
    return r ? Json::parse(r->body, nullptr, false) : Json();
  }
  // Waits until the job has `status`; false after 30 s.
  bool Wait(const std::string& task, const Json& job, const std::string& status) {
    for (int i = 0; i < 3000; ++i) {
      for (const auto& j : Get("/api/local/tasks/" + task).value("jobs", Json::array())) {
        if (j["id"] == job && j["status"] == status) return true;
      }
      std::this_thread::sleep_for(10ms);
    }
    std::fprintf(stderr, "task %s job %s did not reach %s\n", task.c_str(), job.dump().c_str(),
                 status.c_str());
    return false;
  }
  // The job of each llm.call of a task, in order.
  std::vector<std::string> CallJobs(const std::string& task) {
    std::vector<std::string> out;
    std::string after;
    for (;;) {
      Json page = Get("/api/local/tasks/" + task + "/events" +
                      (after.empty() ? "" : "?after=" + after))["events"];
      if (!page.is_array() || page.empty()) return out;
      for (const auto& e : page) {
        if (e["type"] == "llm.call") out.push_back(e["job_id"]);
      }
      after = page.back()["id"].get<std::string>();
    }
  }

 private:
  int port_;
  httplib::Client client_;
  std::unique_ptr<maestro::testing::Process> proc_;
};

Json FakeLog(const FakeLlmProcess& fake) {
  httplib::Client c("127.0.0.1", fake.port());
  auto r = c.Get("/v1/_requests");
  return r ? Json::parse(r->body)["requests"] : Json::array();
}

// One walk's requests and the job each belongs to.
struct Walk {
  std::string name;
  Json requests = Json::array();
  std::vector<std::string> jobs;
};

int64_t CacheRead(const Json& rec) {
  const Json& c = rec["cache"];
  return c.contains("cache_read") ? c["cache_read"].get<int64_t>() : c["cache_n"].get<int64_t>();
}

// Removes every cache_control from a Messages request (a proxy's request).
void StripBreakpoints(Json& j) {
  if (j.is_object()) {
    j.erase("cache_control");
    for (auto& [k, v] : j.items()) StripBreakpoints(v);
  } else if (j.is_array()) {
    for (auto& v : j) StripBreakpoints(v);
  }
}

// Cache reads of `requests` replayed without breakpoints to a fresh fake.
std::vector<int64_t> ProxyReads(const Json& requests, const std::vector<std::string>& fake_args) {
  FakeLlmProcess fake(fake_args);
  httplib::Client c("127.0.0.1", fake.port());
  std::vector<int64_t> out;
  for (const auto& rec : requests) {
    Json body = rec["body"];
    StripBreakpoints(body);
    body["stream"] = false;
    auto r = c.Post("/v1/messages", {{"anthropic-version", "2023-06-01"}, {"x-api-key", "k"}},
                    body.dump(), "application/json");
    Json reply = r ? Json::parse(r->body, nullptr, false) : Json();
    out.push_back(reply.is_object() && reply.contains("usage")
                      ? reply["usage"].value("cache_read_input_tokens", int64_t{0})
                      : -1);
  }
  return out;
}

bool RunWalks(const std::string& provider, const std::vector<std::string>& fake_args,
              maestro::testing::TempDir& dir, std::vector<Walk>* walks) {
  FakeLlmProcess fake(fake_args);
  std::string base = fake.base_url() + (provider == "gemini" ? "beta" : "");
  Serve serve(dir, provider, base);
  size_t seen = 0;
  auto take = [&](const std::string& name, const std::string& task) {
    Walk w;
    w.name = name;
    Json log = FakeLog(fake);
    for (size_t i = seen; i < log.size(); ++i) w.requests.push_back(log[i]);
    seen = log.size();
    w.jobs = serve.CallJobs(task);
    if (w.jobs.size() > w.requests.size()) w.jobs.resize(w.requests.size());
    walks->push_back(std::move(w));
  };
  // walk
  Json walk = serve.Post("/api/local/tasks",
                         {{"instruction", "WALK-1 tidy the repo"}, {"piece", "coding"}});
  std::string walk_task = walk["task"]["id"];
  if (!serve.Wait(walk_task, walk["job"]["id"], "succeeded")) return false;
  take("walk", walk_task);
  // ask
  Json ask =
      serve.Post("/api/local/tasks", {{"instruction", "ASK-2 paint the fence"}, {"piece", "chat"}});
  std::string ask_task = ask["task"]["id"];
  if (!serve.Wait(ask_task, ask["job"]["id"], "waiting_human")) return false;
  Json answer = serve.Post("/api/local/tasks/" + ask_task + "/comments", {{"body", "blue"}});
  if (!serve.Wait(ask_task, answer["job"]["id"], "succeeded")) return false;
  take("ask", ask_task);
  // approval
  Json appr = serve.Post("/api/local/tasks",
                         {{"instruction", "APPR-3 fetch the data"}, {"piece", "coding"}});
  std::string appr_task = appr["task"]["id"];
  if (!serve.Wait(appr_task, appr["job"]["id"], "waiting_human")) return false;
  Json reqs = serve.Get("/api/local/tasks/" + appr_task + "/tool-requests")["requests"];
  if (reqs.empty()) return false;
  serve.Post("/api/local/tasks/" + appr_task + "/tool-requests/" +
                 reqs[0]["id"].get<std::string>() + "/decide",
             {{"decision", "approve"}, {"scope", "once"}});
  if (!serve.Wait(appr_task, appr["job"]["id"], "succeeded")) return false;
  take("approval", appr_task);
  // continue
  Json cont = serve.Post("/api/local/tasks/" + walk_task + "/continue",
                         {{"note", "CONT-4 one more thing"}});
  if (!serve.Wait(walk_task, cont["job"]["id"], "succeeded")) return false;
  take("continue", walk_task);
  // The continue walk's jobs: only the new job's calls are its requests.
  Walk& c = walks->back();
  std::vector<std::string> all = serve.CallJobs(walk_task);
  c.jobs.assign(all.end() - static_cast<std::ptrdiff_t>(c.requests.size()), all.end());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string min_tokens = "1024";
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--min-cache-tokens") min_tokens = argv[i + 1];
  }
  maestro::testing::TempDir dir;
  std::ofstream(dir.File("script.json")) << Json{{"replies", Script()}}.dump();
  const std::vector<std::string> fake_args = {"--script", dir.File("script.json"),
                                              "--min-cache-tokens", min_tokens};
  std::printf("%-10s %-9s %5s %10s %10s %7s %13s %13s %11s\n", "provider", "walk", "calls",
              "prompt", "read", "share", "min_after_1st", "min_retained", "proxy_share");
  for (const std::string provider : {"openai", "anthropic", "gemini"}) {
    std::vector<Walk> walks;
    if (!RunWalks(provider, fake_args, dir, &walks)) {
      std::fprintf(stderr, "%s: a walk failed (see %s)\n", provider.c_str(), dir.path().c_str());
      return 1;
    }
    int64_t all_prompt = 0, all_read = 0, all_proxy = 0;
    for (const Walk& w : walks) {
      int64_t prompt = 0, read = 0, proxy = 0;
      // -1 = no request after the first of its job in this walk.
      double min_after_first = -1, min_retention = -1;
      std::vector<int64_t> proxy_reads;
      if (provider == "anthropic") proxy_reads = ProxyReads(w.requests, fake_args);
      for (size_t i = 0; i < w.requests.size(); ++i) {
        const Json& rec = w.requests[i];
        int64_t p = rec["cache"]["prompt_tokens"], r = CacheRead(rec);
        prompt += p;
        read += r;
        if (i < proxy_reads.size()) proxy += proxy_reads[i];
        bool first = i == 0 || (i < w.jobs.size() && w.jobs[i] != w.jobs[i - 1]);
        if (!first && p > 0) {
          double share = 100.0 * r / p;
          min_after_first = min_after_first < 0 ? share : std::min(min_after_first, share);
          // Of the previous request's prompt, how much this one read back.
          int64_t before = w.requests[i - 1]["cache"]["prompt_tokens"];
          double kept = before > 0 ? std::min(100.0, 100.0 * r / before) : 100.0;
          min_retention = min_retention < 0 ? kept : std::min(min_retention, kept);
        }
      }
      all_prompt += prompt;
      all_read += read;
      all_proxy += proxy;
      std::printf("%-10s %-9s %5zu %10lld %10lld %7s %13s %13s %11s\n", provider.c_str(),
                  w.name.c_str(), w.requests.size(), static_cast<long long>(prompt),
                  static_cast<long long>(read), Pct(prompt ? 100.0 * read / prompt : 0).c_str(),
                  Pct(min_after_first).c_str(), Pct(min_retention).c_str(),
                  provider == "anthropic" ? Pct(prompt ? 100.0 * proxy / prompt : 0).c_str() : "-");
    }
    std::printf("provider_cache: provider=%s prompt=%lld read=%lld share=%.2f%%%s\n",
                provider.c_str(), static_cast<long long>(all_prompt),
                static_cast<long long>(all_read), all_prompt ? 100.0 * all_read / all_prompt : 0.0,
                provider == "anthropic" ? (" proxy_without_breakpoints_share=" +
                                           Pct(all_prompt ? 100.0 * all_proxy / all_prompt : 0.0))
                                              .c_str()
                                        : "");
  }
  return 0;
}
