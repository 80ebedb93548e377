// TaskContext and ContextDirs: the directory layout of DESIGN.md §4, moves
// that follow the job status and survive a restart, reconcile, janitor,
// and the task row's statistics.
#include "context/task_context.h"

#include <gtest/gtest.h>

#include <fstream>

#include "context/compressor.h"
#include "context/context_startup.h"
#include "core/config.h"
#include "core/durable_file.h"
#include "core/ids.h"
#include "support/scripted_llm.h"
#include "support/store_fixture.h"
#include "support/temp_dir.h"

namespace maestro::context {
namespace {

namespace fs = std::filesystem;

class TaskContextTest : public maestro::testing::StoreTest {
 protected:
  std::unique_ptr<TaskContext> StartFor(const Job& job) {
    auto task = store_->GetTask(job.task_id);
    EXPECT_TRUE(task.ok());
    auto ctx = TaskContext::Start(dirs(), {store_.get(), &clock_}, *task, job, config_);
    EXPECT_TRUE(ctx.ok()) << ctx.status().ToString();
    return ctx.ok() ? std::move(ctx).value() : nullptr;
  }
  const ContextDirs& dirs() {
    if (!dirs_) dirs_ = std::make_unique<ContextDirs>(dir_.path());
    return *dirs_;
  }
  ContextConfig config_;
  std::unique_ptr<ContextDirs> dirs_;
};

TEST_F(TaskContextTest, StartCreatesTheLayoutAndStaticMetadata) {
  auto created = NewTaskWith("coding");
  Job job = Claim();
  auto ctx = StartFor(job);
  ASSERT_TRUE(ctx);
  std::string dir = dir_.path() + "/contexts/running/" + created.task.id;
  EXPECT_EQ(ctx->dir(), dir);
  EXPECT_FALSE(ctx->is_resumed());
  EXPECT_FALSE(fs::exists(dir + "/planning"));  // no plan store: nothing writes one
  // What the start wrote exists; each log comes with its first record and
  // handoffs/ with the first handoff (a file creation is the costly part of
  // a task's setup).
  for (const char* f : {"metadata.json", "events.jsonl"}) {
    EXPECT_TRUE(fs::exists(dir + "/" + f)) << f;
  }
  for (const char* f : {"messages.jsonl", "summaries.jsonl", "tools.jsonl", "handoffs"}) {
    EXPECT_FALSE(fs::exists(dir + "/" + f)) << f;
  }
  auto meta = ReadFileToString(*Env::Default(), dir + "/metadata.json");
  ASSERT_TRUE(meta.ok());
  Json m = Json::parse(*meta);
  EXPECT_EQ(m["uuid"], created.task.id);
  EXPECT_EQ(m["task_key"]["task_source"], "local");
  EXPECT_EQ(m["config"]["compression_threshold"], 0.7);
  EXPECT_EQ(m["config"]["context_length"], config_.context_length);
  EXPECT_EQ(m["first_job_id"], job.id);
  EXPECT_GT(m["process_id"].get<int64_t>(), 0);
}

TEST_F(TaskContextTest, StatisticsGoToTheTaskRow) {
  auto created = NewTaskWith("coding");
  auto ctx = StartFor(Claim());
  ASSERT_TRUE(ctx->RecordLlmCall(1000, 50).ok());
  ASSERT_TRUE(ctx->RecordLlmCall(1200, 30).ok());
  ToolCallRecord r;
  r.tool = "ReadFile";
  r.args = {{"path", "a"}};
  r.result = "x";
  auto seq = ctx->RecordToolCall(r);
  ASSERT_TRUE(seq.ok());
  EXPECT_EQ(*seq, 1);
  ASSERT_TRUE(ctx->RecordCompression().ok());
  auto t = store_->GetTask(created.task.id);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->llm_call_count, 2);
  EXPECT_EQ(t->total_tokens, 2280);
  EXPECT_EQ(t->tool_call_count, 1);
  EXPECT_EQ(t->compression_count, 1);
  EXPECT_EQ(*ctx->tools().CountEndedCalls(), 1);
  // Written in the tools ledger's one format: one `finished` record with the args.
  auto records = tools::ToolLedger::Read(ctx->dir());
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0].event, "finished");
  EXPECT_EQ((*records)[0].args, Json({{"path", "a"}}));
  EXPECT_EQ((*records)[0].result, "x");
}

