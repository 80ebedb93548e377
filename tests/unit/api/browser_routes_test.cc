// The live-view routes (api/routes_browser.cc) when the job's browser is held
// by another process: an in-process ApiServer with no browsers of its own
// over a real SqliteStore, and a thread standing in for the holder's
// BrowserCallServicer (it answers the calls addressed to it through the
// store). Screenshot bytes, input and Done reach the holder; Done pins the
// resumed job to the holder until it is claimed, or releases the holder's
// browser and unpins it; bad input is 400 before any call is written;
// another user's job is 404 "no such job" with no call written; a holder that
// does not answer is 504 and its call is gone; a holder not seen lately is
// 404.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <thread>

#include "api/api_server.h"
#include "core/hash.h"
#include "support/store_fixture.h"

namespace maestro {
namespace {

using namespace std::chrono_literals;

constexpr const char* kHolder = "h:1:w0";

class BrowserRoutesTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    ASSERT_TRUE(store_->AddApiToken(Sha256Hex("alice-token"), "alice").ok());
    ASSERT_TRUE(store_->AddApiToken(Sha256Hex("bob-token"), "bob").ok());
    ApiOptions o;
    o.http.port = 0;
    o.admin_token = "adm";
    o.clock = &clock_;
    o.browser_call_timeout = 800ms;
    api_ = std::make_unique<ApiServer>(*store_, notifier_, o);
    auto port = api_->Start();
    ASSERT_TRUE(port.ok()) << port.status().ToString();
    port_ = *port;
  }
  void TearDown() override {
    StopHolder();
    api_->Stop();
  }

