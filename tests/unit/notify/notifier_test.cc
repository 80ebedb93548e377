// The Notifier (notify/notifier.h) over a real SqliteStore whose hooks are
// bound to it: a commit reaches the EventSignal's watchers, the webhook and
// Web Push dispatchers (real POSTs to receivers on 127.0.0.1, their poll
// interval set to a minute so only the Notifier's wake-up can explain a
// prompt delivery) and the worker pool's wake-up; and a Subscription
// cancelled while four threads commit is never called after Cancel returns
// (the subscriber is freed at once: ASan and TSan watch).
#include "notify/notifier.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <openssl/rand.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "notify/web_push.h"
#include "store/sqlite/sqlite_store.h"
#include "support/temp_dir.h"

namespace maestro::notify {
namespace {

using namespace std::chrono_literals;

constexpr int64_t kMinute = 60'000;

// Counts POSTs by path (/hook, /push/<name>); answers 204/201.
class Receiver {
 public:
  Receiver() {
    // One handler thread: the webhook and the push dispatcher post at once,
    // and two of cpp-httplib's (uninstrumented) pool threads touching its
    // shared state is a race report under TSan that is not ours.
    server_.new_task_queue = [] { return new httplib::ThreadPool(1); };
    server_.Post(R"(/(hook|push/\w+))",
                 [this](const httplib::Request& req, httplib::Response& res) {
                   std::lock_guard<std::mutex> lock(mu_);
                   ++seen_[req.path];
                   res.status = req.path == "/hook" ? 204 : 201;
                 });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~Receiver() {
    server_.stop();
    thread_.join();
  }
  std::string Url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  int Seen(const std::string& path) {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_[path];
  }
  // Waits up to `limit` for `n` POSTs to `path`.
  bool WaitFor(const std::string& path, int n, std::chrono::milliseconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (Seen(path) < n) {
      if (std::chrono::steady_clock::now() > end) return false;
      std::this_thread::sleep_for(10ms);
    }
    return true;
  }

 private:
  std::mutex mu_;
  std::map<std::string, int> seen_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

std::shared_ptr<const EgressPolicy> AllowLoopback() {
  auto allow = EgressPolicy::WithAllowList({"127.0.0.1"});  // the receivers are local
  EXPECT_TRUE(allow.ok());
  return std::make_shared<const EgressPolicy>(*allow);
}

class NotifierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StoreOptions so;
    notifier_.Bind(so);  // before the store opens: its hooks point here from the start
    auto s = SqliteStore::Open(dir_.File("maestro.db"), so);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
  }
  void TearDown() override {
    notifier_.StopDispatchers();  // they read the store
    store_.reset();
  }

  Store::CreatedTask CreateTaskOf(const std::string& owner = "alice") {
    NewTask t;
    t.instruction = "do it";
    t.piece = "chat";
    t.owner = owner;
    auto c = store_->CreateTask(t);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? *c : Store::CreatedTask{};
  }

