// ServeEngineTest: starts the real `maestro serve` (API + workers + piece
// engine) against the real `maestro-fakellm` with a test's script, and talks
// to them over loopback HTTP like a client would. Shared by the engine-driven
// API tests and the CLI client test.
//
// Thread safety: one test thread, except helpers documented otherwise.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/json.h"
#include "fakellm_process.h"
#include "store/sqlite/sqlite_store.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace maestro::testing {

using namespace std::chrono_literals;

class ServeEngineTest : public ::testing::Test {
 protected:
  // Writes `replies` as the fake's script, starts fakellm and serve.
  // extra_config_ (ExtraConfig) is appended to maestro.yaml; serve_env_ is
  // added to serve's environment.
  void Start(const Json& replies, int workers = 2) {
    std::ofstream(dir_.File("script.json"))
        << Json{{"replies", replies}, {"default", {{"text", "script exhausted"}}}}.dump();
    std::vector<std::string> fake_args = {"--script", dir_.File("script.json")};
    fake_args.insert(fake_args.end(), fake_args_.begin(), fake_args_.end());
    fake_ = std::make_unique<FakeLlmProcess>(fake_args);
    port_ = FreePort();
    const std::string installer = MAESTRO_TEST_INSTALLER;
    std::ofstream(dir_.File("maestro.yaml"))
        << "workers: " << workers << "\n"
        << "log:\n  level: info\n"
        << "jobs:\n  poll_interval_ms: 50\n  heartbeat_ms: 200\n  shutdown_grace_ms: 1000\n"
        << "  retry:\n    base_delay_ms: 100\n    max_delay_ms: 200\n    max_attempts: "
        << max_attempts_ << "\n"
        << extra_jobs_config_ << "llm:\n  base_url: " << LlmBaseUrl()
        << "\n  provider: " << llm_provider_ << "\n  model: fake\n  max_attempts: 1\n"
        << "  context_length: 1000000\n"
        << extra_llm_config_ << "packages:\n  installers:\n    fakeeco: \"/bin/sh " << installer
        << " {target} {name} {version}\"\n  readonly_paths: ["
        << std::filesystem::path(installer).parent_path().string() << "]\n"
        << ExtraConfig();
    StartServe(serve_env_);
  }

  // Starts `maestro serve` on the config, data dir and port of Start();
  // `env` adds variables (MAESTRO_CRASH_AT for a kill-point run).
  void StartServe(const std::map<std::string, std::string>& env = {}, bool wait_healthy = true) {
    std::map<std::string, std::string> all = {{"MAESTRO_DATA_DIR", DataDir()},
                                              {"MAESTRO_LISTEN", Listen()},
                                              {"MAESTRO_ADMIN_TOKEN", "tok"}};
    for (const auto& [k, v] : env) all[k] = v;
    ++serve_runs_;
    serve_ = std::make_unique<Process>(
        std::vector<std::string>{MAESTRO_BIN, "--config", dir_.File("maestro.yaml"), "serve"}, all,
        dir_.File("serve" + std::to_string(serve_runs_) + ".out"),
        dir_.File("serve" + std::to_string(serve_runs_) + ".err"));
    if (!wait_healthy) return;
    httplib::Client c("127.0.0.1", port_);
    for (int i = 0; i < 1000; ++i) {
      if (auto r = c.Get("/api/health"); r && r->status == 200) return;
      if (!serve_->running()) break;
      std::this_thread::sleep_for(10ms);
    }
    FAIL() << "maestro serve did not come up:\n" << serve_->Stderr();
  }

  // Stops serve (SIGTERM, as an operator would) and starts it again on the
  // same data: a restart between two steps of a task's life.
  void RestartServe(const std::map<std::string, std::string>& env = {}) {
    serve_->Signal(SIGTERM);
    ASSERT_TRUE(serve_->Wait(std::chrono::seconds(20)).has_value()) << LogTail();
    StartServe(env);
  }

  // extra_config_ with "{llm_base_url}" replaced by the fake's URL (known
  // only once it runs), e.g. for an `llm_profiles:` entry on the same fake.
  std::string ExtraConfig() const {
    std::string text = extra_config_;
    const std::string key = "{llm_base_url}";
    for (auto at = text.find(key); at != std::string::npos; at = text.find(key)) {
      text.replace(at, key.size(), fake_->base_url());
    }
    return text;
  }

  // The fake's base URL for the profile's provider: the Gemini API lives
  // under /v1beta, the others under /v1.
  std::string LlmBaseUrl() const {
    std::string url = fake_->base_url();
    return llm_provider_ == "gemini" ? url + "beta" : url;
  }

  std::string DataDir() const { return dir_.File("data"); }
  std::string Listen() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string ServerUrl() const { return "http://" + Listen(); }

