// task_life_bench: what a long-lived chat task sends, through the real
// `maestro serve` and `maestro-fakellm` (its llama-server-like prompt cache).
//
// One task is answered N times (a comment after each finished job, i.e. a
// follow-up that replays the transcript). For every request the bench reads
// the fake's log and prints the message count and the prefix retention: the
// cached tokens of this request over the prompt tokens of the previous one
// (100% = the whole previous prompt was reused). Before the transcript was
// rewritten at each seed, the counts doubled with every replay (2, 3, 5, 9, …).
//
// Usage: task_life_bench [--answers 20]
// Build with the release preset; needs MAESTRO_BIN and MAESTRO_FAKELLM_BIN.
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "core/json.h"
#include "fakellm_process.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace {

using maestro::Json;
using namespace std::chrono_literals;

bool WaitSucceeded(httplib::Client& c, const std::string& task, const std::string& job) {
  for (int i = 0; i < 3000; ++i) {
    auto r = c.Get("/api/local/tasks/" + task);
    if (r && r->status == 200) {
      Json task_view = Json::parse(r->body);
      for (const auto& j : task_view["jobs"]) {
        if (j["id"] == job && j["status"] == "succeeded") return true;
      }
    }
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  int answers = 20;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--answers") answers = std::stoi(argv[i + 1]);
  }
  maestro::testing::TempDir dir;
  Json complete = {
      {"tool_calls", Json::array({{{"name", "complete"},
                                   {"arguments", {{"status", "success"}, {"result", "noted"}}}}})},
      {"repeat", 0}};
  std::ofstream(dir.File("script.json")) << Json{{"replies", Json::array({complete})}}.dump();
  maestro::testing::FakeLlmProcess fake({"--script", dir.File("script.json")});
  int port = maestro::testing::FreePort();
  std::ofstream(dir.File("maestro.yaml"))
      << "workers: 1\njobs:\n  poll_interval_ms: 50\nllm:\n  base_url: " << fake.base_url()
      << "\n  model: fake\n  context_length: 1000000\n";
  maestro::testing::Process serve({MAESTRO_BIN, "--config", dir.File("maestro.yaml"), "serve"},
                                  {{"MAESTRO_DATA_DIR", dir.File("data")},
                                   {"MAESTRO_LISTEN", "127.0.0.1:" + std::to_string(port)},
                                   {"MAESTRO_ADMIN_TOKEN", "tok"},
                                   {"MAESTRO_LOG_LEVEL", "warn"}},
                                  dir.File("serve.out"), dir.File("serve.err"));
  httplib::Client c("127.0.0.1", port);
  c.set_bearer_token_auth("tok");
  for (int i = 0; i < 1000 && !c.Get("/api/health"); ++i) std::this_thread::sleep_for(10ms);
  auto created = c.Post("/api/local/tasks", R"({"instruction":"keep a list","piece":"chat"})",
                        "application/json");
  if (!created || created->status != 201) {
    std::fprintf(stderr, "create failed\n");
    return 1;
  }
  Json t = Json::parse(created->body);
  std::string task = t["task"]["id"], job = t["job"]["id"];
  if (!WaitSucceeded(c, task, job)) return 1;
  for (int i = 1; i <= answers; ++i) {
    Json body = {{"body", "item " + std::to_string(i)}};
    auto r = c.Post("/api/local/tasks/" + task + "/comments", body.dump(), "application/json");
    if (!r || r->status != 201) return 1;
    if (!WaitSucceeded(c, task, Json::parse(r->body)["job"]["id"])) return 1;
  }
  httplib::Client fc("127.0.0.1", fake.port());
  Json reqs = Json::parse(fc.Get("/v1/_requests")->body)["requests"];
  std::printf("request  messages  prompt_tokens  cached  retention_of_previous\n");
  std::vector<double> retention;
  int64_t total_prompt = 0;
  size_t first_count = 0, last_count = 0;
  for (size_t k = 0; k < reqs.size(); ++k) {
    size_t n = reqs[k]["body"]["messages"].size();
    int64_t prompt = reqs[k]["cache"]["prompt_tokens"], cached = reqs[k]["cache"]["cache_n"];
    total_prompt += prompt;
    if (k == 0) first_count = n;
    last_count = n;
    double ret = 0;
    if (k > 0) {
      int64_t before = reqs[k - 1]["cache"]["prompt_tokens"];
      ret =
          100.0 * std::min<double>(1.0, static_cast<double>(cached) / static_cast<double>(before));
      retention.push_back(ret);
    }
    std::printf("%7zu  %8zu  %13lld  %6lld  %s\n", k, n, static_cast<long long>(prompt),
                static_cast<long long>(cached), k == 0 ? "-" : (std::to_string(ret) + "%").c_str());
  }
  std::sort(retention.begin(), retention.end());
  double median = retention.empty() ? 0 : retention[retention.size() / 2];
  double min = retention.empty() ? 0 : retention.front();
  std::printf(
      "task_life: answers=%d requests=%zu messages %zu..%zu (+%.2f per answer) "
      "retention median=%.2f%% min=%.2f%% prompt_tokens_total=%lld\n",
      answers, reqs.size(), first_count, last_count,
      answers ? static_cast<double>(last_count - first_count) / answers : 0.0, median, min,
      static_cast<long long>(total_prompt));
  return 0;
}
