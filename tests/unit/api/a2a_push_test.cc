// The A2A push notification configs (api/a2a_push.h) over a real
// SqliteStore: set (id defaults to the task's, the same id replaces), get
// (the first without an id), list, delete and the per-task limit — each
// user seeing and changing only their own configs of a shared task; URLs
// the egress policy refuses are refused at set time; configs outlive the
// notifier (a restart) and a new one delivers them; two notifiers on one
// database (two API processes) deliver each change once; and the delivery
// pool: one user's receivers that never answer do not hold another user's
// notification back. Delivery through the real server is covered by
// tests/integration/api_engine/a2a_server_test.cc.
#include "api/a2a_push.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "store/sqlite/sqlite_store.h"
#include "support/temp_dir.h"

namespace maestro::api::a2a {
namespace {

using Steady = std::chrono::steady_clock;

// A URL nothing listens on: the senders' POSTs fail fast.
constexpr const char* kDeadUrl = "http://127.0.0.1:1/hook";

PushConfig Config(const std::string& id, const std::string& token = "",
                  const std::string& url = kDeadUrl) {
  PushConfig c;
  c.id = id;
  c.url = url;
  c.token = token;
  return c;
}

PushOptions AllowLoopback() {
  PushOptions o;
  auto p = EgressPolicy::WithAllowList({"127.0.0.1"});
  EXPECT_TRUE(p.ok());
  o.egress = std::make_shared<const EgressPolicy>(*p);
  return o;
}

Result<TaskFacts> FactsOf(const std::string& task_id) {
  TaskFacts f;
  f.task.id = task_id;
  return f;
}

// A store for the configs (a real SqliteStore in a temp dir).
struct Db {
  testing::TempDir dir;
  std::unique_ptr<SqliteStore> store;
  Db() {
    auto s = SqliteStore::Open(dir.File("maestro.db"), StoreOptions{});
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    if (s.ok()) store = std::move(*s);
  }
};

bool WaitUntil(const std::function<bool()>& done, int ms = 5000) {
  const auto until = Steady::now() + std::chrono::milliseconds(ms);
  while (!done()) {
    if (Steady::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

class A2aPushTest : public ::testing::Test {
 protected:
  Db db_;
  notify::EventSignal signal_;
  A2aPushNotifier push_{*db_.store, signal_, FactsOf, AllowLoopback()};
};

TEST_F(A2aPushTest, SetGetListDelete) {
  EXPECT_EQ(push_.Get("t1", "alice", "").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(push_.List("t1", "alice")->empty());
  auto first = push_.Set("t1", "alice", Config(""));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->id, "t1") << "no id: the task's";
  ASSERT_TRUE(push_.Set("t1", "alice", Config("p2", "a")).ok());
  ASSERT_TRUE(push_.Set("t1", "alice", Config("p2", "b")).ok()) << "the same id replaces";
  ASSERT_EQ(push_.List("t1", "alice")->size(), 2u);
  EXPECT_EQ(push_.Get("t1", "alice", "")->id, "t1") << "without an id: the first";
  EXPECT_EQ(push_.Get("t1", "alice", "p2")->token, "b");
  EXPECT_FALSE(push_.Get("t1", "alice", "nope").ok());
  EXPECT_TRUE(push_.List("t2", "alice")->empty()) << "configs are per task";
  EXPECT_EQ(signal_.watchers(), 1u) << "one watch per task with configs";

  EXPECT_EQ(push_.Delete("t1", "alice", "nope").code(), StatusCode::kNotFound);
  EXPECT_TRUE(push_.Delete("t1", "alice", "p2").ok());
  EXPECT_TRUE(push_.Delete("t1", "alice", "t1").ok());
  EXPECT_TRUE(push_.List("t1", "alice")->empty());
  EXPECT_TRUE(WaitUntil([&] { return signal_.watchers() == 0u; }))
      << "no config left: the task is not watched";
}

TEST_F(A2aPushTest, AUserTakesAtMostTheLimitOnATask) {
  for (size_t i = 0; i < A2aPushNotifier::kMaxConfigsPerTask; ++i) {
    ASSERT_TRUE(push_.Set("t1", "alice", Config("p" + std::to_string(i))).ok());
  }
  auto over = push_.Set("t1", "alice", Config("one-more"));
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(over.status().field(), "pushNotificationConfig");
  EXPECT_TRUE(push_.Set("t1", "alice", Config("p0", "new")).ok()) << "replacing stays possible";
  EXPECT_TRUE(push_.Set("t1", "bob", Config("p0")).ok()) << "alice's configs are not bob's share";
}

// Two users on a shared task: neither sees, replaces nor deletes the
// other's config, even under the same (default) id.
TEST_F(A2aPushTest, EachUserSeesAndChangesOnlyTheirOwnConfigs) {
  ASSERT_TRUE(push_.Set("t1", "alice", Config("", "alice-secret")).ok());
  EXPECT_TRUE(push_.List("t1", "bob")->empty()) << "alice's token is never listed to bob";
  EXPECT_EQ(push_.Get("t1", "bob", "").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(push_.Get("t1", "bob", "t1").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(push_.Delete("t1", "bob", "t1").code(), StatusCode::kNotFound)
      << "bob cannot delete alice's config";

  auto bobs = push_.Set("t1", "bob", Config("", "bob-token"));
  ASSERT_TRUE(bobs.ok()) << bobs.status().ToString();
  EXPECT_EQ(bobs->id, "t1") << "the default id, now unique per user";
  EXPECT_EQ(push_.Get("t1", "alice", "t1")->token, "alice-secret") << "bob replaced nothing";
  ASSERT_EQ(push_.List("t1", "bob")->size(), 1u);
  EXPECT_EQ((*push_.List("t1", "bob"))[0].token, "bob-token");

  EXPECT_TRUE(push_.Delete("t1", "bob", "t1").ok());
  ASSERT_TRUE(push_.Get("t1", "alice", "t1").ok()) << "bob's delete took only his own";
  EXPECT_EQ(push_.Get("t1", "alice", "t1")->token, "alice-secret");
  EXPECT_EQ(push_.List("t1", "alice")->size(), 1u);
}

// A task whose newest job moves through `steps` (a status change per step).
class SteppingTask {
 public:
  void Step(JobStatus status) {
    std::lock_guard<std::mutex> lock(mu_);
    Job j;
    j.id = "j" + std::to_string(++n_);
    j.status = status;
    jobs_.push_back(j);
  }
  A2aPushNotifier::ReadFn Reader() {
    return [this](const std::string& task_id) -> Result<TaskFacts> {
      std::lock_guard<std::mutex> lock(mu_);
      TaskFacts f;
      f.task.id = task_id;
      f.jobs = jobs_;
      return f;
    };
  }

 private:
  std::mutex mu_;
  int n_ = 0;
  std::vector<Job> jobs_;
};

// Counts POSTs per (token, status state + job) at 127.0.0.1.
class Receiver {
 public:
  Receiver() {
    server_.Post("/push", [this](const httplib::Request& req, httplib::Response& res) {
      auto body = Json::parse(req.body, nullptr, false);
      std::string key = req.get_header_value("X-A2A-Notification-Token");
      if (!body.is_discarded()) {
        key += "|" + body["status"]["state"].get<std::string>();
      }
      std::lock_guard<std::mutex> lock(mu_);
      got_.push_back(key);
      res.status = 204;
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~Receiver() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/push"; }
  std::vector<std::string> got() {
    std::lock_guard<std::mutex> lock(mu_);
    return got_;
  }
  size_t count() { return got().size(); }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> got_;
};

PushOptions FastPoll() {
  PushOptions o = AllowLoopback();
  o.poll_ms = 50;  // other "processes'" commits are seen by the poll
  return o;
}

// A restart: the config set through one notifier is read, listed and
// served by a new one on the same database, with no Set after the restart.
TEST(A2aPushDurable, ConfigsSurviveARestartAndTheNewNotifierDeliversTheNextChange) {
  Receiver receiver;
  SteppingTask task;
  task.Step(JobStatus::kQueued);
  testing::TempDir dir;
  StoreOptions so;
  {
    auto store = SqliteStore::Open(dir.File("maestro.db"), so);
    ASSERT_TRUE(store.ok());
    notify::EventSignal signal;
    A2aPushNotifier push(**store, signal, task.Reader(), FastPoll());
    ASSERT_TRUE(push.Set("t1", "alice", Config("c1", "alice-tok", receiver.url())).ok());
    ASSERT_TRUE(WaitUntil([&] { return receiver.count() == 1; })) << "the current status";
  }
  task.Step(JobStatus::kRunning);  // while no notifier runs
  auto store = SqliteStore::Open(dir.File("maestro.db"), so);
  ASSERT_TRUE(store.ok());
  notify::EventSignal signal;
  A2aPushNotifier push(**store, signal, task.Reader(), FastPoll());
  auto got = push.Get("t1", "alice", "c1");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->token, "alice-tok");
  EXPECT_EQ(got->url, receiver.url());
  EXPECT_EQ(push.List("t1", "alice")->size(), 1u);
  EXPECT_EQ(push.Get("t1", "bob", "c1").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(push.Delete("t1", "bob", "c1").code(), StatusCode::kNotFound);
  ASSERT_TRUE(WaitUntil([&] { return receiver.count() == 2; }))
      << "the change made while down, delivered after the restart";
  task.Step(JobStatus::kSucceeded);
  signal.Notify({{"t1", "", "job.status"}});
  ASSERT_TRUE(WaitUntil([&] { return receiver.count() == 3; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // several polls
  const auto all = receiver.got();
  ASSERT_EQ(all.size(), 3u) << "each change once";
  EXPECT_EQ(all[0], "alice-tok|submitted");
  EXPECT_EQ(all[1], "alice-tok|working");
  EXPECT_EQ(all[2], "alice-tok|completed");
  EXPECT_TRUE((*store)->ListOpenA2aPushConfigs(10)->empty()) << "a terminal state closes it";
}

// Two API processes on one database (two stores, two notifiers, each its
// own EventSignal): every status change reaches the receiver exactly once.
TEST(A2aPushDurable, TwoNotifiersOnOneDatabaseDeliverEachChangeOnce) {
  Receiver receiver;
  SteppingTask task;
  task.Step(JobStatus::kQueued);
  testing::TempDir dir;
  auto a = SqliteStore::Open(dir.File("maestro.db"), StoreOptions{});
  auto b = SqliteStore::Open(dir.File("maestro.db"), StoreOptions{});
  ASSERT_TRUE(a.ok() && b.ok());
  notify::EventSignal signal_a;
  notify::EventSignal signal_b;
  A2aPushNotifier push_a(**a, signal_a, task.Reader(), FastPoll());
  A2aPushNotifier push_b(**b, signal_b, task.Reader(), FastPoll());
  ASSERT_TRUE(push_a.Set("t1", "alice", Config("c1", "a1", receiver.url())).ok());
  ASSERT_TRUE(push_b.Set("t1", "bob", Config("c1", "b1", receiver.url())).ok());
  ASSERT_TRUE(WaitUntil([&] { return receiver.count() >= 2; })) << "each config's current status";
  constexpr int kChanges = 20;
  for (int i = 0; i < kChanges; ++i) {
    task.Step(i % 2 == 0 ? JobStatus::kRunning : JobStatus::kQueued);
    // Both see the commit at once: the race the claim decides.
    signal_a.Notify({{"t1", "", "job.status"}});
    signal_b.Notify({{"t1", "", "job.status"}});
    const size_t want = 2u * (i + 2);
    ASSERT_TRUE(WaitUntil([&] { return receiver.count() >= want; }))
        << "change " << i << ": " << ::testing::PrintToString(receiver.got());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // several polls of both
  const auto all = receiver.got();
  std::printf("two notifiers, %d changes x 2 configs: %zu deliveries\n", kChanges + 1, all.size());
  EXPECT_EQ(all.size(), 2u * (kChanges + 1)) << "each change once per config";
}

TEST(A2aPushEgress, InternalUrlsAreRefusedWhenSet) {
  Db db;
  notify::EventSignal signal;
  A2aPushNotifier push(*db.store, signal, FactsOf);  // the default policy: no internal address
  for (const char* url :
       {"http://127.0.0.1:9/", "http://localhost/", "http://127.1/", "http://2130706433/",
        "http://0x7f000001/", "http://[::1]/", "http://0.0.0.0/", "http://user:pass@93.184.216.34/",
        "http://169.254.169.254/latest/meta-data/", "file:///etc/passwd"}) {
    auto set = push.Set("t1", "alice", Config("p", "", url));
    ASSERT_FALSE(set.ok()) << url;
    EXPECT_EQ(set.status().code(), StatusCode::kInvalidArgument) << url;
    EXPECT_EQ(set.status().field(), "url") << url;
  }
  EXPECT_TRUE(push.List("t1", "alice")->empty());
  EXPECT_EQ(signal.watchers(), 0u) << "nothing refused is watched";
  EXPECT_TRUE(db.store->ListOpenA2aPushConfigs(10)->empty()) << "nothing refused is stored";
}

// DNS rebinding: the name resolved to an allowed address when the config
// was set and to loopback at delivery; the delivery is checked again and
// refused, and the canary on loopback sees nothing.
TEST(A2aPushEgress, ANameThatRebindsToAnInternalAddressIsRefusedAtDelivery) {
  httplib::Server canary;
  std::atomic<int> hits{0};
  canary.Post("/push", [&](const httplib::Request&, httplib::Response& res) {
    ++hits;
    res.status = 204;
  });
  const int port = canary.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { canary.listen_after_bind(); });
  auto policy = EgressPolicy::WithAllowList({"127.0.0.2"});
  ASSERT_TRUE(policy.ok());
  auto lookups = std::make_shared<std::atomic<int>>(0);
  policy->set_resolver([lookups](const std::string&) -> Result<std::vector<IpAddress>> {
    const char* answer = (*lookups)++ == 0 ? "127.0.0.2" : "127.0.0.1";
    return std::vector<IpAddress>{*IpAddress::Parse(answer)};
  });
  PushOptions o;
  o.egress = std::make_shared<const EgressPolicy>(*policy);
  {
    Db db;
    notify::EventSignal signal;
    A2aPushNotifier push(*db.store, signal, FactsOf, o);
    auto set = push.Set("t1", "alice",
                        Config("", "", "http://rebind.test:" + std::to_string(port) + "/push"));
    ASSERT_TRUE(set.ok()) << set.status().ToString();
    for (int i = 0; i < 200 && *lookups < 2; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_GE(*lookups, 2) << "the delivery checked the name again";
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  canary.stop();
  serving.join();
  EXPECT_EQ(hits, 0);
}

// Accepts TCP connections into its backlog and never answers.
class Tarpit {
 public:
  Tarpit() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(listen(fd_, 128), 0);
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
  }
  ~Tarpit() { close(fd_); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/never"; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// Alice sets 20 configs at a receiver that never answers, then bob one at
// a receiver that does; returns how long bob's notification took (ms), or
// -1 if it never came.
int64_t BobsDelayBehindAlicesTarpits(PushOptions options) {
  Tarpit tarpit;
  std::atomic<int64_t> received_at_ms{0};
  httplib::Server receiver;
  receiver.Post("/push", [&](const httplib::Request&, httplib::Response& res) {
    received_at_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(Steady::now().time_since_epoch())
            .count();
    res.status = 204;
  });
  const int port = receiver.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { receiver.listen_after_bind(); });
  int64_t delay_ms = -1;
  {
    Db db;
    notify::EventSignal signal;
    A2aPushNotifier push(*db.store, signal, FactsOf, std::move(options));
    for (int i = 0; i < 20; ++i) {
      const std::string task = i < 10 ? "alice-1" : "alice-2";
      EXPECT_TRUE(push.Set(task, "alice", Config("p" + std::to_string(i), "", tarpit.url())).ok());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // alice's queue is in flight
    const auto sent = Steady::now();
    const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/push";
    EXPECT_TRUE(push.Set("bob-1", "bob", Config("", "", url)).ok());
    while (received_at_ms == 0 && Steady::now() - sent < std::chrono::seconds(10)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (received_at_ms != 0) {
      delay_ms =
          received_at_ms -
          std::chrono::duration_cast<std::chrono::milliseconds>(sent.time_since_epoch()).count();
    }
  }  // the destructor ends alice's delivery in flight instead of waiting it out
  receiver.stop();
  serving.join();
  return delay_ms;
}

// The pool: alice's tarpits (5 s each, one at a time: 100 s of her queue)
// hold one sender; bob's notification goes out on another at once.
TEST(A2aPushPool, OneUsersTarpitsDoNotDelayAnothersNotification) {
  PushOptions o = AllowLoopback();
  ASSERT_GT(o.senders, 1u);
  const int64_t delay_ms = BobsDelayBehindAlicesTarpits(o);
  std::printf("bob's notification behind alice's 20 tarpit configs: %lld ms\n",
              static_cast<long long>(delay_ms));
  ASSERT_GE(delay_ms, 0) << "bob's notification never arrived";
  EXPECT_LT(delay_ms, 2000);
}

// The control, with one sender and a 1 s timeout: the tarpit does hold a
// delivery, and the round-robin puts bob behind one of alice's deliveries,
// not behind all 20 (a single FIFO would take 20 s).
TEST(A2aPushPool, WithOneSenderBobWaitsForOneOfAlicesDeliveriesNotTwenty) {
  PushOptions o = AllowLoopback();
  o.senders = 1;
  o.total_timeout_ms = 1'000;
  const int64_t delay_ms = BobsDelayBehindAlicesTarpits(o);
  std::printf("one sender, 1 s timeout: bob's notification after %lld ms\n",
              static_cast<long long>(delay_ms));
  ASSERT_GE(delay_ms, 0) << "bob's notification never arrived";
  EXPECT_GE(delay_ms, 300) << "alice's tarpit holds the only sender";
  EXPECT_LT(delay_ms, 2000) << "bob is served after one of alice's deliveries";
}

}  // namespace
}  // namespace maestro::api::a2a
