// A new context directory's entry is made durable with the first durable
// record inside it, not when it is made (NewDirEnv, TaskContext::Start), and
// the archive's first seed is not synced (MessageStore::SeedThread).
#include "context/new_dir_env.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "context/task_context.h"
#include "core/env_wrapper.h"
#include "core/mutex.h"
#include "support/store_fixture.h"
#include "support/temp_dir.h"

namespace maestro::context {
namespace {

// Records every directory fsync, in order.
class SyncRecorder final : public EnvWrapper {
 public:
  SyncRecorder() : EnvWrapper(Env::Default()) {}
  Status SyncDir(const std::string& dir) override {
    {
      MutexLock lock(&mu_);
      synced_.push_back(dir);
    }
    return EnvWrapper::SyncDir(dir);
  }
  std::vector<std::string> synced() {
    MutexLock lock(&mu_);
    return synced_;
  }
  int64_t count(const std::string& dir) {
    auto s = synced();
    return std::count(s.begin(), s.end(), dir);
  }

 private:
  Mutex mu_;
  std::vector<std::string> synced_ GUARDED_BY(mu_);
};

Json SeedSystem() { return {{"role", "system"}, {"content", "sys"}}; }
Json SeedUser(const std::string& text) { return {{"role", "user"}, {"content", text}}; }

class NewContextDirTest : public maestro::testing::StoreTest {
 protected:
  // A new task and its claimed first job.
  void ClaimNew(Job* job, Task* task) {
    NewTaskWith("coding");
    *job = Claim();
    auto got = store_->GetTask(job->task_id);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    *task = *got;
  }
};

TEST_F(NewContextDirTest, TheEntryIsSyncedWithTheFirstDurableRecordInside) {
  Job job;
  Task task;
  ASSERT_NO_FATAL_FAILURE(ClaimNew(&job, &task));
  SyncRecorder env;
  ContextDirs dirs(dir_.path(), &env);
  auto ctx = TaskContext::Start(dirs, {store_.get(), &clock_, &env}, task, job, ContextConfig());
  ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
  const std::string running = dir_.path() + "/contexts/running";
  const std::string dir = (*ctx)->dir();
  // Made, its files created and its first seed written: nothing synced.
  ASSERT_TRUE((*ctx)->messages().SeedThread(job.id, {SeedSystem(), SeedUser("u0")}, "plan").ok());
  EXPECT_TRUE(env.synced().empty()) << env.synced().front();
  // A second seed marks a job's thread for a recovered run: synced, and
  // before its directory the directory's own entry in running/.
  ASSERT_TRUE((*ctx)->messages().SeedThread(job.id, {SeedSystem(), SeedUser("u1")}, "review").ok());
  auto synced = env.synced();
  ASSERT_EQ(synced.size(), 2u);
  EXPECT_EQ(synced[0], running);
  EXPECT_EQ(synced[1], dir);
  // Once: a later durable record inside (a handoff file) syncs only its own
  // directory.
  ASSERT_TRUE((*ctx)->env().CreateDirs((*ctx)->handoffs_dir()).ok());
  ASSERT_TRUE(ReplaceFileContent((*ctx)->env(), (*ctx)->handoffs_dir() + "/h.md", "facts\n").ok());
  EXPECT_EQ(env.count(running), 1);
  EXPECT_EQ(env.count((*ctx)->handoffs_dir()), 1);
}

// A ready spare (ContextDirs::NewSpares) becomes the new directory by one
// rename: the files its start and first seed write exist already (synced
// into the spare by the filler), and the new entry in running/ is owed
// exactly as for a directory made in place.
TEST_F(NewContextDirTest, ASpareBecomesTheNewDirectoryWithItsEntryStillOwed) {
  Job job;
  Task task;
  ASSERT_NO_FATAL_FAILURE(ClaimNew(&job, &task));
  SyncRecorder env;
  auto spares = ContextDirs::NewSpares(dir_.path(), &env, 1);
  ASSERT_EQ(spares->WaitFilled(), 1u);
  const std::string spare_root = dir_.path() + "/contexts/.spares";
  ASSERT_EQ(env.synced().size(), 1u);
  EXPECT_EQ(env.synced()[0].rfind(spare_root + "/", 0), 0u) << env.synced()[0];
  const std::string spare = env.synced()[0];

  ContextDirs dirs(dir_.path(), &env, spares.get());
  auto ctx = TaskContext::Start(dirs, {store_.get(), &clock_, &env}, task, job, ContextConfig());
  ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
  const std::string running = dir_.path() + "/contexts/running";
  const std::string dir = (*ctx)->dir();
  EXPECT_EQ(dir, running + "/" + task.id);
  EXPECT_FALSE(std::filesystem::exists(spare)) << "renamed, not copied";
  EXPECT_FALSE((*ctx)->is_resumed());
  EXPECT_FALSE(std::filesystem::exists(dir + "/metadata.json.tmp"));
  auto meta = ReadFileToString(*Env::Default(), dir + "/metadata.json");
  ASSERT_TRUE(meta.ok());
  EXPECT_EQ(Json::parse(*meta)["uuid"], task.id);

  ASSERT_TRUE((*ctx)->messages().SeedThread(job.id, {SeedSystem(), SeedUser("u0")}, "plan").ok());
  EXPECT_EQ(env.count(running), 0) << "the first seed is not synced";
  ASSERT_TRUE((*ctx)->messages().SeedThread(job.id, {SeedSystem(), SeedUser("u1")}, "review").ok());
  EXPECT_EQ(env.count(running), 1) << "the synced archive owes the directory's entry";
  EXPECT_EQ(env.count(dir), 0) << "its name inside was synced when the spare was made";
  EXPECT_EQ(spares->WaitFilled(), 1u) << "the filler makes the next one";
}

TEST_F(NewContextDirTest, AnExistingDirectoryOwesNoSync) {
  Job job;
  Task task;
  ASSERT_NO_FATAL_FAILURE(ClaimNew(&job, &task));
  ContextDirs plain(dir_.path());
  ASSERT_TRUE(plain.Ensure(task.id, Placement::kRunning).ok());
  SyncRecorder env;
  ContextDirs dirs(dir_.path(), &env);
  auto ctx = TaskContext::Start(dirs, {store_.get(), &clock_, &env}, task, job, ContextConfig());
  ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
  ASSERT_TRUE((*ctx)->messages().SeedThread(job.id, {SeedSystem(), SeedUser("u0")}, "plan").ok());
  ASSERT_TRUE((*ctx)->messages().SeedThread(job.id, {SeedSystem(), SeedUser("u1")}, "plan").ok());
  EXPECT_EQ(env.count(dir_.path() + "/contexts/running"), 0);
  EXPECT_EQ(env.count((*ctx)->dir()), 1);
}

TEST(NewDirEnvTest, OnlySyncsAtOrUnderTheNewDirectoryTriggerTheParentsOnce) {
  maestro::testing::TempDir tmp;
  SyncRecorder rec;
  const std::string parent = tmp.path() + "/running";
  const std::string dir = parent + "/t1";
  ASSERT_TRUE(rec.CreateDirs(dir + "/delegates/d").ok());
  ASSERT_TRUE(rec.CreateDirs(parent + "/t10").ok());
  NewDirEnv env(&rec, dir, parent);
  // A sibling whose name starts with the directory's, and the parent
  // itself, are not inside it.
  ASSERT_TRUE(env.SyncDir(parent + "/t10").ok());
  ASSERT_TRUE(env.SyncDir(parent).ok());
  EXPECT_FALSE(env.entry_durable());
  ASSERT_TRUE(env.SyncDir(dir + "/delegates/d").ok());
  EXPECT_TRUE(env.entry_durable());
  ASSERT_TRUE(env.SyncDir(dir).ok());
  EXPECT_EQ(rec.synced(),
            (std::vector<std::string>{parent + "/t10", parent, parent, dir + "/delegates/d", dir}));
}

TEST(NewDirEnvTest, AFailedParentSyncIsReportedAndTriedAgain) {
  maestro::testing::TempDir tmp;
  const std::string parent = tmp.path() + "/gone";
  NewDirEnv env(Env::Default(), parent + "/t1", parent);
  // The parent does not exist: its fsync fails, and so does the sync asked.
  EXPECT_FALSE(env.SyncDir(parent + "/t1").ok());
  EXPECT_FALSE(env.entry_durable());
  ASSERT_TRUE(Env::Default()->CreateDirs(parent + "/t1").ok());
  EXPECT_TRUE(env.SyncDir(parent + "/t1").ok());
  EXPECT_TRUE(env.entry_durable());
}

}  // namespace
}  // namespace maestro::context