  testing::TempDir dir_;
  Notifier notifier_;  // outlives the store
  std::unique_ptr<SqlStore> store_;
};

TEST_F(NotifierTest, CommitsFanOutToStreamsDispatchersAndThePoolWake) {
  Receiver receiver;
  // A browser of alice's, subscribed before the task (older subscriptions only).
  auto browser = push::VapidKey::Generate();
  ASSERT_TRUE(browser.ok());
  std::string auth(16, '\0');
  RAND_bytes(reinterpret_cast<unsigned char*>(auth.data()), 16);
  PushSubscription sub;
  sub.owner = "alice";
  sub.endpoint = receiver.Url("/push/alice");
  sub.p256dh = browser->PublicKeyB64();
  sub.auth = push::Base64UrlEncode(auth);
  ASSERT_TRUE(store_->AddPushSubscription(sub, 10).ok());

  WebhookOptions wo;
  wo.hooks = {WebhookConfig{receiver.Url("/hook"), "secret", {"task.created"}}};
  wo.poll_ms = kMinute;  // only a Notify wakes it within the test
  wo.timeout_ms = 2000;
  wo.egress = AllowLoopback();
  notifier_.StartWebhooks(*store_, wo);
  PushOptions po;
  po.key = std::make_shared<const push::VapidKey>(push::VapidKey::Generate().value());
  po.poll_ms = kMinute;
  po.timeout_ms = 2000;
  po.egress = AllowLoopback();
  Store* store = store_.get();
  po.compose = [store](const Event& e) -> std::optional<PushNotice> {
    if (e.type != "task.created") return std::nullopt;
    auto task = store->GetTask(e.task_id);
    if (!task.ok()) return std::nullopt;
    return PushNotice{task->owner, Json{{"task", e.task_id}}, "normal", e.created_at};
  };
  notifier_.StartPush(*store_, po);
  std::atomic<int> pool_wakes{0};
  auto pool = notifier_.Subscribe(Notifier::Topic::kJobAvailable, [&] { ++pool_wakes; });
  // Both dispatchers read the (event-less) table once at start, then sleep a
  // minute unless woken.
  std::this_thread::sleep_for(300ms);
  ASSERT_EQ(receiver.Seen("/hook"), 0);

  auto first = CreateTaskOf();
  EXPECT_GE(pool_wakes.load(), 1) << "the new job is claimable: the pool is woken";
  EXPECT_TRUE(receiver.WaitFor("/hook", 1, 10s)) << "the webhook was not woken by the commit";
  EXPECT_TRUE(receiver.WaitFor("/push/alice", 1, 10s)) << "push was not woken by the commit";

  // The task's stream and its job's status stream wake on their commits.
  std::atomic<int> task_wakes{0}, job_wakes{0};
  const uint64_t tw = notifier_.signal().WatchTask(first.task.id, [&] { ++task_wakes; });
  const uint64_t jw = notifier_.signal().WatchJobStatus(first.job.id, [&] { ++job_wakes; });
  CreateTaskOf("bob");  // another task's commit wakes neither
  EXPECT_EQ(task_wakes.load(), 0);
  EXPECT_EQ(job_wakes.load(), 0);
  ClaimFilter f;
  f.worker_id = "w1";
  auto claimed = store_->ClaimNextJob(f, 30'000);
  ASSERT_TRUE(claimed.ok() && claimed->has_value());
  ASSERT_EQ((*claimed)->id, first.job.id);
  EXPECT_GE(task_wakes.load(), 1);
  EXPECT_EQ(job_wakes.load(), 1) << "one job.status event: one wake";
  notifier_.signal().Unwatch(tw);
  notifier_.signal().Unwatch(jw);
  EXPECT_TRUE(receiver.WaitFor("/hook", 2, 10s)) << "bob's task.created";
  EXPECT_EQ(receiver.Seen("/push/alice"), 1) << "bob's task is not alice's notice";

  // Stopped dispatchers are unsubscribed: commits go on without them.
  notifier_.StopDispatchers();
  notifier_.StopDispatchers();  // idempotent
  EXPECT_EQ(notifier_.subscribers(), 1u) << "only the pool's wake is left";
  CreateTaskOf();
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(receiver.Seen("/hook"), 2);
  pool.Cancel();
  EXPECT_EQ(notifier_.subscribers(), 0u);
  const int wakes = pool_wakes.load();
  CreateTaskOf();
  EXPECT_EQ(pool_wakes.load(), wakes) << "a cancelled subscription is not called";
}

// The subscriber a round registers: freed right after Cancel, so a call
// that ran late would touch freed memory (ASan) or race (TSan).
struct Subscriber {
  std::atomic<int> calls{0};
  std::atomic<bool> inside{false};
  std::atomic<bool> cancelled{false};
  std::atomic<int> late{0};  // calls that began after Cancel returned
};

TEST_F(NotifierTest, ASubscriptionCancelledWhileFourThreadsCommitIsNeverCalledAfter) {
  std::atomic<bool> stop{false};
  std::atomic<int> store_commits{0}, hook_calls{0};
  std::vector<std::thread> committers;
  // Two threads commit through the real store (task creation: on_commit and
  // on_job_available), two call the hooks as the PostgreSQL listener does.
  for (int i = 0; i < 4; ++i) {
    committers.emplace_back([&, i] {
      while (!stop) {
        if (i < 2) {
          NewTask t;
          t.instruction = "x";
          t.piece = "chat";
          if (store_->CreateTask(t).ok()) ++store_commits;
        } else {
          notifier_.Committed({CommittedEvent{"t", "j", "job.status"}});
          notifier_.JobAvailable();
          ++hook_calls;
        }
      }
    });
  }
  int total_calls = 0, late_calls = 0, cancelled_mid_call = 0;
  constexpr int kRounds = 300;
  for (int round = 0; round < kRounds; ++round) {
    auto* s = new Subscriber;
    const auto topic = round % 2 ? Notifier::Topic::kCommit : Notifier::Topic::kJobAvailable;
    auto subscription = notifier_.Subscribe(topic, [s] {
      if (s->cancelled) ++s->late;
      s->inside = true;
      ++s->calls;
      std::this_thread::sleep_for(20us);  // widen the window for Cancel to land mid-call
      s->inside = false;
    });
    // Until it has been called (bounded), so Cancel meets live fan-outs.
    for (int i = 0; i < 200 && s->calls == 0; ++i) std::this_thread::sleep_for(50us);
    if (s->inside) ++cancelled_mid_call;  // Cancel must wait for this call
    subscription.Cancel();
    EXPECT_FALSE(s->inside) << "Cancel returned while the callback ran (round " << round << ")";
    s->cancelled = true;
    std::this_thread::sleep_for(100us);
    total_calls += s->calls;
    late_calls += s->late;
    delete s;
  }
  stop = true;
  for (auto& t : committers) t.join();
  EXPECT_EQ(late_calls, 0);
  EXPECT_GT(total_calls, kRounds / 2) << "the subscriptions were called while live";
  EXPECT_GT(store_commits.load(), 0);
  EXPECT_EQ(notifier_.subscribers(), 0u);
  std::cout << "[notifier] " << kRounds << " subscribe/cancel rounds during " << store_commits
            << " store commits (2 threads) and " << hook_calls
            << " hook fan-outs (2 threads): " << total_calls << " calls, " << cancelled_mid_call
            << " cancels begun mid-call, " << late_calls << " calls after cancel\n";
}

TEST_F(NotifierTest, MovedSubscriptionStaysOneAndASecondDispatcherStartIsIgnored) {
  std::atomic<int> calls{0};
  Notifier::Subscription a = notifier_.Subscribe(Notifier::Topic::kCommit, [&] { ++calls; });
  Notifier::Subscription b = std::move(a);
  EXPECT_FALSE(a.active());
  EXPECT_TRUE(b.active());
  a.Cancel();  // a moved-from subscription cancels nothing
  notifier_.Committed({});
  EXPECT_EQ(calls.load(), 1);
  Notifier::Subscription c = notifier_.Subscribe(Notifier::Topic::kCommit, [&] { calls += 100; });
  c = std::move(b);  // c's own subscription is cancelled by the assignment
  EXPECT_EQ(notifier_.subscribers(), 1u);
  notifier_.Committed({});
  EXPECT_EQ(calls.load(), 2);

  Receiver receiver;
  WebhookOptions wo;
  wo.hooks = {WebhookConfig{receiver.Url("/hook"), "secret", {}}};
  wo.poll_ms = kMinute;
  wo.egress = AllowLoopback();
  notifier_.StartWebhooks(*store_, wo);
  notifier_.StartWebhooks(*store_, wo);  // ignored (warned): one dispatcher per URL
  EXPECT_EQ(notifier_.subscribers(), 2u);
  CreateTaskOf();
  EXPECT_TRUE(receiver.WaitFor("/hook", 1, 10s));
  std::this_thread::sleep_for(300ms);
  const int hooks = receiver.Seen("/hook");
  auto all = store_->ListAllEvents("", 100);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(hooks, static_cast<int>(all->size())) << "each event once: one dispatcher";
}

}  // namespace
}  // namespace maestro::notify
