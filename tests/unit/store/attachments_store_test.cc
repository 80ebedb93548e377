// The attachments table on both backends: rows recorded with the task's
// instruction (CreateTask) and with a comment (PostComment) in the same
// transaction, listed oldest first, and delivered once (ack).
#include <gtest/gtest.h>

#include "support/store_fixture.h"

namespace maestro {
namespace {

using testing::StoreConformance;

class AttachmentsStoreTest : public StoreConformance {};

Attachment File(const std::string& name, int64_t size, const std::string& type) {
  Attachment a;
  a.name = name;
  a.path = "attachments/" + name;
  a.size = size;
  a.content_type = type;
  a.sha256 = std::string(64, 'a');
  return a;
}

TEST_P(AttachmentsStoreTest, FilesComeWithTheInstructionAndWithCommentsAndAreDeliveredOnce) {
  NewTask t;
  t.id = "0b7e6f0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b";
  t.instruction = "read the log";
  t.piece = "ok";
  t.owner = "alice";
  t.attachments = {File("app.log", 12, "text/plain"), File("shot.png", 7, "image/png")};
  auto c = store_->CreateTask(t);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->task.id, t.id) << "the id the API picked";
  auto comments = store_->ListComments(t.id);
  ASSERT_TRUE(comments.ok());
  ASSERT_EQ(comments->size(), 1u);

  auto all = store_->ListAttachments(t.id);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].name, "app.log");
  EXPECT_EQ((*all)[0].path, "attachments/app.log");
  EXPECT_EQ((*all)[0].size, 12);
  EXPECT_EQ((*all)[0].content_type, "text/plain");
  EXPECT_EQ((*all)[0].comment_id, (*comments)[0].id) << "the instruction comment";
  EXPECT_EQ((*all)[0].task_id, t.id);
  EXPECT_FALSE((*all)[0].id.empty());
  EXPECT_GT((*all)[0].created_at, 0);
  EXPECT_EQ((*all)[0].delivered_at, 0);
  EXPECT_EQ((*all)[1].name, "shot.png");

  auto pending = store_->ListUndeliveredAttachments(t.id);
  ASSERT_TRUE(pending.ok());
  ASSERT_EQ(pending->size(), 2u);
  ASSERT_TRUE(store_->AckDeliveredAttachments({(*pending)[0].id, (*pending)[1].id}).ok());
  EXPECT_TRUE(store_->ListUndeliveredAttachments(t.id)->empty());

  // A comment with a file and no text; the text is optional only then.
  auto posted = store_->PostComment(t.id, "alice", "", {File("more.txt", 3, "text/plain")});
  ASSERT_TRUE(posted.ok()) << posted.status().ToString();
  EXPECT_EQ(store_->PostComment(t.id, "alice", " ", {}).status().field(), "body");
  pending = store_->ListUndeliveredAttachments(t.id);
  ASSERT_TRUE(pending.ok());
  ASSERT_EQ(pending->size(), 1u);
  EXPECT_EQ((*pending)[0].comment_id, posted->comment.id);
  EXPECT_EQ(store_->ListAttachments(t.id)->size(), 3u);
  EXPECT_GT(store_->ListAttachments(t.id)->front().delivered_at, 0);

  // One path per task: a second record of it is refused with the comment.
  auto twice = store_->PostComment(t.id, "alice", "again", {File("more.txt", 3, "text/plain")});
  EXPECT_EQ(twice.status().code(), StatusCode::kConflict) << twice.status().ToString();
  EXPECT_EQ(store_->ListComments(t.id)->size(), 2u) << "nothing of the refused comment stays";
}

MAESTRO_STORE_CONFORMANCE(AttachmentsStoreTest);

}  // namespace
}  // namespace maestro
