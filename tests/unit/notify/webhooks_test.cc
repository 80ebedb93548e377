// Webhook delivery against a local httplib receiver on 127.0.0.1 (allowed by
// the tests' egress policy; the default policy refuses it).
#include "notify/webhooks.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <mutex>
#include <thread>

#include "support/store_fixture.h"

namespace maestro {
namespace {

using namespace std::chrono_literals;

// Records every POST; answers 500 to the first `fail_first` of them.
class Receiver {
 public:
  explicit Receiver(int fail_first = 0) : fail_first_(fail_first) {
    // One handler thread: two of cpp-httplib's (uninstrumented) pool
    // threads touching its shared state is a TSan race report not ours.
    server_.new_task_queue = [] { return new httplib::ThreadPool(1); };
    server_.Post("/hook", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mu_);
      if (seen_++ < fail_first_) {
        res.status = 500;
        return;
      }
      bodies_.push_back(req.body);
      signatures_.push_back(req.get_header_value("X-Maestro-Signature"));
      delivery_ids_.push_back(req.get_header_value("X-Maestro-Delivery"));
      res.status = 204;
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~Receiver() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/hook"; }
  size_t received() {
    std::lock_guard<std::mutex> lock(mu_);
    return bodies_.size();
  }
  bool WaitFor(size_t n) {
    for (int i = 0; i < 500 && received() < n; ++i) std::this_thread::sleep_for(10ms);
    return received() >= n;
  }

  std::mutex mu_;
  std::vector<std::string> bodies_, signatures_, delivery_ids_;

 private:
  int fail_first_;
  int seen_ = 0;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

class WebhookTest : public testing::StoreTest {
 protected:
  WebhookOptions Options(const std::string& url) {
    WebhookOptions o;
    o.hooks = {WebhookConfig{url, "hook-secret", {}}};
    o.initial_backoff_ms = 5;
    o.poll_ms = 20;
    o.timeout_ms = 2000;
    auto allow = EgressPolicy::WithAllowList({"127.0.0.1"});  // the receiver is local
    EXPECT_TRUE(allow.ok());
    o.egress = std::make_shared<const EgressPolicy>(*allow);
    return o;
  }
  size_t EventCount() {
    auto all = store_->ListAllEvents("", 10'000);
    return all.ok() ? all->size() : 0;
  }
};

TEST(HmacTest, MatchesRfc4231TestCase2) {
  EXPECT_EQ(HmacSha256Hex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST_F(WebhookTest, DeliversEveryEventSignedWithTheSecret) {
  Receiver rx;
  NewTaskWith("chat");
  size_t events = EventCount();
  ASSERT_GT(events, 0u);
  WebhookDispatcher d(*store_, Options(rx.url()));
  d.Start();
  ASSERT_TRUE(rx.WaitFor(events));
  d.Stop();
  std::lock_guard<std::mutex> lock(rx.mu_);
  for (size_t i = 0; i < rx.bodies_.size(); ++i) {
    EXPECT_EQ(rx.signatures_[i], "sha256=" + HmacSha256Hex("hook-secret", rx.bodies_[i]));
    Json body = Json::parse(rx.bodies_[i]);
    EXPECT_EQ(body["id"], rx.delivery_ids_[i]);
    EXPECT_FALSE(body["type"].get<std::string>().empty());
    EXPECT_EQ(rx.bodies_[i].find("hook-secret"), std::string::npos);
  }
  auto log = store_->ListDeliveries(100);
  ASSERT_TRUE(log.ok());
  EXPECT_EQ(log->size(), events);
  for (const auto& entry : *log) EXPECT_TRUE(entry.ok);
}

TEST_F(WebhookTest, RetriesWithBackoffAndLogsEachAttempt) {
  Receiver rx(/*fail_first=*/2);
  NewTaskWith("chat");
  size_t events = EventCount();
  WebhookDispatcher d(*store_, Options(rx.url()));
  d.Start();
  ASSERT_TRUE(rx.WaitFor(events));
  d.Stop();
  auto log = store_->ListDeliveries(100);
  ASSERT_TRUE(log.ok());
  int failed = 0;
  for (const auto& entry : *log) {
    if (!entry.ok) {
      ++failed;
      EXPECT_EQ(entry.http_status, 500);
      EXPECT_EQ(entry.error.find("hook-secret"), std::string::npos);
    }
  }
  EXPECT_EQ(failed, 2);
  EXPECT_EQ(log->size(), events + 2);
  auto m = store_->ComputeApiMetrics();
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->webhook_deliveries_failed, 2);
}

TEST_F(WebhookTest, GivesUpAfterMaxAttemptsAndMovesOn) {
  Receiver rx(/*fail_first=*/3);
  NewTaskWith("chat");
  size_t events = EventCount();
  auto o = Options(rx.url());
  o.max_attempts = 3;
  WebhookDispatcher d(*store_, o);
  d.Start();
  // The first event fails three times and is given up; the rest arrive.
  ASSERT_TRUE(rx.WaitFor(events - 1));
  d.Stop();
  std::lock_guard<std::mutex> lock(rx.mu_);
  EXPECT_EQ(rx.bodies_.size(), events - 1);
}

TEST_F(WebhookTest, EventsCommittedWhileStoppedAreDeliveredAfterRestartOnce) {
  Receiver rx;
  NewTaskWith("chat");
  size_t first = EventCount();
  {
    WebhookDispatcher d(*store_, Options(rx.url()));
    d.Start();
    ASSERT_TRUE(rx.WaitFor(first));
    d.Stop();
  }
  NewTaskWith("chat");  // while no dispatcher runs
  size_t total = EventCount();
  ASSERT_GT(total, first);
  Reopen();  // a restart: only the durable cursor remains
  WebhookDispatcher d(*store_, Options(rx.url()));
  d.Start();
  ASSERT_TRUE(rx.WaitFor(total));
  std::this_thread::sleep_for(100ms);  // a duplicate would arrive by now
  d.Stop();
  std::lock_guard<std::mutex> lock(rx.mu_);
  EXPECT_EQ(rx.bodies_.size(), total);
  std::set<std::string> ids(rx.delivery_ids_.begin(), rx.delivery_ids_.end());
  EXPECT_EQ(ids.size(), total);
}

TEST_F(WebhookTest, EventFilterLimitsWhatIsSent) {
  Receiver rx;
  NewTaskWith("chat");
  auto o = Options(rx.url());
  o.hooks[0].events = {"job.status"};
  WebhookDispatcher d(*store_, o);
  d.Start();
  ASSERT_TRUE(rx.WaitFor(1));
  std::this_thread::sleep_for(100ms);
  d.Stop();
  std::lock_guard<std::mutex> lock(rx.mu_);
  for (const auto& b : rx.bodies_) EXPECT_EQ(Json::parse(b)["type"], "job.status");
}

// Without `egress.allow` naming it, a receiver on loopback gets nothing:
// each event's one attempt is logged with the refusal, not retried, and the
// cursor moves on.
TEST_F(WebhookTest, AnInternalReceiverTheOperatorDidNotAllowIsNeverContacted) {
  Receiver rx;
  NewTaskWith("chat");
  size_t events = EventCount();
  ASSERT_GT(events, 0u);
  for (const std::string& url :
       {rx.url(), "http://localhost:" + rx.url().substr(rx.url().rfind(':') + 1)}) {
    auto o = Options(url);
    o.egress = std::make_shared<const EgressPolicy>();  // the default: nothing internal
    WebhookDispatcher d(*store_, o);
    d.Start();
    std::vector<WebhookDelivery> log;
    for (int i = 0; i < 300; ++i) {
      auto all = store_->ListDeliveries(1000);
      ASSERT_TRUE(all.ok());
      log.clear();
      for (const auto& entry : *all) {
        if (entry.url == url) log.push_back(entry);
      }
      if (log.size() >= events) break;
      std::this_thread::sleep_for(10ms);
    }
    std::this_thread::sleep_for(50ms);  // a retry would be logged by now
    d.Stop();
    EXPECT_EQ(rx.received(), 0u) << url;
    ASSERT_EQ(log.size(), events) << url << ": one attempt per event, no retry";
    for (const auto& entry : log) {
      EXPECT_FALSE(entry.ok);
      EXPECT_EQ(entry.attempt, 1);
      EXPECT_NE(entry.error.find("egress"), std::string::npos) << entry.error;
    }
  }
}

}  // namespace
}  // namespace maestro
