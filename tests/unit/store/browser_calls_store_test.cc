// The store-routed BrowseWeb live view on both backends (issue 48 item 2,
// store/browser_call_records.h): holder rows upserted and dropped only by
// their own worker; a call is listed only for the worker it is addressed to,
// answered once (a second answer, or one from another worker, changes
// nothing), its PNG bytes come back byte for byte, old rows go and the
// pending cap holds; a second store object (another process) sees the
// calls; a login resumed with a pin is claimable only by the holder, and
// the pin clears only when it is still the holder's.
#include <gtest/gtest.h>

#include <string>

#include "support/store_fixture.h"

namespace maestro {
namespace {

using testing::StoreConformance;

class BrowserCallsStoreTest : public StoreConformance {
 protected:
  Result<BrowserCall> Add(const std::string& job, const std::string& worker,
                          const std::string& kind = "screenshot", int cap = 4) {
    BrowserCall c;
    c.job_id = job;
    c.worker_id = worker;
    c.kind = kind;
    c.request = "{}";
    return store_->AddBrowserCall(c, cap);
  }
};

TEST_P(BrowserCallsStoreTest, HoldersAreUpsertedAndDroppedOnlyByTheirWorker) {
  EXPECT_EQ(store_->GetBrowserHolder("job-1").status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(store_->PutBrowserHolders({{"job-1", "h:1:w0", 0}, {"job-2", "h:1:w1", 0}}).ok());
  auto h = store_->GetBrowserHolder("job-1");
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(h->worker_id, "h:1:w0");
  EXPECT_EQ(h->seen_at, clock_.NowMs());
  clock_.Advance(1000);
  ASSERT_TRUE(store_->PutBrowserHolders({{"job-1", "h:2:w0", 0}}).ok());  // moved, refreshed
  EXPECT_EQ(store_->GetBrowserHolder("job-1")->worker_id, "h:2:w0");
  EXPECT_EQ(store_->GetBrowserHolder("job-1")->seen_at, clock_.NowMs());
  ASSERT_TRUE(store_->DropBrowserHolder("job-1", "h:1:w0").ok());  // not its row any more
  EXPECT_TRUE(store_->GetBrowserHolder("job-1").ok());
  ASSERT_TRUE(store_->DropBrowserHolder("job-1", "h:2:w0").ok());
  EXPECT_EQ(store_->GetBrowserHolder("job-1").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->PutBrowserHolders({{"", "w", 0}}).code(), StatusCode::kInvalidArgument);
  // A holder killed without dropping its row: the row goes an hour later,
  // with another holder's heartbeat.
  ASSERT_TRUE(store_->PutBrowserHolders({{"job-dead", "h:3:w0", 0}}).ok());
  clock_.Advance(3600'001);
  ASSERT_TRUE(store_->PutBrowserHolders({{"job-3", "h:4:w0", 0}}).ok());
  EXPECT_EQ(store_->GetBrowserHolder("job-dead").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(store_->GetBrowserHolder("job-3").ok());
}

TEST_P(BrowserCallsStoreTest, ACallReachesOnlyItsWorkerAndIsAnsweredOnce) {
  auto call = Add("job-1", "h:1:w0");
  ASSERT_TRUE(call.ok()) << call.status().ToString();
  EXPECT_EQ(call->status, "pending");
  EXPECT_FALSE(call->id.empty());
  EXPECT_TRUE(store_->PendingBrowserCalls("job-1", "h:9:w0", 8)->empty()) << "another worker";
  EXPECT_TRUE(store_->PendingBrowserCalls("job-2", "h:1:w0", 8)->empty()) << "another job";
  auto mine = store_->PendingBrowserCalls("job-1", "h:1:w0", 8);
  ASSERT_TRUE(mine.ok());
  ASSERT_EQ(mine->size(), 1u);
  EXPECT_EQ((*mine)[0].id, call->id);

  // Another worker cannot answer it; the holder can, once.
  std::string png("\x89PNG\r\n\x1a\n\0\xff binary", 17);
  EXPECT_FALSE(*store_->AnswerBrowserCall(call->id, "h:9:w0", Status::Ok(), "forged"));
  EXPECT_TRUE(*store_->AnswerBrowserCall(call->id, "h:1:w0", Status::Ok(), png));
  EXPECT_FALSE(*store_->AnswerBrowserCall(call->id, "h:1:w0", Status::Ok(), "again"));
  auto got = store_->GetBrowserCall(call->id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->status, "done");
  EXPECT_EQ(got->answer, png);
  EXPECT_TRUE(store_->PendingBrowserCalls("job-1", "h:1:w0", 8)->empty());

  // A failure keeps its code, message and field.
  auto bad = Add("job-1", "h:1:w0", "key");
  ASSERT_TRUE(bad.ok());
  ASSERT_TRUE(*store_->AnswerBrowserCall(
      bad->id, "h:1:w0", InvalidArgument("key must be Enter, Tab or Backspace", "key"), "x"));
  got = store_->GetBrowserCall(bad->id);
  EXPECT_EQ(got->status, "failed");
  EXPECT_EQ(got->error_code, static_cast<int>(StatusCode::kInvalidArgument));
  EXPECT_EQ(got->error_field, "key");
  EXPECT_EQ(got->answer, "");
  ASSERT_TRUE(store_->DeleteBrowserCall(bad->id).ok());
  EXPECT_EQ(store_->GetBrowserCall(bad->id).status().code(), StatusCode::kNotFound);
  // Deleted before the holder answered (the asker gave up): nothing changes.
  auto late = Add("job-1", "h:1:w0");
  ASSERT_TRUE(store_->DeleteBrowserCall(late->id).ok());
  EXPECT_FALSE(*store_->AnswerBrowserCall(late->id, "h:1:w0", Status::Ok(), "late"));
}

TEST_P(BrowserCallsStoreTest, PendingCallsAreCappedAndOldRowsGo) {
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i) {
    auto c = Add("job-1", "h:1:w0");
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    ids.push_back(c->id);
    clock_.Advance(1);
  }
  EXPECT_EQ(Add("job-1", "h:1:w0").status().code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(Add("job-2", "h:1:w0").ok()) << "the cap is per job";
  EXPECT_EQ(store_->PendingBrowserCalls("job-1", "h:1:w0", 2)->size(), 2u) << "the limit";
  ASSERT_TRUE(*store_->AnswerBrowserCall(ids[0], "h:1:w0", Status::Ok(), "png"));
  // 31 s later the pending ones are gone with the next call; the answered
  // one stays until 60 s after its answer.
  clock_.Advance(31'000);
  ASSERT_TRUE(Add("job-3", "h:1:w0").ok());
  EXPECT_EQ(store_->GetBrowserCall(ids[1]).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(store_->GetBrowserCall(ids[0]).ok());
  EXPECT_TRUE(Add("job-1", "h:1:w0").ok()) << "the old pending calls no longer count";
  clock_.Advance(30'000);
  ASSERT_TRUE(Add("job-3", "h:1:w0").ok());
  EXPECT_EQ(store_->GetBrowserCall(ids[0]).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(Add("", "h:1:w0").status().field(), "job_id");
  EXPECT_EQ(Add("job-1", "").status().field(), "worker_id");
}

TEST_P(BrowserCallsStoreTest, AnotherStoreObjectSeesAndAnswersTheCalls) {
  StoreOptions o;
  o.clock = &clock_;
  auto worker = OpenAnother(o);  // the worker process, on the same database
  ASSERT_TRUE(worker.ok()) << worker.status().ToString();
  auto call = Add("job-1", "h:1:w0", "text");
  ASSERT_TRUE(call.ok());
  auto seen = (*worker)->PendingBrowserCalls("job-1", "h:1:w0", 8);
  ASSERT_TRUE(seen.ok());
  ASSERT_EQ(seen->size(), 1u);
  EXPECT_EQ((*seen)[0].kind, "text");
  ASSERT_TRUE(*(*worker)->AnswerBrowserCall(call->id, "h:1:w0", Status::Ok(), ""));
  EXPECT_EQ(store_->GetBrowserCall(call->id)->status, "done");
}

TEST_P(BrowserCallsStoreTest, APinnedResumeIsClaimedOnlyByTheHolderAndItsPinClears) {
  auto created = NewTaskWith("browse");
  Job ran = Claim("h:1:w0");
  ASSERT_TRUE(
      store_->FinishJob(LeaseOf(ran), JobOutcome::WaitingHuman("browser_login", "browse")).ok());
  EXPECT_EQ(store_->GetJob(ran.id)->worker_id, "h:1:w0") << "the park keeps who ran it";
  ASSERT_TRUE(store_->ResumeBrowserLogin(ran.id, "h:1:w0").ok());
  EXPECT_EQ(StatusOf(ran.id), JobStatus::kQueued);
  EXPECT_EQ(store_->GetJob(ran.id)->required_worker, "h:1:w0");
  EXPECT_EQ(store_->GetJob(ran.id)->wait_reason, "");
  EXPECT_TRUE(NothingToClaim("h:2:w0")) << "another worker may not take the pinned job";
  EXPECT_EQ(store_->ResumeBrowserLogin(ran.id, "h:1:w0").code(), StatusCode::kConflict);
  ASSERT_TRUE(store_->ClearBrowserPin(ran.id, "h:2:w0").ok());  // not its pin: kept
  EXPECT_EQ(store_->GetJob(ran.id)->required_worker, "h:1:w0");
  Job again = Claim("h:1:w0");
  EXPECT_EQ(again.id, ran.id);
  ASSERT_TRUE(store_->ClearBrowserPin(ran.id, "h:1:w0").ok());
  EXPECT_EQ(store_->GetJob(ran.id)->required_worker, "");

  // Resumed with no pin (the holder was gone): any worker takes it.
  ASSERT_TRUE(
      store_->FinishJob(LeaseOf(again), JobOutcome::WaitingHuman("browser_login", "browse")).ok());
  ASSERT_TRUE(store_->ResumeBrowserLogin(ran.id, "").ok());
  EXPECT_EQ(Claim("h:2:w0").id, ran.id);
  (void)created;
}

// An API process stopped during Done (the pin not cleared) and then the
// holder died: the lease sweeper's call unpins the job once the holder's row
// is 30 s stale, and not while the holder still refreshes it.
TEST_P(BrowserCallsStoreTest, ALoginPinnedToAGoneHolderIsUnpinnedOnlyOnceItIsGone) {
  auto created = NewTaskWith("browse");
  Job ran = Claim("h:1:w0");
  ASSERT_TRUE(
      store_->FinishJob(LeaseOf(ran), JobOutcome::WaitingHuman("browser_login", "browse")).ok());
  ASSERT_TRUE(store_->PutBrowserHolders({{ran.id, "h:1:w0", 0}}).ok());
  ASSERT_TRUE(store_->ResumeBrowserLogin(ran.id, "h:1:w0").ok());
  EXPECT_EQ(*store_->UnpinOrphanedBrowserLogins(30'000), 0) << "just pinned";
  clock_.Advance(20'000);
  ASSERT_TRUE(store_->PutBrowserHolders({{ran.id, "h:1:w0", 0}}).ok());  // the holder lives
  clock_.Advance(20'000);
  EXPECT_EQ(*store_->UnpinOrphanedBrowserLogins(30'000), 0) << "refreshed 20 s ago";
  EXPECT_TRUE(NothingToClaim("h:2:w0"));
  clock_.Advance(15'000);  // 35 s without a refresh: the holder is gone
  EXPECT_EQ(*store_->UnpinOrphanedBrowserLogins(30'000), 1);
  EXPECT_EQ(store_->GetJob(ran.id)->required_worker, "");
  EXPECT_EQ(Claim("h:2:w0").id, ran.id) << "any worker runs it now";
  EXPECT_EQ(*store_->UnpinOrphanedBrowserLogins(30'000), 0) << "a running job is left alone";
  (void)created;
}

MAESTRO_STORE_CONFORMANCE(BrowserCallsStoreTest);

}  // namespace
}  // namespace maestro
