// Store::ListJobUsage (the `llm.call` events summed per job, for the usage
// and cost the API shows), Store::SetTaskTitle and the automatic title of
// CreateTask — on both backends.
#include <gtest/gtest.h>

#include "store/title.h"
#include "support/store_fixture.h"

namespace maestro {
namespace {

using testing::StoreConformance;

class UsageTitleTest : public StoreConformance {
 protected:
  void LlmCall(const std::string& task_id, const std::string& job_id, int64_t prompt,
               int64_t cached, int64_t completion, int64_t total_ms) {
    Event e;
    e.task_id = task_id;
    e.job_id = job_id;
    e.type = "llm.call";
    e.payload = {{"movement", "chat"},
                 {"iteration", 1},
                 {"promptTokens", prompt},
                 {"cachedPromptTokens", cached},
                 {"completionTokens", completion},
                 {"ttftMs", 5},
                 {"totalMs", total_ms}};
    auto r = store_->AppendEvent(e);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
};

TEST_P(UsageTitleTest, UsageIsSummedPerJobForTheAskedTasksOnly) {
  auto a = NewTaskWith("ok");
  auto b = NewTaskWith("ok");
  auto other = NewTaskWith("ok");
  NewJob second;
  second.task_id = a.task.id;
  second.piece = "ok";
  second.profile = "fast";
  auto a2 = store_->EnqueueJob(second);
  ASSERT_TRUE(a2.ok()) << a2.status().ToString();

  LlmCall(a.task.id, a.job.id, 1000, 800, 50, 1200);
  LlmCall(a.task.id, a.job.id, 1500, 1400, 70, 800);
  LlmCall(a.task.id, a2->id, 300, 0, 10, 100);
  LlmCall(b.task.id, b.job.id, 10, 5, 1, 7);
  LlmCall(other.task.id, other.job.id, 99999, 0, 99999, 99999);
  // Other events of the task do not count.
  Event noise;
  noise.task_id = a.task.id;
  noise.job_id = a.job.id;
  noise.type = "tool.call";
  noise.payload = {{"tool", "ReadFile"}, {"duration_ms", 3}, {"is_error", false}};
  ASSERT_TRUE(store_->AppendEvent(noise).ok());

  auto usage = store_->ListJobUsage({a.task.id, b.task.id});
  ASSERT_TRUE(usage.ok()) << usage.status().ToString();
  ASSERT_EQ(usage->size(), 3u);
  std::map<std::string, JobUsage> by_job;
  for (const auto& u : *usage) by_job[u.job_id] = u;
  ASSERT_EQ(by_job.count(other.job.id), 0u) << "only the asked tasks";

  const JobUsage& first = by_job.at(a.job.id);
  EXPECT_EQ(first.task_id, a.task.id);
  EXPECT_EQ(first.profile, "");
  EXPECT_EQ(first.llm_calls, 2);
  EXPECT_EQ(first.prompt_tokens, 2500);
  EXPECT_EQ(first.cached_tokens, 2200);
  EXPECT_EQ(first.completion_tokens, 120);
  EXPECT_EQ(first.model_ms, 2000);

  const JobUsage& fast = by_job.at(a2->id);
  EXPECT_EQ(fast.task_id, a.task.id);
  EXPECT_EQ(fast.profile, "fast");
  EXPECT_EQ(fast.llm_calls, 1);
  EXPECT_EQ(fast.prompt_tokens, 300);
  EXPECT_EQ(fast.cached_tokens, 0);
  EXPECT_EQ(fast.completion_tokens, 10);
  EXPECT_EQ(fast.model_ms, 100);

  EXPECT_EQ(by_job.at(b.job.id).task_id, b.task.id);
  EXPECT_EQ(by_job.at(b.job.id).llm_calls, 1);
  EXPECT_EQ(by_job.at(b.job.id).model_ms, 7);

  // Grouped by task, each task's jobs in the order of their first call.
  std::vector<std::string> a_jobs;
  for (const auto& u : *usage) {
    if (u.task_id == a.task.id) a_jobs.push_back(u.job_id);
  }
  EXPECT_EQ(a_jobs, (std::vector<std::string>{a.job.id, a2->id}));
  EXPECT_TRUE((*usage)[1].task_id == (*usage)[0].task_id ||
              (*usage)[1].task_id == (*usage)[2].task_id)
      << "one task's rows are adjacent";

  auto none = store_->ListJobUsage({});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  auto unknown = store_->ListJobUsage({"00000000-0000-0000-0000-000000000000"});
  ASSERT_TRUE(unknown.ok());
  EXPECT_TRUE(unknown->empty());
}

TEST_P(UsageTitleTest, AnUntitledTaskIsNamedFromItsInstructionAtCreation) {
  NewTask t;
  t.instruction = "\n# Plan the offsite\n- venue\n- food";
  t.piece = "ok";
  auto c = store_->CreateTask(t);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->task.title, "Plan the offsite");
  auto events = store_->ListEvents(c->task.id, "", 10);
  ASSERT_TRUE(events.ok());
  ASSERT_FALSE(events->empty());
  EXPECT_EQ((*events)[0].type, "task.created");
  EXPECT_EQ((*events)[0].payload["title"], "Plan the offsite");

  t.title = "my own";
  auto titled = store_->CreateTask(t);
  ASSERT_TRUE(titled.ok());
  EXPECT_EQ(titled->task.title, "my own") << "a given title is kept";

  // A subtask without a title gets one the same way.
  NewTask child;
  child.instruction = "* check the invoices";
  child.piece = "ok";
  child.parent_job_id = c->job.id;
  auto sub = store_->CreateTask(child);
  ASSERT_TRUE(sub.ok()) << sub.status().ToString();
  EXPECT_EQ(sub->task.title, "check the invoices");
}

TEST_P(UsageTitleTest, SetTaskTitleUpdatesTheRowAndWritesTaskUpdated) {
  auto c = NewTaskWith("ok");
  auto before = store_->ListEvents(c.task.id, "", 100);
  ASSERT_TRUE(before.ok());
  clock_.Advance(5);
  auto t = store_->SetTaskTitle(c.task.id, "  Renamed task  ");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->title, "Renamed task");
  EXPECT_GT(t->updated_at, c.task.updated_at);
  auto again = store_->GetTask(c.task.id);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->title, "Renamed task");

  auto events = store_->ListEvents(c.task.id, before->back().id, 100);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ((*events)[0].type, "task.updated");
  EXPECT_EQ((*events)[0].payload["title"], "Renamed task");

  Status empty = store_->SetTaskTitle(c.task.id, "   ").status();
  EXPECT_EQ(empty.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(empty.field(), "title");
  EXPECT_EQ(store_->SetTaskTitle(c.task.id, "a\nb").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->SetTaskTitle("00000000-0000-0000-0000-000000000000", "x").status().code(),
            StatusCode::kNotFound);
  auto after = store_->ListEvents(c.task.id, (*events)[0].id, 100);
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after->empty()) << "a refused title writes nothing";
  EXPECT_EQ(store_->GetTask(c.task.id)->title, "Renamed task");
}

MAESTRO_STORE_CONFORMANCE(UsageTitleTest);

}  // namespace
}  // namespace maestro
