// Lessons and the routed piece on both backends (issue 21): add, list by
// space and piece (newest first), update, delete, the field errors; and
// SetTaskPiece moving a task (and its jobs) off kRoutedPiece exactly once.
#include <gtest/gtest.h>

#include "support/store_fixture.h"

namespace maestro {
namespace {

using testing::StoreConformance;

class LessonsStoreTest : public StoreConformance {};

Lesson Make(const std::string& space, LessonScope scope, const std::string& piece,
            const std::string& text) {
  Lesson l;
  l.space = space;
  l.scope = scope;
  l.piece = piece;
  l.lesson = text;
  l.evidence = {"t-1"};
  return l;
}

TEST_P(LessonsStoreTest, LessonsAreListedBySpaceAndPieceNewestFirst) {
  auto a = store_->AddLesson(Make("proj", LessonScope::kSpace, "ignored", "space-wide"));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->piece, "") << "a space-scoped lesson has no piece";
  EXPECT_FALSE(a->id.empty());
  EXPECT_GT(a->created_at, 0);
  ASSERT_TRUE(store_->AddLesson(Make("proj", LessonScope::kPiece, "coding", "coding only")).ok());
  ASSERT_TRUE(store_->AddLesson(Make("other", LessonScope::kSpace, "", "elsewhere")).ok());

  auto coding = store_->ListLessons("proj", std::string("coding"), 10);
  ASSERT_TRUE(coding.ok()) << coding.status().ToString();
  ASSERT_EQ(coding->size(), 2u);
  EXPECT_EQ((*coding)[0].lesson, "coding only") << "newest first";
  EXPECT_EQ((*coding)[1].lesson, "space-wide");
  EXPECT_EQ((*coding)[1].evidence, std::vector<std::string>{"t-1"});

  auto chat = store_->ListLessons("proj", std::string("chat"), 10);
  ASSERT_TRUE(chat.ok());
  ASSERT_EQ(chat->size(), 1u);
  EXPECT_EQ((*chat)[0].lesson, "space-wide");

  auto all_proj = store_->ListLessons("proj", std::nullopt, 10);
  ASSERT_TRUE(all_proj.ok());
  EXPECT_EQ(all_proj->size(), 2u);
  auto one = store_->ListLessons("proj", std::nullopt, 1);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->size(), 1u);
  auto every = store_->ListAllLessons(10);
  ASSERT_TRUE(every.ok());
  EXPECT_EQ(every->size(), 3u);
}

TEST_P(LessonsStoreTest, UpdateAndDeleteAndTheirErrors) {
  auto a = store_->AddLesson(Make("proj", LessonScope::kSpace, "", "first"));
  ASSERT_TRUE(a.ok());
  Lesson changed = *a;
  changed.lesson = "second";
  changed.scope = LessonScope::kPiece;
  changed.piece = "review";
  changed.evidence = {"t-1", "t-2"};
  auto u = store_->UpdateLesson(changed);
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->lesson, "second");
  EXPECT_EQ(u->scope, LessonScope::kPiece);
  EXPECT_EQ(u->piece, "review");
  EXPECT_EQ(u->evidence, (std::vector<std::string>{"t-1", "t-2"}));
  EXPECT_EQ(u->created_at, a->created_at);

  Lesson empty = *a;
  empty.lesson = "";
  EXPECT_EQ(store_->UpdateLesson(empty).status().field(), "lesson");
  Lesson no_piece = Make("proj", LessonScope::kPiece, "", "x");
  EXPECT_EQ(store_->AddLesson(no_piece).status().field(), "piece");
  Lesson missing = *a;
  missing.id = "01JXXXXXXXXXXXXXXXXXXXXXXX";
  EXPECT_EQ(store_->UpdateLesson(missing).status().code(), StatusCode::kNotFound);

  ASSERT_TRUE(store_->DeleteLesson(a->id).ok());
  EXPECT_EQ(store_->GetLesson(a->id).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->DeleteLesson(a->id).code(), StatusCode::kNotFound);
}

TEST_P(LessonsStoreTest, ARoutedTaskTakesItsPieceOnce) {
  NewTask t;
  t.instruction = "look over the change";
  t.piece = kRoutedPiece;
  auto c = store_->CreateTask(t);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_TRUE(
      store_->SetTaskPiece(c->task.id, "review", {{"piece", "review"}, {"by", "llm"}}).ok());
  EXPECT_EQ(store_->GetTask(c->task.id)->piece, "review");
  EXPECT_EQ(store_->GetJob(c->job.id)->piece, "review");
  // A second router (another worker) finds it routed and changes nothing.
  EXPECT_EQ(store_->SetTaskPiece(c->task.id, "chat", Json::object()).code(), StatusCode::kConflict);
  EXPECT_EQ(store_->GetTask(c->task.id)->piece, "review");
  auto events = store_->ListEvents(c->task.id, "", 100);
  ASSERT_TRUE(events.ok());
  int routed = 0;
  for (const Event& e : *events) routed += e.type == "task.routed";
  EXPECT_EQ(routed, 1);
}

TEST_P(LessonsStoreTest, ATaskKeepsTheSourceItWasCreatedWith) {
  NewTask t;
  t.instruction = "reflect";
  t.piece = "reflection";
  t.task_source = "reflection:abc";
  auto c = store_->CreateTask(t);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->task.task_source, "reflection:abc");
  NewTask plain;
  plain.instruction = "plain";
  auto p = store_->CreateTask(plain);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->task.task_source, "local");
}

MAESTRO_STORE_CONFORMANCE(LessonsStoreTest);

}  // namespace
}  // namespace maestro
