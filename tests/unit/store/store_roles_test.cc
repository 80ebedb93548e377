// The Store's role interfaces (store/store.h; issue 46 step 7): every role is
// a view of the one store — a write through one role is what another role
// reads, on both backends — and a consumer of one role runs on a fake of that
// role alone: the queue's batched defaults, the lease sweeper, and the
// kUnimplemented answer of a role method a fake does not provide.
#include <deque>
#include <map>
#include <type_traits>

#include "store/api_tokens.h"
#include "store/attachment_records.h"
#include "store/captcha_pool.h"
#include "store/event_records.h"
#include "store/job_queue.h"
#include "store/job_records.h"
#include "store/lesson_records.h"
#include "store/mission_records.h"
#include "store/notification_records.h"
#include "store/request_records.h"
#include "store/schedule_records.h"
#include "store/store_metrics.h"
#include "store/task_records.h"
#include "store/usage_records.h"
#include "support/store_fixture.h"
#include "worker/lease_sweeper.h"

namespace maestro {
namespace {

// The conformance fixture (both backends) under this file's own suite name.
class StoreRolesConformance : public testing::StoreConformance {};

// Store is the union: it converts to every role, and SqlStore is a Store.
static_assert(std::is_base_of_v<TaskRecords, Store>);
static_assert(std::is_base_of_v<AttachmentRecords, Store>);
static_assert(std::is_base_of_v<JobQueue, Store>);
static_assert(std::is_base_of_v<JobRecords, Store>);
static_assert(std::is_base_of_v<CaptchaPool, Store>);
static_assert(std::is_base_of_v<RequestRecords, Store>);
static_assert(std::is_base_of_v<EventRecords, Store>);
static_assert(std::is_base_of_v<StoreMetrics, Store>);
static_assert(std::is_base_of_v<ApiTokens, Store>);
static_assert(std::is_base_of_v<NotificationRecords, Store>);
static_assert(std::is_base_of_v<UsageRecords, Store>);
static_assert(std::is_base_of_v<ScheduleRecords, Store>);
static_assert(std::is_base_of_v<LessonRecords, Store>);
static_assert(std::is_base_of_v<MissionRecords, Store>);
static_assert(std::is_base_of_v<Store, SqlStore>);
// The roles hold no state of their own: a role is only a vtable pointer.
static_assert(sizeof(JobQueue) == sizeof(void*));
static_assert(sizeof(NotificationRecords) == sizeof(void*));

TEST_P(StoreRolesConformance, EveryRoleIsAViewOfTheOneStore) {
  TaskRecords& tasks = *store_;
  JobQueue& queue = *store_;
  JobRecords& jobs = *store_;
  EventRecords& events = *store_;
  NotificationRecords& feed = *store_;
  RequestRecords& requests = *store_;
  StoreMetrics& metrics = *store_;
  // Distinct subobjects (each its own vtable) of one object.
  EXPECT_NE(static_cast<void*>(&queue), static_cast<void*>(&feed));

  NewTask t;
  t.instruction = "do ok";
  t.piece = "ok";
  auto created = tasks.CreateTask(t);
  ASSERT_TRUE(created.ok()) << created.status().ToString();

  ClaimFilter f;
  f.worker_id = "w-roles";
  auto claimed = queue.ClaimNextJob(f, 30'000);
  ASSERT_TRUE(claimed.ok()) << claimed.status().ToString();
  ASSERT_TRUE(claimed->has_value());
  EXPECT_EQ((*claimed)->id, created->job.id);
  EXPECT_EQ(jobs.GetJob(created->job.id)->status, JobStatus::kRunning);

  // A request written through its role is read back through the Store.
  Request r;
  r.task_id = created->task.id;
  r.job_id = created->job.id;
  r.kind = RequestKind::kTool;
  r.name = "run_command";
  r.args = Json{{"command", "make"}};
  auto req = requests.CreateRequest(r);
  ASSERT_TRUE(req.ok()) << req.status().ToString();
  auto listed = store_->ListRequests(created->task.id, std::nullopt);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].id, req->id);

  // A stale fencing token is refused through the role as through the Store.
  Lease stale = LeaseOf(**claimed);
  stale.fencing_token += 1;
  EXPECT_EQ(queue.FinishJob(stale, JobOutcome::Succeeded("x")).code(), StatusCode::kLeaseLost);
  ASSERT_TRUE(queue.FinishJob(LeaseOf(**claimed), JobOutcome::Succeeded("done")).ok());
  EXPECT_EQ(StatusOf(created->job.id), JobStatus::kSucceeded);