  httplib::Client Client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_bearer_token_auth("tok");
    c.set_read_timeout(30, 0);
    return c;
  }

  // POST; returns {status, body}.
  std::pair<int, Json> Post(const std::string& path, const Json& body) const {
    auto r = Client().Post(path, body.dump(), "application/json");
    if (!r) return {0, Json()};
    return {r->status, Json::parse(r->body, nullptr, false)};
  }
  std::pair<int, Json> GetWithStatus(const std::string& path,
                                     const std::string& token = "tok") const {
    httplib::Client c("127.0.0.1", port_);
    if (!token.empty()) c.set_bearer_token_auth(token);
    auto r = c.Get(path);
    if (!r) return {0, Json()};
    return {r->status, Json::parse(r->body, nullptr, false)};
  }
  Json Get(const std::string& path) const {
    auto r = Client().Get(path);
    return r ? Json::parse(r->body, nullptr, false) : Json();
  }

  // Creates a task; returns the reply ({task, job}).
  Json Create(const std::string& instruction, const std::string& piece = "chat") {
    auto [status, body] =
        Post("/api/local/tasks", {{"instruction", instruction}, {"piece", piece}});
    EXPECT_EQ(status, 201) << body.dump();
    return body;
  }
  std::string TaskPath(const Json& created) const {
    return "/api/local/tasks/" + created["task"]["id"].get<std::string>();
  }

  // Polls GET /tasks/:id until `pred(job)` holds for the job `job_id`.
  Json WaitJob(const std::string& task_id, const std::string& job_id,
               const std::function<bool(const Json&)>& pred,
               std::chrono::milliseconds limit = 20s) const {
    Json job;
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
      Json t = Get("/api/local/tasks/" + task_id);
      for (const auto& j : t.value("jobs", Json::array())) {
        if (j["id"] == job_id) job = j;
      }
      if (!job.is_null() && pred(job)) return job;
      std::this_thread::sleep_for(10ms);
    }
    ADD_FAILURE() << "job " << job_id << " did not reach the state; last: " << job.dump()
                  << "\nserve log tail:\n"
                  << LogTail();
    return job;
  }
  Json WaitStatus(const Json& created, const std::string& status,
                  std::chrono::milliseconds limit = 20s) const {
    return WaitJob(
        created["task"]["id"], created["job"]["id"],
        [&](const Json& j) { return j["status"] == status; }, limit);
  }

  // The fake's request log (each with the request `body`).
  Json FakeRequests() const {
    httplib::Client c("127.0.0.1", fake_->port());
    auto r = c.Get("/v1/_requests");
    return r && r->status == 200 ? Json::parse(r->body)["requests"] : Json::array();
  }
  void WaitFakeRequests(size_t n, std::chrono::milliseconds limit = 20s) const {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (FakeRequests().size() < n && std::chrono::steady_clock::now() < end) {
      std::this_thread::sleep_for(10ms);
    }
    ASSERT_GE(FakeRequests().size(), n) << LogTail();
  }

  // All events of a task (JSON polling route).
  Json Events(const std::string& task_id) const {
    Json all = Json::array();
    std::string after;
    while (true) {
      Json page = Get("/api/local/tasks/" + task_id + "/events" +
                      (after.empty() ? "" : "?after=" + after))["events"];
      if (!page.is_array() || page.empty()) return all;
      for (auto& e : page) all.push_back(e);
      after = page.back()["id"].get<std::string>();
    }
  }

  // Grants of a task, read from the server's database (a second reader).
  int CountGrantsInDb(const std::string& task_id) const {
    auto store = SqliteStore::Open(DataDir() + "/maestro.db", StoreOptions{});
    if (!store.ok()) {
      ADD_FAILURE() << store.status().ToString();
      return -1;
    }
    auto grants = (*store)->ListGrants(task_id);
    return grants.ok() ? static_cast<int>(grants->size()) : -1;
  }

  // Shown with a failed wait; a fixture with more processes adds their logs.
  virtual std::string LogTail() const {
    std::string err = serve_ ? serve_->Stderr() : "";
    return err.size() > 4000 ? err.substr(err.size() - 4000) : err;
  }

  // Appended to maestro.yaml by Start (top-level sections: spaces, llm_profiles...).
  std::string extra_config_;
  std::string extra_jobs_config_;  // more keys of the `jobs:` section (two-space indent)
  std::string extra_llm_config_;   // more keys of the `llm:` section (two-space indent)
  // The `llm:` profile's provider (issue 50): anthropic and gemini talk to
  // the fake's /v1/messages and /v1beta/models/... routes.
  std::string llm_provider_ = "openai";
  std::vector<std::string> fake_args_;  // more maestro-fakellm arguments
  int max_attempts_ = 3;                // jobs.retry.max_attempts
  // Added to serve's environment by Start (e.g. a PATH with a fake binary).
  std::map<std::string, std::string> serve_env_;
  TempDir dir_;
  int port_ = 0;
  std::unique_ptr<FakeLlmProcess> fake_;
  std::unique_ptr<Process> serve_;
  int serve_runs_ = 0;
};

// The text of every message of a logged fake request, joined.
inline std::string MessagesText(const Json& logged) {
  std::string out;
  for (const auto& m : logged["body"].value("messages", Json::array())) out += m.dump() + "\n";
  return out;
}

inline bool Contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

// A scripted reply that answers only a request whose last message contains
// `last_message_contains`.
inline Json Matching(Json reply, const std::string& last_message_contains) {
  reply["match"] = {{"last_message_contains", last_message_contains}};
  return reply;
}

// The logged fake requests whose messages mention `needle`.
inline Json RequestsWith(const Json& all, const std::string& needle) {
  Json out = Json::array();
  for (const auto& r : all) {
    if (Contains(MessagesText(r), needle)) out.push_back(r);
  }
  return out;
}

}  // namespace maestro::testing