TEST_F(TaskContextTest, DirectoryFollowsJobStatusAndSurvivesRestart) {
  auto created = NewTaskWith("coding");
  const std::string id = created.task.id;
  Job job = Claim();
  auto ctx = StartFor(job);
  ASSERT_TRUE(ctx->messages().StartThread(job.id, {{"role", "system"}, {"content", "s"}}).ok());
  std::ofstream(ctx->request_json_path()) << "{}";
  ASSERT_TRUE(store_->FinishJob(LeaseOf(job), JobOutcome::WaitingHuman("ask", "plan")).ok());
  auto to = TaskContext::EndSession(std::move(ctx), JobStatus::kWaitingHuman);
  ASSERT_TRUE(to.ok());
  EXPECT_EQ(*to, dir_.path() + "/contexts/paused/" + id);
  EXPECT_FALSE(fs::exists(*to + "/request.json"));  // transient

  // "Restart": new objects, same data dir.
  dirs_.reset();
  Reopen();
  EXPECT_EQ(dirs().Find(id), Placement::kPaused);
  ASSERT_TRUE(store_->ResumeParkedJob(job.id).ok());
  Job again = Claim();
  auto ctx2 = StartFor(again);
  ASSERT_TRUE(ctx2);
  EXPECT_TRUE(ctx2->is_resumed());
  EXPECT_EQ(dirs().Find(id), Placement::kRunning);
  EXPECT_EQ(ctx2->messages().current_lines(), 1);  // the conversation moved with it
  ASSERT_TRUE(store_->FinishJob(LeaseOf(again), JobOutcome::Succeeded("ok")).ok());
  ASSERT_TRUE(TaskContext::EndSession(std::move(ctx2), JobStatus::kSucceeded).ok());
  EXPECT_EQ(dirs().Find(id), Placement::kCompleted);
  EXPECT_FALSE(fs::exists(dir_.path() + "/contexts/running/" + id));
}

TEST_F(TaskContextTest, ReconcileMovesMisplacedDirsAndReportsMissingAndOrphans) {
  auto parked = NewTaskWith("coding");
  Job pj = Claim();
  ASSERT_TRUE(dirs().Ensure(parked.task.id, Placement::kRunning).ok());
  // Crash: the job parked in the database but the process died before moving.
  ASSERT_TRUE(store_->FinishJob(LeaseOf(pj), JobOutcome::WaitingHuman("ask", "m")).ok());

  auto lost = NewTaskWith("coding");
  Job lj = Claim();
  (void)lj;  // started, but its directory was never created (or deleted)

  auto done = NewTaskWith("coding");
  Job dj = Claim();
  ASSERT_TRUE(dirs().Ensure(done.task.id, Placement::kPaused).ok());
  ASSERT_TRUE(store_->FinishJob(LeaseOf(dj), JobOutcome::Failed("boom")).ok());

  auto never = NewTaskWith("coding");  // queued, never started: no dir is fine
  std::string orphan = NewUuid();
  ASSERT_TRUE(dirs().Ensure(orphan, Placement::kRunning).ok());

  ContextDirs fresh(dir_.path());  // as after a restart
  auto rep = fresh.Reconcile(*store_);
  ASSERT_TRUE(rep.ok()) << rep.status().ToString();
  EXPECT_EQ(fresh.Find(parked.task.id), Placement::kPaused);
  EXPECT_EQ(fresh.Find(done.task.id), Placement::kCompleted);
  EXPECT_EQ(rep->moved.size(), 2u);
  EXPECT_EQ(rep->missing, std::vector<std::string>{lost.task.id});
  EXPECT_EQ(rep->orphans, std::vector<std::string>{orphan});
  EXPECT_FALSE(fresh.Find(never.task.id).has_value());
  auto again = fresh.Reconcile(*store_);  // idempotent
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->moved.empty());
}

TEST_F(TaskContextTest, JanitorRemovesOldCompletedDirsOnly) {
  auto old_task = NewTaskWith("coding");
  Job oj = Claim();
  auto ctx = StartFor(oj);
  ASSERT_TRUE(store_->FinishJob(LeaseOf(oj), JobOutcome::Succeeded("ok")).ok());
  ASSERT_TRUE(TaskContext::EndSession(std::move(ctx), JobStatus::kSucceeded).ok());
  clock_.Advance(20LL * 86'400'000);
  auto new_task = NewTaskWith("coding");
  Job nj = Claim();
  auto ctx2 = StartFor(nj);
  ASSERT_TRUE(store_->FinishJob(LeaseOf(nj), JobOutcome::Succeeded("ok")).ok());
  ASSERT_TRUE(TaskContext::EndSession(std::move(ctx2), JobStatus::kSucceeded).ok());
  clock_.Advance(15LL * 86'400'000);  // old: 35 days, new: 15 days

  auto keep_all = dirs().Cleanup(*store_, 0, clock_.NowMs());
  ASSERT_TRUE(keep_all.ok());
  EXPECT_TRUE(keep_all->empty());
  auto removed = dirs().Cleanup(*store_, 30, clock_.NowMs());
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(*removed, std::vector<std::string>{old_task.task.id});
  EXPECT_FALSE(dirs().Find(old_task.task.id).has_value());
  EXPECT_EQ(dirs().Find(new_task.task.id), Placement::kCompleted);
}

