// A2A push-notification configs on both backends (issue 48 item 3,
// store/a2a_push_records.h): one row per (task, owner, id) replaced in
// place with its delivery state cleared, the per-owner cap on a task,
// every get, list and delete scoped to the owner — another user's config is
// kNotFound, removes nothing and never shows its token — the configs
// outlive the store object (a restart), and the delivery claim is won by
// exactly one of many threads of two store objects (two processes) racing
// on one status change.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "support/store_fixture.h"

namespace maestro {
namespace {

using testing::StoreConformance;

class A2aPushStoreTest : public StoreConformance {
 protected:
  Result<A2aPushConfigRecord> Put(const std::string& owner, const std::string& id,
                                  const std::string& url = "https://hooks.example.net/a",
                                  const std::string& task = "task-1", int cap = 3) {
    A2aPushConfigRecord c;
    c.task_id = task;
    c.owner = owner;
    c.id = id;
    c.url = url;
    c.token = "tok-" + owner + "-" + id;
    c.auth_scheme = "Bearer";
    c.credentials = "cred-" + owner;
    return store_->PutA2aPushConfig(c, cap);
  }
};

TEST_P(A2aPushStoreTest, PutKeepsEveryFieldAndReplacesInPlaceWithItsDeliveryCleared) {
  auto a = Put("alice", "c1");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_GT(a->created_at, 0);
  auto got = store_->GetA2aPushConfig("task-1", "alice", "c1");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->url, "https://hooks.example.net/a");
  EXPECT_EQ(got->token, "tok-alice-c1");
  EXPECT_EQ(got->auth_scheme, "Bearer");
  EXPECT_EQ(got->credentials, "cred-alice");
  EXPECT_EQ(got->sent_key, "");
  EXPECT_FALSE(got->done);

  auto claimed = store_->ClaimA2aPushDelivery("task-1", "alice", "c1", "", "completed", true);
  ASSERT_TRUE(claimed.ok() && *claimed);
  EXPECT_TRUE(store_->GetA2aPushConfig("task-1", "alice", "c1")->done);

  clock_.Advance(10);
  auto again = Put("alice", "c1", "https://hooks.example.net/b");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  auto list = store_->ListA2aPushConfigs("task-1", "alice");
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].url, "https://hooks.example.net/b");
  EXPECT_EQ((*list)[0].created_at, a->created_at) << "a replaced config keeps its age";
  EXPECT_EQ((*list)[0].sent_key, "") << "the current status goes to the new URL";
  EXPECT_FALSE((*list)[0].done);

  EXPECT_EQ(Put("", "c1").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Put("alice", "").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Put("alice", "c2", "").status().field(), "url");
  EXPECT_EQ(Put("alice", "c2", "https://x.example.net/", "").status().code(),
            StatusCode::kInvalidArgument);
}

TEST_P(A2aPushStoreTest, ACapPerOwnerAndTask) {
  ASSERT_TRUE(Put("alice", "c1").ok());
  clock_.Advance(1);
  ASSERT_TRUE(Put("alice", "c2").ok());
  clock_.Advance(1);
  ASSERT_TRUE(Put("alice", "c3").ok());
  auto over = Put("alice", "c4");
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(Put("alice", "c2", "https://hooks.example.net/z").ok())
      << "replacing a config at the cap is not a new one";
  EXPECT_TRUE(Put("bob", "c4").ok()) << "the cap is per owner";
  EXPECT_TRUE(Put("alice", "c4", "https://hooks.example.net/a", "task-2").ok()) << "and per task";
  auto first = store_->GetA2aPushConfig("task-1", "alice", "");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->id, "c1") << "no id: the owner's oldest";
}

TEST_P(A2aPushStoreTest, TheOldestIsTheFirstSetEvenWithinOneMillisecond) {
  ASSERT_TRUE(Put("alice", "zz").ok());  // the fake clock stands still
  ASSERT_TRUE(Put("alice", "aa").ok());
  ASSERT_TRUE(Put("alice", "mm").ok());
  auto first = store_->GetA2aPushConfig("task-1", "alice", "");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->id, "zz");
  auto list = store_->ListA2aPushConfigs("task-1", "alice");
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ((*list)[1].id, "aa");
  EXPECT_EQ((*list)[2].id, "mm");
}

