// BrowserCallServicer (browser/browser_call_servicer.h) with Debian's real
// Chromium (in bubblewrap, as in production) and a real SqliteStore: it
// writes nothing while no browser is open; it announces the job it holds
// under the worker id that ran it; it runs only the calls addressed to that
// worker id (one for another worker stays pending); it answers a screenshot
// with the PNG and re-validates each input row (a forged key, text over the
// limit, a kind that differs from the request: failed, naming the field);
// and when the job row shows the job ran on another process since, it
// closes its browser and drops its holder row.
#include "browser/browser_call_servicer.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <thread>

#include "browser/live_input.h"
#include "support/store_fixture.h"

namespace maestro::browser {
namespace {

class BrowserCallServicerTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    server_.Get("/form", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("<html><body><main><input id=\"q\"></main></body></html>", "text/html");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    BrowserConfig config;
    config.allowed_hosts = {"127.0.0.1"};
    service_ = std::make_unique<BrowserService>(config, dir_.File("data"), Env::Default(), nullptr);
    servicer_ = std::make_unique<BrowserCallServicer>(*store_, *service_, "h:1");
  }
  void TearDown() override {
    servicer_.reset();
    service_.reset();
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }
  // A job that ran on worker h:1:w0 and parked on a login.
  Job Parked() {
    auto created = NewTaskWith("research");
    Job j = Claim("h:1:w0");
    EXPECT_TRUE(
        store_->FinishJob(LeaseOf(j), JobOutcome::WaitingHuman("browser_login", "browse")).ok());
    task_id_ = created.task.id;
    return j;
  }
  BrowserCall Call(const std::string& job, const std::string& worker, const std::string& kind,
                   const Json& request = Json::object()) {
    BrowserCall c;
    c.job_id = job;
    c.worker_id = worker;
    c.kind = kind;
    c.request = request.dump();
    auto added = store_->AddBrowserCall(c, 16);
    EXPECT_TRUE(added.ok()) << added.status().ToString();
    return added.ok() ? *added : BrowserCall{};
  }
  BrowserCall Reread(const BrowserCall& c) {
    auto got = store_->GetBrowserCall(c.id);
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    return got.ok() ? *got : BrowserCall{};
  }

  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::string task_id_;
  std::unique_ptr<BrowserService> service_;
  std::unique_ptr<BrowserCallServicer> servicer_;
};

TEST_F(BrowserCallServicerTest, RunsOnlyItsOwnCallsRevalidatesInputAndLetsGoWhenTheJobMoves) {
  Job job = Parked();
  // No browser open: nothing is announced.
  servicer_->Tick();
  EXPECT_EQ(store_->GetBrowserHolder(job.id).status().code(), StatusCode::kNotFound);

  auto session = service_->ForJob(job.id, task_id_, "");
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  ASSERT_TRUE((*session)->Open("http://127.0.0.1:" + std::to_string(port_) + "/form").ok());
  servicer_->Tick();
  auto holder = store_->GetBrowserHolder(job.id);
  ASSERT_TRUE(holder.ok()) << holder.status().ToString();
  EXPECT_EQ(holder->worker_id, "h:1:w0");

  BrowserCall other = Call(job.id, "h:2:w0", "screenshot");
  BrowserCall shot = Call(job.id, "h:1:w0", "screenshot");
  BrowserCall text = Call(job.id, "h:1:w0", "text", {{"type", "text"}, {"text", "hello"}});
  BrowserCall forged_key = Call(job.id, "h:1:w0", "key", {{"type", "key"}, {"key", "F13"}});
  BrowserCall long_text =
      Call(job.id, "h:1:w0", "text", {{"type", "text"}, {"text", std::string(5000, 'x')}});
  BrowserCall mismatch = Call(job.id, "h:1:w0", "text", {{"type", "key"}, {"key", "Enter"}});
  BrowserCall garbage = Call(job.id, "h:1:w0", "click");
  servicer_->Tick();

  EXPECT_EQ(Reread(other).status, "pending") << "a call for another worker was run";
  BrowserCall s = Reread(shot);
  EXPECT_EQ(s.status, "done") << s.error;
  EXPECT_EQ(s.answer.substr(0, 4), "\x89PNG");
  EXPECT_EQ(Reread(text).status, "done") << Reread(text).error;
  for (const auto& [call, field] : std::vector<std::pair<BrowserCall, std::string>>{
           {forged_key, "key"}, {long_text, "text"}, {mismatch, "type"}, {garbage, "type"}}) {
    BrowserCall got = Reread(call);
    EXPECT_EQ(got.status, "failed") << call.request;
    EXPECT_EQ(got.error_code, static_cast<int>(StatusCode::kInvalidArgument)) << call.request;
    EXPECT_EQ(got.error_field, field) << call.request << ": " << got.error;
  }

  // A done call marks the hand-over; the next login page is reported, not parked.
  BrowserCall done = Call(job.id, "h:1:w0", "done");
  servicer_->Tick();
  EXPECT_EQ(Reread(done).status, "done");
  EXPECT_TRUE(service_->TakeLoginHandedOver(job.id));

  // The job resumed unpinned and another process's worker claimed it: the
  // browser here closes and the holder row goes.
  ASSERT_TRUE(store_->ResumeBrowserLogin(job.id, "").ok());
  EXPECT_EQ(Claim("h:9:w0").id, job.id);
  servicer_->Tick();
  EXPECT_EQ(service_->Find(job.id), nullptr);
  EXPECT_EQ(store_->GetBrowserHolder(job.id).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(Reread(other).status, "pending");
}

TEST_F(BrowserCallServicerTest, ALaunchInAnotherProcessWaitsUntilTheHolderLetsGo) {
  Job job = Parked();
  auto a = service_->ForJob(job.id, task_id_, "");  // process A (h:1) holds the browser
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  servicer_->Tick();
  // Resumed without the live view (a comment) and claimed by process B.
  ASSERT_TRUE(store_->ResumeBrowserLogin(job.id, "").ok());
  EXPECT_EQ(Claim("h:2:w0").id, job.id);
  BrowserConfig config;
  config.allowed_hosts = {"127.0.0.1"};
  BrowserService b(config, dir_.File("data"), Env::Default(), nullptr);  // the same data dir
  BrowserCallServicerOptions o;
  o.clock = &clock_;
  BrowserCallServicer b_servicer(*store_, b, "h:2", o);
  b_servicer.Start();
  // A's next round comes 2 s later (a launch takes ~1 s): B's launch waits for it.
  std::thread a_round([this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(2000));
    servicer_->Tick();
  });
  const auto t0 = std::chrono::steady_clock::now();
  auto launched = b.ForJob(job.id, task_id_, "");
  const auto waited = std::chrono::steady_clock::now() - t0;
  a_round.join();
  ASSERT_TRUE(launched.ok()) << launched.status().ToString();
  EXPECT_GE(waited, std::chrono::milliseconds(2000)) << "B started Chromium beside A's";
  EXPECT_EQ(service_->Find(job.id), nullptr) << "A's browser is still open";
  EXPECT_TRUE((*launched)->alive());
  b_servicer.Stop();
  b.CloseJob(job.id);
}

TEST(LiveInputTest, OneValidationNamesTheField) {
  EXPECT_TRUE(ParseLiveInput({{"type", "click"}, {"x", 1.5}, {"y", 2}}).ok());
  EXPECT_EQ(ParseLiveInput({{"type", "click"}, {"x", -1}, {"y", 2}}).status().field(), "x");
  EXPECT_EQ(ParseLiveInput({{"type", "click"}, {"x", 1}, {"y", "2"}}).status().field(), "y");
  EXPECT_EQ(ParseLiveInput({{"type", "text"}}).status().field(), "text");
  EXPECT_EQ(ParseLiveInput({{"type", "key"}, {"key", "Escape"}}).status().field(), "key");
  EXPECT_EQ(ParseLiveInput({{"type", 3}}).status().field(), "type");
  EXPECT_EQ(ParseLiveInput(Json::array()).status().field(), "type");
  auto text = ParseLiveInput({{"type", "text"}, {"text", std::string("a\xff", 2)}});
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->text, std::string("a\xff", 2)) << "made valid UTF-8";
  EXPECT_EQ(ParseLiveInput(text->ToJson())->text, text->text);
}

}  // namespace
}  // namespace maestro::browser