TEST_F(TaskContextTest, CompressionThroughTheContextUpdatesStatsAndEvents) {
  auto created = NewTaskWith("coding");
  Job job = Claim();
  config_.context_length = 2000;
  auto ctx = StartFor(job);
  MessageStore& ms = ctx->messages();
  ASSERT_TRUE(ms.StartThread(job.id, {{"role", "system"}, {"content", "s"}}).ok());
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(ms.AddMessage({{"role", "user"}, {"content", std::string(800, 'q')}}, job.id).ok());
    ASSERT_TRUE(
        ms.AddMessage({{"role", "assistant"}, {"content", std::string(800, 'a')}}, job.id).ok());
  }
  maestro::testing::ScriptedLlm llm;
  llm.usage = {100, 0, 20, true};
  llm.Text("short facts");
  ContextCompressor comp(&llm, config_);
  ASSERT_TRUE(comp.ShouldCompress(ms.EstimatePromptTokens(0)));
  auto out = comp.Compress(*ctx, 0);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_FALSE(comp.ShouldCompress(ms.EstimatePromptTokens(0)));
  auto t = store_->GetTask(created.task.id);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->compression_count, 1);
  EXPECT_EQ(t->llm_call_count, 1);  // the summary call
  EXPECT_EQ(t->total_tokens, 120);
  EXPECT_EQ(ctx->summaries().count(), 1);
  int compressed = 0;
  ASSERT_TRUE(ctx->events()
                  .ForEach([&](const Json& e) {
                    compressed += e["type"] == "context.compressed";
                    return true;
                  })
                  .ok());
  EXPECT_EQ(compressed, 1);
  EXPECT_FALSE(fs::exists(ctx->dir() + "/compress"));
}

TEST(ContextConfigTest, ParsesAndRejectsBadValues) {
  auto c = ParseContextConfig({{"compression_threshold", 0.8}, {"keep_recent_messages", 7}});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->keep_recent_messages, 7);
  EXPECT_DOUBLE_EQ(c->compression_threshold, 0.8);
  auto typo = ParseContextConfig({{"keep_recent_message", 3}});
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("keep_recent_messages"), std::string::npos);
  auto order = ParseContextConfig({{"handoff_threshold", 0.8}});
  ASSERT_FALSE(order.ok());
  EXPECT_EQ(order.status().field(), "context_storage.handoff_threshold");
}

// Issue 45 item 11: a seed-002 style section (enabled, base_dir at their
// seed defaults) runs; another value names the key and what replaced it.
TEST(ContextConfigTest, SeedStyleEnabledAndBaseDirAreAcceptedAtTheirSeedMeaning) {
  auto seed = ParseContextConfig({{"enabled", true},
                                  {"base_dir", "contexts"},
                                  {"compression_threshold", 0.7},
                                  {"keep_recent_messages", 5},
                                  {"cleanup_days", 30},
                                  {"summary_prompt", "Summarize."}});
  ASSERT_TRUE(seed.ok()) << seed.status().ToString();
  EXPECT_EQ(seed->cleanup_days, 30);
  EXPECT_EQ(seed->summary_prompt, "Summarize.");

  auto off = ParseContextConfig({{"enabled", false}});
  ASSERT_FALSE(off.ok());
  EXPECT_EQ(off.status().field(), "context_storage.enabled");
  EXPECT_NE(off.status().message().find("cleanup_days"), std::string::npos)
      << off.status().message();
  auto not_bool = ParseContextConfig({{"enabled", "yes"}});
  ASSERT_FALSE(not_bool.ok());
  EXPECT_EQ(not_bool.status().field(), "context_storage.enabled");

  auto moved = ParseContextConfig({{"base_dir", "/srv/ctx"}});
  ASSERT_FALSE(moved.ok());
  EXPECT_EQ(moved.status().field(), "context_storage.base_dir");
  EXPECT_NE(moved.status().message().find("data_dir"), std::string::npos)
      << moved.status().message();
  EXPECT_NE(moved.status().message().find("/srv/ctx"), std::string::npos);
}

TEST(ContextConfigTest, RequestJsonIsOffUnlessAsked) {
  auto off = ParseContextConfig(Json::object());
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->request_json);
  auto on = ParseContextConfig({{"request_json", true}});
  ASSERT_TRUE(on.ok());
  EXPECT_TRUE(on->request_json);
  EXPECT_FALSE(ParseContextConfig({{"request_json", "yes"}}).ok());
}