TEST_P(A2aPushStoreTest, AnotherUsersConfigIsNotFoundAndUntouched) {
  ASSERT_TRUE(Put("alice", "same").ok());
  ASSERT_TRUE(Put("bob", "same", "https://bob.example.net/").ok());
  auto bobs = store_->GetA2aPushConfig("task-1", "bob", "same");
  ASSERT_TRUE(bobs.ok());
  EXPECT_EQ(bobs->token, "tok-bob-same") << "ids are per owner: no collision";
  EXPECT_EQ(store_->GetA2aPushConfig("task-1", "mallory", "same").status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(store_->GetA2aPushConfig("task-1", "mallory", "").status().code(),
            StatusCode::kNotFound);
  EXPECT_TRUE(store_->ListA2aPushConfigs("task-1", "mallory")->empty());
  EXPECT_EQ(store_->DeleteA2aPushConfig("task-1", "mallory", "same").code(), StatusCode::kNotFound);
  EXPECT_TRUE(store_->DeleteA2aPushConfig("task-1", "bob", "same").ok());
  EXPECT_EQ(store_->DeleteA2aPushConfig("task-1", "bob", "same").code(), StatusCode::kNotFound);
  auto alices = store_->ListA2aPushConfigs("task-1", "alice");
  ASSERT_TRUE(alices.ok());
  ASSERT_EQ(alices->size(), 1u) << "bob's delete of 'same' left alice's";
  EXPECT_EQ((*alices)[0].token, "tok-alice-same");
}

TEST_P(A2aPushStoreTest, OpenConfigsAreThoseNotDoneAndTheyOutliveTheStore) {
  ASSERT_TRUE(Put("alice", "c1", "https://a.example.net/", "task-b").ok());
  ASSERT_TRUE(Put("bob", "c1", "https://b.example.net/", "task-a").ok());
  ASSERT_TRUE(Put("carol", "c1", "https://c.example.net/", "task-c").ok());
  ASSERT_TRUE(*store_->ClaimA2aPushDelivery("task-c", "carol", "c1", "", "failed", true));
  ASSERT_TRUE(*store_->ClaimA2aPushDelivery("task-b", "alice", "c1", "", "working", false));
  Reopen();
  auto open = store_->ListOpenA2aPushConfigs(100);
  ASSERT_TRUE(open.ok()) << open.status().ToString();
  ASSERT_EQ(open->size(), 2u) << "a config that sent a terminal state is done";
  EXPECT_EQ((*open)[0].task_id, "task-a");
  EXPECT_EQ((*open)[1].task_id, "task-b");
  EXPECT_EQ((*open)[1].sent_key, "working") << "the claimed key survives a restart";
  EXPECT_EQ(store_->ListOpenA2aPushConfigs(1)->size(), 1u);
  EXPECT_EQ(store_->GetA2aPushConfig("task-c", "carol", "c1")->url, "https://c.example.net/");
}

TEST_P(A2aPushStoreTest, OneStatusChangeIsClaimedOnceAmongRacingClaimers) {
  ASSERT_TRUE(Put("alice", "c1").ok());
  StoreOptions o;
  o.clock = &clock_;
  auto other = OpenAnother(o);  // another process's store on the same database
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  constexpr int kThreads = 8;
  constexpr int kChanges = 5;
  std::atomic<int> won{0};
  std::atomic<int> errors{0};
  std::string expected;
  for (int change = 0; change < kChanges; ++change) {
    const std::string key = "state-" + std::to_string(change);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, key, t] {
        SqlStore& store = t % 2 == 0 ? *store_ : **other;  // half in each "process"
        auto r = store.ClaimA2aPushDelivery("task-1", "alice", "c1", expected, key, false);
        if (!r.ok()) {
          errors++;
        } else if (*r) {
          won++;
        }
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(won.load(), change + 1) << key;
    expected = key;
  }
  EXPECT_EQ(errors.load(), 0);
  EXPECT_FALSE(*store_->ClaimA2aPushDelivery("task-1", "alice", "c1", "state-0", "x", false))
      << "a stale read claims nothing";
  EXPECT_FALSE(*store_->ClaimA2aPushDelivery("task-1", "alice", "c1", "state-4", "state-4", false))
      << "the same key again is no change";
  EXPECT_FALSE(*store_->ClaimA2aPushDelivery("task-1", "bob", "c1", "state-4", "y", false))
      << "another owner's id claims nothing";
  EXPECT_FALSE(*store_->ClaimA2aPushDelivery("task-1", "alice", "gone", "", "y", false));
}

MAESTRO_STORE_CONFORMANCE(A2aPushStoreTest);

}  // namespace
}  // namespace maestro