  // The job.status event the finish wrote: in the task's log and the feed.
  auto log = events.ListEvents(created->task.id, "", 1000);
  ASSERT_TRUE(log.ok());
  std::string succeeded_id;
  for (const auto& e : *log) {
    if (e.type == "job.status" && e.payload["to"] == "succeeded") succeeded_id = e.id;
  }
  ASSERT_FALSE(succeeded_id.empty());
  auto all = feed.ListAllEvents("", 1000);
  ASSERT_TRUE(all.ok());
  bool in_feed = false;
  for (const auto& e : *all) in_feed = in_feed || e.id == succeeded_id;
  EXPECT_TRUE(in_feed);
  ASSERT_TRUE(feed.SetCursor("roles-test", succeeded_id).ok());
  EXPECT_EQ(*store_->GetCursor("roles-test"), succeeded_id);

  auto counts = metrics.CountJobsByStatus();
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ((*counts)["succeeded"], 1);
}

MAESTRO_STORE_CONFORMANCE(StoreRolesConformance);

// A JobQueue and nothing else: jobs handed out in order, finishes fenced on
// the token, each call counted. What a worker-side test needs, in ~40 lines.
class FakeQueue : public JobQueue {
 public:
  std::deque<Job> ready;
  std::map<std::string, int64_t> running;  // job id -> fencing token
  int claims = 0;
  int finishes = 0;
  int fail_claim_at = -1;  // the claim (1-based) that fails kUnavailable
  Status recover_error;
  std::vector<Job> expired;
  std::vector<JobOutcome> decided;

