// The A2A push notification configs (api/a2a_push.h): set (id defaults to
// the task's, the same id replaces), get (the first without an id), list,
// delete and the per-task limit. Delivery to a receiver is covered by
// tests/integration/api_engine/a2a_server_test.cc.
#include "api/a2a_push.h"

#include <gtest/gtest.h>

namespace maestro::api::a2a {
namespace {

// A URL nothing listens on: the delivery thread's POSTs fail fast.
constexpr const char* kDeadUrl = "http://127.0.0.1:1/hook";

PushConfig Config(const std::string& id, const std::string& token = "") {
  PushConfig c;
  c.id = id;
  c.url = kDeadUrl;
  c.token = token;
  return c;
}

class A2aPushTest : public ::testing::Test {
 protected:
  EventSignal signal_;
  A2aPushNotifier push_{signal_, [](const std::string& task_id) -> Result<TaskFacts> {
                          TaskFacts f;
                          f.task.id = task_id;
                          return f;
                        }};
};

TEST_F(A2aPushTest, SetGetListDelete) {
  EXPECT_FALSE(push_.Get("t1", ""));
  EXPECT_TRUE(push_.List("t1").empty());
  auto first = push_.Set("t1", Config(""));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->id, "t1") << "no id: the task's";
  ASSERT_TRUE(push_.Set("t1", Config("p2", "a")).ok());
  ASSERT_TRUE(push_.Set("t1", Config("p2", "b")).ok()) << "the same id replaces";
  ASSERT_EQ(push_.List("t1").size(), 2u);
  EXPECT_EQ(push_.Get("t1", "")->id, "t1") << "without an id: the first";
  EXPECT_EQ(push_.Get("t1", "p2")->token, "b");
  EXPECT_FALSE(push_.Get("t1", "nope"));
  EXPECT_TRUE(push_.List("t2").empty()) << "configs are per task";
  EXPECT_EQ(signal_.watchers(), 1u) << "one watch per task with configs";

  EXPECT_FALSE(push_.Delete("t1", "nope"));
  EXPECT_TRUE(push_.Delete("t1", "p2"));
  EXPECT_TRUE(push_.Delete("t1", "t1"));
  EXPECT_TRUE(push_.List("t1").empty());
  EXPECT_EQ(signal_.watchers(), 0u) << "no config left: the task is not watched";
}

TEST_F(A2aPushTest, ATaskTakesAtMostTheLimit) {
  for (size_t i = 0; i < A2aPushNotifier::kMaxConfigsPerTask; ++i) {
    ASSERT_TRUE(push_.Set("t1", Config("p" + std::to_string(i))).ok());
  }
  auto over = push_.Set("t1", Config("one-more"));
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(over.status().field(), "pushNotificationConfig");
  EXPECT_TRUE(push_.Set("t1", Config("p0", "new")).ok()) << "replacing stays possible";
}

}  // namespace
}  // namespace maestro::api::a2a