  httplib::Client Client(const std::string& token) {
    httplib::Client c("127.0.0.1", port_);
    c.set_bearer_token_auth(token);
    c.set_read_timeout(10s);
    return c;
  }
  std::pair<int, Json> Post(const std::string& path, const Json& body,
                            const std::string& token = "alice-token") {
    auto r = Client(token).Post(path, body.dump(), "application/json");
    if (!r) return {0, Json()};
    return {r->status, Json::parse(r->body, nullptr, false)};
  }
  // Alice's private task whose job ran on kHolder and parked on a login,
  // with kHolder's holder row.
  Job ParkOnLogin() {
    auto r = Client("alice-token")
                 .Post("/api/local/tasks", R"({"instruction":"log in"})", "application/json");
    EXPECT_TRUE(r && r->status == 201);
    Job j = Claim(kHolder);
    EXPECT_TRUE(
        store_->FinishJob(LeaseOf(j), JobOutcome::WaitingHuman("browser_login", "browse")).ok());
    EXPECT_TRUE(store_->PutBrowserHolders({{j.id, kHolder, 0}}).ok());
    base_ = "/api/local/jobs/" + j.id + "/browser";
    return j;
  }
  // The holder: answers each call addressed to it (a screenshot with
  // kPng); with `claim`, a "done" is followed by its worker claiming the job.
  void StartHolder(const std::string& job_id, bool claim) {
    holder_ = std::thread([this, job_id, claim] {
      while (!stop_) {
        auto calls = store_->PendingBrowserCalls(job_id, kHolder, 8);
        for (const auto& c : calls.ok() ? *calls : std::vector<BrowserCall>{}) {
          seen_.push_back(c.kind + " " + c.request);
          (void)store_->AnswerBrowserCall(c.id, kHolder, Status::Ok(),
                                          c.kind == "screenshot" ? kPng : "");
          if (c.kind == "done" && claim) claim_ = true;
        }
        if (claim_ && !claimed_) {
          ClaimFilter other;
          other.worker_id = "h:2:w0";  // another worker never gets the pinned job
          auto stolen = store_->ClaimNextJob(other, 30'000);
          if (stolen.ok() && stolen->has_value()) stolen_ = true;
          ClaimFilter f;
          f.worker_id = kHolder;
          auto c = store_->ClaimNextJob(f, 30'000);
          if (c.ok() && c->has_value()) claimed_ = true;
        }
        std::this_thread::sleep_for(5ms);
      }
    });
  }
  void StopHolder() {
    stop_ = true;
    if (holder_.joinable()) holder_.join();
  }
  size_t PendingCalls(const std::string& job_id) {
    auto p = store_->PendingBrowserCalls(job_id, kHolder, 100);
    return p.ok() ? p->size() : 999;
  }

  const std::string kPng = std::string("\x89PNG\r\n\x1a\n\0bytes", 14);
  notify::Notifier notifier_;
  std::unique_ptr<ApiServer> api_;
  int port_ = 0;
  std::string base_;
  std::thread holder_;
  std::atomic<bool> stop_{false}, claim_{false}, claimed_{false}, stolen_{false};
  std::vector<std::string> seen_;  // written by the holder thread; read after StopHolder
};

TEST_F(BrowserRoutesTest, ScreenshotInputAndDoneReachTheHolderAndTheJobResumesOnIt) {
  Job j = ParkOnLogin();
  StartHolder(j.id, /*claim=*/true);
  auto shot = Client("alice-token").Get(base_ + "/screenshot");
  ASSERT_TRUE(shot);
  ASSERT_EQ(shot->status, 200) << shot->body;
  EXPECT_EQ(shot->body, kPng);
  EXPECT_EQ(shot->get_header_value("Content-Type"), "image/png");
  EXPECT_EQ(Post(base_ + "/input", {{"type", "text"}, {"text", "alice"}}).first, 200);
  EXPECT_EQ(Post(base_ + "/input", {{"type", "click"}, {"x", 50.7}, {"y", 25}}).first, 200);
  // Refused before anything is written for the holder.
  auto [bad, why] = Post(base_ + "/input", {{"type", "key"}, {"key", "F13"}});
  EXPECT_EQ(bad, 400);
  EXPECT_EQ(why["error"].value("field", ""), "key") << why.dump();
  auto [big, big_why] =
      Post(base_ + "/input", {{"type", "text"}, {"text", std::string(5000, 'a')}});
  EXPECT_EQ(big, 400);
  EXPECT_EQ(big_why["error"].value("field", ""), "text");

  auto [code, out] = Post(base_ + "/done", Json::object());
  ASSERT_EQ(code, 200) << out.dump();
  EXPECT_EQ(out["resumed"], true);
  EXPECT_EQ(out["on_browser_holder"], true);
  StopHolder();
  EXPECT_TRUE(claimed_);
  EXPECT_FALSE(stolen_) << "a worker other than the holder claimed the pinned job";
  auto now = store_->GetJob(j.id);
  EXPECT_EQ(now->status, JobStatus::kRunning);
  EXPECT_EQ(now->worker_id, kHolder);
  EXPECT_EQ(now->required_worker, "") << "the pin lasts until the claim";
  ASSERT_EQ(seen_.size(), 4u);
  EXPECT_EQ(seen_[0], "screenshot {}");
  EXPECT_EQ(seen_[1], R"(text {"text":"alice","type":"text"})");
  EXPECT_EQ(seen_[2], R"(click {"type":"click","x":50,"y":25})");
  EXPECT_EQ(seen_[3], "done {}");
  // Done again: the job is not waiting on a login any more.
  EXPECT_EQ(Post(base_ + "/done", Json::object()).first, 409);
}

TEST_F(BrowserRoutesTest, DoneReleasesTheHoldersBrowserWhenItsWorkerDoesNotClaim) {
  Job j = ParkOnLogin();
  StartHolder(j.id, /*claim=*/false);
  auto [code, out] = Post(base_ + "/done", Json::object());
  ASSERT_EQ(code, 200) << out.dump();
  EXPECT_EQ(out["on_browser_holder"], false);
  StopHolder();
  ASSERT_EQ(seen_.size(), 2u);
  EXPECT_EQ(seen_[0], "done {}");
  EXPECT_EQ(seen_[1], "release {}") << "the holder lets go of the profile first";
  auto now = store_->GetJob(j.id);
  EXPECT_EQ(now->status, JobStatus::kQueued);
  EXPECT_EQ(now->required_worker, "") << "unpinned: any worker may run it";
  EXPECT_EQ(Claim("h:2:w0").id, j.id);
}

TEST_F(BrowserRoutesTest, AnotherUsersJobIsNoSuchJobAndNoCallIsWritten) {
  Job j = ParkOnLogin();
  auto shot = Client("bob-token").Get(base_ + "/screenshot");
  ASSERT_TRUE(shot);
  EXPECT_EQ(shot->status, 404);
  EXPECT_NE(shot->body.find("no such job"), std::string::npos) << shot->body;
  for (const char* path : {"/input", "/done"}) {
    auto [code, out] = Post(base_ + path, {{"type", "text"}, {"text", "x"}}, "bob-token");
    EXPECT_EQ(code, 404) << path;
    EXPECT_NE(out.dump().find("no such job"), std::string::npos) << out.dump();
    // Invalid input from bob is still "no such job": nothing about the job leaks.
    auto [bad, bad_out] = Post(base_ + path, {{"type", "nope"}}, "bob-token");
    EXPECT_EQ(bad, 404) << path;
  }
  EXPECT_EQ(PendingCalls(j.id), 0u) << "bob's requests reached the holder";
  EXPECT_EQ(store_->GetJob(j.id)->status, JobStatus::kWaitingHuman);
  EXPECT_EQ(Client("bob-token").Get("/api/local/jobs/nope/browser/screenshot")->status, 404);
}

TEST_F(BrowserRoutesTest, AHolderThatDoesNotAnswerIs504AndItsCallIsGone) {
  Job j = ParkOnLogin();  // nobody serves kHolder's calls
  const auto start = std::chrono::steady_clock::now();
  auto shot = Client("alice-token").Get(base_ + "/screenshot");
  ASSERT_TRUE(shot);
  EXPECT_EQ(shot->status, 504) << shot->body;
  EXPECT_NE(shot->body.find("did not answer"), std::string::npos) << shot->body;
  EXPECT_EQ(shot->body.find(kHolder), std::string::npos) << "the worker's host and pid";
  EXPECT_GE(std::chrono::steady_clock::now() - start, 800ms);
  EXPECT_EQ(PendingCalls(j.id), 0u);
  // Done still resumes the job (unpinned: the holder is not answering).
  auto [code, out] = Post(base_ + "/done", Json::object());
  EXPECT_EQ(code, 200) << out.dump();
  EXPECT_EQ(store_->GetJob(j.id)->status, JobStatus::kQueued);
  EXPECT_EQ(store_->GetJob(j.id)->required_worker, "");
}

TEST_F(BrowserRoutesTest, AHolderNotSeenLatelyIsNoLiveBrowser) {
  Job j = ParkOnLogin();
  clock_.Advance(6'000);  // no heartbeat for longer than browser_holder_fresh
  auto shot = Client("alice-token").Get(base_ + "/screenshot");
  ASSERT_TRUE(shot);
  EXPECT_EQ(shot->status, 404);
  EXPECT_NE(shot->body.find("has no live browser"), std::string::npos) << shot->body;
  EXPECT_EQ(Post(base_ + "/input", {{"type", "key"}, {"key", "Tab"}}).first, 404);
  EXPECT_EQ(PendingCalls(j.id), 0u);
}

}  // namespace
}  // namespace maestro