// Through the server's own config path: the seed's section in maestro.yaml
// passes ContextConfigFromConfig, and `enabled: false` stops it with the
// file position and the key.
TEST(ContextConfigTest, ASeedStyleSectionInTheConfigFileLoads) {
  maestro::testing::TempDir dir;
  std::string path = dir.path() + "/maestro.yaml";
  auto write = [&](const std::string& enabled) {
    std::ofstream(path) << "context_storage:\n  enabled: " << enabled
                        << "\n  base_dir: contexts\n  compression_threshold: 0.7\n"
                           "  keep_recent_messages: 5\n  cleanup_days: 30\n";
  };
  write("true");
  auto cfg = LoadConfig(path, {});
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  auto cc = ContextConfigFromConfig(*cfg);
  ASSERT_TRUE(cc.ok()) << cc.status().ToString();
  EXPECT_EQ(cc->keep_recent_messages, 5);
  write("false");
  cfg = LoadConfig(path, {});
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  cc = ContextConfigFromConfig(*cfg);
  ASSERT_FALSE(cc.ok());
  EXPECT_NE(cc.status().message().find("maestro.yaml:"), std::string::npos)
      << cc.status().message();
  EXPECT_NE(cc.status().message().find("enabled: false is not supported"), std::string::npos)
      << cc.status().message();
}

}  // namespace
}  // namespace maestro::context

namespace maestro::context {
namespace {

class DelegateContextTest : public maestro::testing::StoreTest {};

TEST_F(DelegateContextTest, OpenDelegateHasItsOwnConversationInsideTheTaskDirectory) {
  NewTaskWith("coding");
  Job job = Claim();
  auto task = store_->GetTask(job.task_id);
  ASSERT_TRUE(task.ok());
  ContextDirs dirs(dir_.path());
  auto ctx = TaskContext::Start(dirs, {store_.get(), &clock_}, *task, job, ContextConfig{});
  ASSERT_TRUE(ctx.ok());
  ASSERT_TRUE((*ctx)->messages().StartThread(job.id, {{"role", "system"}, {"content", "p"}}).ok());
  auto child = (*ctx)->OpenDelegate("j-call_1");
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  EXPECT_EQ((*child)->dir(), (*ctx)->dir() + "/delegates/j-call_1");
  ASSERT_TRUE(
      (*child)->messages().StartThread(job.id, {{"role", "system"}, {"content", "c"}}).ok());
  ASSERT_TRUE((*child)->messages().AddMessage({{"role", "user"}, {"content", "sub"}}, job.id).ok());
  EXPECT_EQ((*child)->messages().current_lines(), 2);
  EXPECT_EQ((*ctx)->messages().current_lines(), 1);  // the parent's conversation is untouched
  auto parent_current = ReadFileToString(*Env::Default(), (*ctx)->messages().current_path());
  ASSERT_TRUE(parent_current.ok());
  EXPECT_EQ(parent_current->find("sub"), std::string::npos);
}

TEST_F(DelegateContextTest, ChangedPathsReadsTheDispatcherLedgerRecords) {
  NewTaskWith("coding");
  Job job = Claim();
  auto task = store_->GetTask(job.task_id);
  ASSERT_TRUE(task.ok());
  ContextDirs dirs(dir_.path());
  auto ctx = TaskContext::Start(dirs, {store_.get(), &clock_}, *task, job, ContextConfig{});
  ASSERT_TRUE(ctx.ok());
  {
    // What src/context/ledger.cc appends: started (with args) then finished/error.
    std::ofstream f((*ctx)->dir() + "/tools.jsonl", std::ios::app);
    f << R"({"seq":1,"event":"started","job_id":"j","call_id":"a","tool":"WriteFile","args":{"path":"x/./a.txt"}})"
         "\n"
      << R"({"seq":2,"event":"finished","job_id":"j","call_id":"a","tool":"WriteFile"})"
         "\n"
      << R"({"seq":3,"event":"started","job_id":"j","call_id":"b","tool":"EditFile","args":{"path":"b.txt"}})"
         "\n"
      << R"({"seq":4,"event":"error","job_id":"j","call_id":"b","tool":"EditFile"})"
         "\n"
      << R"({"seq":5,"event":"started","job_id":"j","call_id":"c","tool":"WriteFile","args":{"path":"c.txt"}})"
         "\n";
  }
  auto reopened = TaskContext::Start(dirs, {store_.get(), &clock_}, *task, job, ContextConfig{});
  ctx->reset();
  ASSERT_TRUE(reopened.ok());
  auto paths = (*reopened)->tools().ChangedPaths();
  ASSERT_TRUE(paths.ok());
  // Only the finished write: the failed edit and the unfinished write changed nothing known.
  EXPECT_EQ(*paths, (std::set<std::string>{"x/a.txt"}));
}

}  // namespace
}  // namespace maestro::context