  Result<Job> EnqueueJob(const NewJob&) override { return Unimplemented("fake"); }
  Result<std::vector<Job>> EnqueueJobs(const std::vector<NewJob>&) override {
    return Unimplemented("fake");
  }
  Result<std::optional<Job>> ClaimNextJob(const ClaimFilter& f, int64_t) override {
    if (++claims == fail_claim_at) return Unavailable("store busy");
    if (ready.empty()) return std::optional<Job>();
    Job j = ready.front();
    ready.pop_front();
    j.status = JobStatus::kRunning;
    j.worker_id = f.worker_id;
    j.fencing_token = claims;
    running[j.id] = j.fencing_token;
    return std::optional<Job>(j);
  }
  Result<HeartbeatReply> Heartbeat(const Lease&, int64_t) override { return HeartbeatReply{}; }
  Status FinishJob(const Lease& lease, const JobOutcome&) override {
    ++finishes;
    auto it = running.find(lease.job_id);
    if (it == running.end() || it->second != lease.fencing_token) {
      return LeaseLost("job " + lease.job_id + " is not running under that lease");
    }
    running.erase(it);
    return Status::Ok();
  }
  Result<std::optional<Job>> FinishAndClaimNext(const Lease&, const JobOutcome&, const ClaimFilter&,
                                                int64_t) override {
    return Unimplemented("fake");
  }
  Result<std::vector<Job>> RecoverExpiredLeases(
      const std::function<JobOutcome(const Job&)>& decide) override {
    if (!recover_error.ok()) return recover_error;
    for (const Job& j : expired) decided.push_back(decide(j));
    return expired;
  }
  Result<std::optional<TimeMs>> NextRetryDue() override { return std::optional<TimeMs>(); }
};

Job QueuedJob(const std::string& id) {
  Job j;
  j.id = id;
  j.task_id = "t-" + id;
  j.status = JobStatus::kQueued;
  return j;
}

TEST(JobQueueRoleTest, ClaimJobsDefaultTakesAtMostMaxInOrderAndStopsWhenDry) {
  FakeQueue q;
  for (const char* id : {"a", "b", "c"}) q.ready.push_back(QueuedJob(id));
  ClaimFilter f;
  f.worker_id = "w1";
  auto two = q.ClaimJobs(f, 1'000, 2);
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ((*two)[0].id, "a");
  EXPECT_EQ((*two)[1].id, "b");
  EXPECT_EQ(q.claims, 2);  // no claim past max

  auto rest = q.ClaimJobs(f, 1'000, 5);
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->size(), 1u);
  EXPECT_EQ((*rest)[0].id, "c");
  EXPECT_EQ(q.claims, 4);  // one more to find the queue dry

  auto none = q.ClaimJobs(f, 1'000, 0);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  EXPECT_EQ(q.claims, 4);
}

TEST(JobQueueRoleTest, ClaimJobsDefaultReturnsTheErrorNotAPartialBatch) {
  FakeQueue q;
  for (const char* id : {"a", "b", "c"}) q.ready.push_back(QueuedJob(id));
  q.fail_claim_at = 2;
  ClaimFilter f;
  f.worker_id = "w1";
  auto got = q.ClaimJobs(f, 1'000, 3);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kUnavailable);
}

TEST(JobQueueRoleTest, FinishJobsDefaultFencesEachItemOnItsOwn) {
  FakeQueue q;
  for (const char* id : {"a", "b", "c"}) q.ready.push_back(QueuedJob(id));
  ClaimFilter f;
  f.worker_id = "w1";
  auto claimed = q.ClaimJobs(f, 1'000, 3);
  ASSERT_TRUE(claimed.ok());
  ASSERT_EQ(claimed->size(), 3u);
  std::vector<std::pair<Lease, JobOutcome>> items;
  for (const Job& j : *claimed) {
    items.emplace_back(Lease{j.id, j.worker_id, j.fencing_token}, JobOutcome::Succeeded("ok"));
  }
  items[1].first.fencing_token += 100;                                   // a lease taken over
  items.emplace_back(Lease{"ghost", "w1", 1}, JobOutcome::Cancelled());  // no such job
  auto got = q.FinishJobs(items);
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), 4u);
  EXPECT_TRUE((*got)[0].ok());
  EXPECT_EQ((*got)[1].code(), StatusCode::kLeaseLost);
  EXPECT_TRUE((*got)[2].ok());
  EXPECT_EQ((*got)[3].code(), StatusCode::kLeaseLost);
  EXPECT_EQ(q.finishes, 4);
  // Only the fenced-out job is still running.
  ASSERT_EQ(q.running.size(), 1u);
  EXPECT_EQ(q.running.begin()->first, "b");
}

// The lease sweeper takes a JobQueue&: it runs on the fake, no database.
TEST(JobQueueRoleTest, LeaseSweeperRunsOnAQueueFake) {
  FakeQueue q;
  Job dead = QueuedJob("d1");
  dead.status = JobStatus::kRetry;
  dead.worker_id = "w-crashed";
  q.expired = {dead, QueuedJob("d2")};
  LeaseSweeper sweeper(q, 60'000);
  auto n = sweeper.SweepOnce();
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 2);
  ASSERT_EQ(q.decided.size(), 2u);
  // A crashed worker is a retryable failure naming the worker.
  EXPECT_EQ(q.decided[0].kind, JobOutcome::Kind::kFailed);
  EXPECT_TRUE(q.decided[0].retryable);
  EXPECT_NE(q.decided[0].error_message.find("w-crashed"), std::string::npos)
      << q.decided[0].error_message;

  q.recover_error = Unavailable("database is locked");
  auto err = sweeper.SweepOnce();
  ASSERT_FALSE(err.ok());
  EXPECT_EQ(err.status().code(), StatusCode::kUnavailable);
}

// A fake of a role with defaults overrides nothing it does not use: the rest
// answer kUnimplemented, never a silent empty success.
TEST(StoreRolesTest, MethodsAFakeDoesNotProvideAnswerUnimplemented) {
  struct NoNotifications : NotificationRecords {};
  struct NoSchedules : ScheduleRecords {};
  struct NoLessons : LessonRecords {};
  struct NoMissions : MissionRecords {};
  struct NoTokens : ApiTokens {};
  struct NoUsage : UsageRecords {};
  NoNotifications n;
  NoSchedules s;
  NoLessons l;
  NoMissions m;
  NoTokens t;
  NoUsage u;
  const std::vector<Status> answers = {
      n.GetCursor("webhooks").status(),
      n.SetCursor("webhooks", "7"),
      n.ListAllEvents("", 10).status(),
      n.DeletePushSubscription("alice", "p1"),
      s.FireSchedule("s1", 0, false).status(),
      s.ReleaseHeldFire("s1").status(),
      l.AddLesson(Lesson{}).status(),
      m.ListMissionTasks("m1", 10).status(),
      t.UserForToken("abc").status(),
      u.UserUsageSince("alice", 0).status(),
      u.RaiseTaskBudget("t1", Json::object()).status(),
  };
  for (size_t i = 0; i < answers.size(); ++i) {
    EXPECT_EQ(answers[i].code(), StatusCode::kUnimplemented) << i;
    EXPECT_EQ(answers[i].message(), "not supported by this store") << i;
  }
}

}  // namespace
}  // namespace maestro
