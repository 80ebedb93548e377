// The BrowseWeb live view across processes (issue 48 item 2): the real
// `maestro serve --workers 0` (the API only) and a separate `maestro worker`
// process on the same data dir (SQLite, one shared file), the scripted
// `maestro-fakellm` and Debian's Chromium, on a login page this test serves
// on 127.0.0.1. The worker's job parks on the login with its browser open
// in the WORKER process; a person, talking only to the API process, sees
// the page (screenshot), logs in (clicks, text, Enter) and presses Done;
// the job resumes on the worker holding that browser and finishes with the
// logged-in page. Another user gets 404 "no such job" on all three routes.
#include <dirent.h>
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <iostream>

#include "../api_engine/serve_fixture.h"
#include "login_site.h"

// A named namespace: the unity build compiles this file with
// browse_web_test.cc, whose helpers have the same names.
namespace maestro::testing::remote_live_view {

Json Browse(const Json& args) { return ToolCallReply("BrowseWeb", args); }

// Processes whose command line mentions `needle` (a task's browser profile).
int ProcessesWith(const std::string& needle) {
  int n = 0;
  DIR* d = opendir("/proc");
  if (!d) return -1;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::ifstream f(std::string("/proc/") + e->d_name + "/cmdline", std::ios::binary);
    std::string cmd((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (cmd.find(needle) != std::string::npos) ++n;
  }
  closedir(d);
  return n;
}

class RemoteLiveViewTest : public ServeEngineTest {
 protected:
  void TearDown() override {
    if (worker_) {
      worker_->Signal(SIGTERM);
      (void)worker_->Wait(std::chrono::seconds(20));
    }
  }
  // serve --workers 0 and one `maestro worker` process with one thread.
  void StartSplit(const Json& replies) {
    extra_config_ = "browser:\n  allowed_hosts: [\"127.0.0.1\"]\n  page_timeout_ms: 20000\n";
    Start(replies, /*workers=*/0);
    worker_ = std::make_unique<Process>(
        std::vector<std::string>{MAESTRO_BIN, "--config", dir_.File("maestro.yaml"), "worker",
                                 "--workers", "1"},
        std::map<std::string, std::string>{{"MAESTRO_DATA_DIR", DataDir()}},
        dir_.File("worker.out"), dir_.File("worker.err"));
    for (int i = 0; i < 1000 && !Contains(worker_->Stderr(), "maestro worker: data_dir="); ++i) {
      ASSERT_TRUE(worker_->running()) << worker_->Stderr();
      std::this_thread::sleep_for(10ms);
    }
  }
  std::string LogTail() const override {
    std::string w = worker_ ? worker_->Stderr() : "";
    if (w.size() > 3000) w = w.substr(w.size() - 3000);
    return "--- serve:\n" + ServeEngineTest::LogTail() + "\n--- worker:\n" + w;
  }
  std::string ToolResults() const {
    std::string out;
    for (const auto& r : FakeRequests()) {
      const Json body = r.contains("body") && r["body"].is_object() ? r["body"] : Json::object();
      for (const auto& m : body.value("messages", Json::array())) {
        const Json& content = m.contains("content") ? m["content"] : Json();
        if (m.value("role", "") == "tool" && content.is_string()) {
          out += content.get<std::string>() + "\n";
        }
      }
    }
    return out;
  }
  // Which worker ran the job, read from the database (a second reader).
  std::string WorkerOf(const std::string& job_id) const {
    auto store = SqliteStore::Open(DataDir() + "/maestro.db", StoreOptions{});
    if (!store.ok()) return store.status().ToString();
    auto job = (*store)->GetJob(job_id);
    return job.ok() ? job->worker_id : job.status().ToString();
  }
  std::string NewToken(const std::string& user) {
    auto [code, out] = Post("/api/local/tokens", {{"user", user}});
    EXPECT_EQ(code, 201) << out.dump();
    return out.value("token", "");
  }

  LoginSite site_;
  std::unique_ptr<Process> worker_;
};

TEST_F(RemoteLiveViewTest, ALoginParkOnAWorkerProcessIsCompletedThroughTheApiProcess) {
  const std::string priv = site_.Url("/private");
  StartSplit(Json::array(
      {Browse({{"action", "open"}, {"url", priv}}), Browse({{"action", "open"}, {"url", priv}}),
       Matching(ToolCallReply("complete", {{"status", "success"},
                                           {"result", "The report says SECRET-REPORT-42"}}),
                "SECRET-REPORT-42")}));
  Json created = Create("Read the private report", "research");
  WaitStatus(created, "waiting_human", 60s);
  Json job = Get(TaskPath(created))["latest_job"];
  ASSERT_EQ(job.value("wait_reason", ""), "browser_login") << job.dump();
  const std::string job_id = job["id"];
  const std::string base = "/api/local/jobs/" + job_id + "/browser";
  const std::string profile =
      DataDir() + "/tasks/" + created["task"]["id"].get<std::string>() + "/browser";
  // The browser runs beside the worker, not in serve (no worker threads).
  ASSERT_GT(ProcessesWith(profile), 0) << "no Chromium on the task's profile";
  EXPECT_TRUE(Contains(WorkerOf(job_id), ":" + std::to_string(worker_->pid()) + ":"))
      << WorkerOf(job_id);

  // Another user: no such job on every route, nothing reaches the browser.
  const std::string bob = NewToken("bob");
  ASSERT_FALSE(bob.empty());
  {
    httplib::Client c("127.0.0.1", port_);
    c.set_bearer_token_auth(bob);
    auto shot = c.Get(base + "/screenshot");
    ASSERT_TRUE(shot);
    EXPECT_EQ(shot->status, 404);
    EXPECT_TRUE(Contains(shot->body, "no such job")) << shot->body;
    for (const char* path : {"/input", "/done"}) {
      auto r = c.Post(base + path, R"({"type":"text","text":"mallory"})", "application/json");
      ASSERT_TRUE(r);
      EXPECT_EQ(r->status, 404) << path;
      EXPECT_TRUE(Contains(r->body, "no such job")) << r->body;
    }
  }

  // The live view through the API process: the page, then the login.
  auto shot = Client().Get(base + "/screenshot");
  ASSERT_TRUE(shot);
  ASSERT_EQ(shot->status, 200) << shot->body << LogTail();
  EXPECT_EQ(shot->get_header_value("Content-Type"), "image/png");
  EXPECT_EQ(shot->body.substr(0, 4), "\x89PNG");
  EXPECT_GT(shot->body.size(), 1000u);
  auto input = [&](const Json& body) {
    const auto t0 = std::chrono::steady_clock::now();
    auto [code, out] = Post(base + "/input", body);
    EXPECT_EQ(code, 200) << body.dump() << " " << out.dump();
    std::cout << "input " << body.value("type", "") << ": "
              << std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::steady_clock::now() - t0)
                     .count()
              << " ms\n";
  };
  for (int i = 0; i < 5; ++i) {  // the live view's refresh, as the UI polls it
    const auto t0 = std::chrono::steady_clock::now();
    auto again = Client().Get(base + "/screenshot");
    ASSERT_TRUE(again && again->status == 200);
    std::cout << "screenshot: "
              << std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::steady_clock::now() - t0)
                     .count()
              << " ms\n";
  }
  input({{"type", "click"}, {"x", 50}, {"y", 25}});
  input({{"type", "text"}, {"text", "alice"}});
  input({{"type", "click"}, {"x", 50}, {"y", 75}});
  input({{"type", "text"}, {"text", "pw"}});
  input({{"type", "key"}, {"key", "Enter"}});
  auto [bad, why] = Post(base + "/input", {{"type", "key"}, {"key", "F13"}});
  EXPECT_EQ(bad, 400) << why.dump();
  for (int i = 0; i < 200 && site_.logins() == 0; ++i) std::this_thread::sleep_for(50ms);
  ASSERT_EQ(site_.logins(), 1) << LogTail();

