// A subtask (NewTask::parent_job_id) belongs to the parent task's owner with
// the parent's visibility, and runs on the parent job's profile unless it
// names its own (issue 12 item 5: children used to get owner "").
#include "support/store_fixture.h"

namespace maestro {
namespace {

using testing::StoreConformance;

class SubtaskOwnerTest : public StoreConformance {
 protected:
  Store::CreatedTask Parent(const std::string& owner, const std::string& visibility) {
    NewTask t;
    t.instruction = "parent";
    t.piece = "ok";
    t.owner = owner;
    t.visibility = visibility;
    t.profile = "fast";
    t.model = "small";
    auto c = store_->CreateTask(t);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? *c : Store::CreatedTask{};
  }
  Store::CreatedTask Child(const std::string& parent_job_id, const std::string& profile = "") {
    NewTask t;
    t.instruction = "child";
    t.piece = "ok";
    t.parent_job_id = parent_job_id;
    t.profile = profile;
    auto c = store_->CreateTask(t);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? *c : Store::CreatedTask{};
  }
};

TEST_P(SubtaskOwnerTest, ChildTakesTheParentsOwnerVisibilityAndProfile) {
  auto parent = Parent("alice", "private");
  EXPECT_EQ(parent.job.profile, "fast");
  auto child = Child(parent.job.id);
  EXPECT_EQ(child.task.owner, "alice");
  EXPECT_EQ(child.task.visibility, "private");
  EXPECT_EQ(child.job.profile, "fast");
  EXPECT_EQ(child.job.model, "small");
  EXPECT_EQ(child.job.parent_job_id, parent.job.id);

  auto shared = Parent("bob", "shared");
  EXPECT_EQ(Child(shared.job.id).task.visibility, "shared");
  EXPECT_EQ(Child(shared.job.id, "default").job.profile, "default") << "its own profile wins";
}

TEST_P(SubtaskOwnerTest, UnknownParentJobWritesNothing) {
  NewTask t;
  t.instruction = "orphan";
  t.piece = "ok";
  t.parent_job_id = "no-such-job";
  EXPECT_EQ(store_->CreateTask(t).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(store_->ListTasks(std::nullopt, 10)->empty());
}

MAESTRO_STORE_CONFORMANCE(SubtaskOwnerTest);

}  // namespace
}  // namespace maestro
