// Web Push subscriptions on both backends (issue 45 item 6): one row per
// (owner, endpoint) with its keys replaced on a second add, the per-owner
// cap, and every list and delete scoped to the owner — another user's id
// is kNotFound and removes nothing.
#include <gtest/gtest.h>

#include "support/store_fixture.h"

namespace maestro {
namespace {

using testing::StoreConformance;

class PushStoreTest : public StoreConformance {
 protected:
  Result<PushSubscription> Add(const std::string& owner, const std::string& endpoint,
                               const std::string& p256dh = "key-1", int cap = 3) {
    PushSubscription s;
    s.owner = owner;
    s.endpoint = endpoint;
    s.p256dh = p256dh;
    s.auth = "auth-1";
    return store_->AddPushSubscription(s, cap);
  }
};

TEST_P(PushStoreTest, OneRowPerBrowserKeysReplacedAndACapPerOwner) {
  auto a = Add("alice", "https://push.example.net/a");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_FALSE(a->id.empty());
  EXPECT_GT(a->created_at, 0);
  clock_.Advance(10);
  auto again = Add("alice", "https://push.example.net/a", "key-2");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->id, a->id);
  EXPECT_EQ(again->created_at, a->created_at);
  auto list = store_->ListPushSubscriptions("alice");
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].p256dh, "key-2");
  EXPECT_EQ((*list)[0].auth, "auth-1");

  ASSERT_TRUE(Add("alice", "https://push.example.net/b").ok());
  ASSERT_TRUE(Add("alice", "https://push.example.net/c").ok());
  auto over = Add("alice", "https://push.example.net/d");
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(Add("alice", "https://push.example.net/a", "key-3").ok())
      << "a known browser at the cap is not a new one";
  EXPECT_TRUE(Add("bob", "https://push.example.net/a").ok()) << "the cap and the row are per owner";
  EXPECT_EQ(store_->ListPushSubscriptions("alice")->size(), 3u);
  EXPECT_EQ(Add("", "https://push.example.net/z").status().code(), StatusCode::kInvalidArgument);
}

TEST_P(PushStoreTest, AnOwnerListsAndDeletesOnlyTheirOwn) {
  auto a = Add("alice", "https://push.example.net/a");
  auto b = Add("bob", "https://push.example.net/b");
  ASSERT_TRUE(a.ok() && b.ok());
  auto bobs = store_->ListPushSubscriptions("bob");
  ASSERT_TRUE(bobs.ok());
  ASSERT_EQ(bobs->size(), 1u);
  EXPECT_EQ((*bobs)[0].endpoint, "https://push.example.net/b");
  EXPECT_EQ(store_->DeletePushSubscription("bob", a->id).code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->ListPushSubscriptions("alice")->size(), 1u);
  EXPECT_TRUE(store_->DeletePushSubscription("alice", a->id).ok());
  EXPECT_TRUE(store_->ListPushSubscriptions("alice")->empty());
  EXPECT_EQ(store_->DeletePushSubscription("alice", a->id).code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->ListPushSubscriptions("bob")->size(), 1u);
}

MAESTRO_STORE_CONFORMANCE(PushStoreTest);

}  // namespace
}  // namespace maestro