  const auto done_at = std::chrono::steady_clock::now();
  auto [code, out] = Post(base + "/done", Json::object());
  ASSERT_EQ(code, 200) << out.dump();
  std::cout << "done: "
            << std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - done_at)
                   .count()
            << " ms\n";
  EXPECT_EQ(out.value("resumed", false), true);
  EXPECT_EQ(out.value("on_browser_holder", false), true) << "the holder's worker took the job";
  Json done = WaitStatus(created, "succeeded", 60s);
  // The resumed job read the page with the session the person logged in with.
  EXPECT_TRUE(Contains(ToolResults(), "Welcome alice, SECRET-REPORT-42")) << ToolResults();
  EXPECT_FALSE(Contains(ToolResults(), "A person already logged in for you"));
  EXPECT_EQ(site_.logins(), 1);
  EXPECT_TRUE(Contains(WorkerOf(job_id), ":" + std::to_string(worker_->pid()) + ":"));
  Json final_job = Get(TaskPath(created))["latest_job"];
  EXPECT_EQ(final_job.value("result", ""), "The report says SECRET-REPORT-42");
  // Done again: not waiting on a login; and the browser ended with the job.
  auto [again, body] = Post(base + "/done", Json::object());
  EXPECT_EQ(again, 409) << body.dump();
  for (int i = 0; i < 100 && ProcessesWith(profile) > 0; ++i) std::this_thread::sleep_for(50ms);
  EXPECT_EQ(ProcessesWith(profile), 0);
  // The holder's row went with its browser: the live view says so.
  for (int i = 0; i < 60; ++i) {
    auto gone = Client().Get(base + "/screenshot");
    if (gone && gone->status == 404) break;
    std::this_thread::sleep_for(100ms);
  }
  auto gone = Client().Get(base + "/screenshot");
  ASSERT_TRUE(gone);
  EXPECT_EQ(gone->status, 404) << gone->body;
}

}  // namespace maestro::testing::remote_live_view
