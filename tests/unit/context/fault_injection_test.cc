// The fault-injection suite: for each durable file of a task's context —
// the conversation (messages.jsonl, current.jsonl, transcript.jsonl),
// summaries.jsonl, the tools ledger (tools.jsonl), handoffs, metadata.json
// with the directory moves — a scripted sequence of writes is crashed at
// EVERY write operation k = 1..N (FaultInjectionEnv: op k and all later ones
// fail, a failing append leaves half its bytes), once as a process crash
// (every written byte stays) and once as a power loss (only what was synced
// stays). The files are then reopened through the code's normal open path
// and checked: every record whose call was acknowledged — returned ok, and
// for a power loss was made durable by the contract of core/durable_file.h —
// is there, and nothing half-written is read.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>

#include "context/compressor.h"
#include "context/jsonl_log.h"
#include "context/ledger.h"
#include "context/message_store.h"
#include "context/record_stores.h"
#include "context/task_context.h"
#include "core/durable_file.h"
#include "engine/handoff/document.h"
#include "support/fault_injection_env.h"
#include "support/scripted_llm.h"
#include "support/store_fixture.h"
#include "support/temp_dir.h"

namespace maestro::context {
namespace {

using maestro::testing::FaultInjectionEnv;
using maestro::testing::TempDir;
using Crash = FaultInjectionEnv::Crash;
using engine::HandoffDocument;
using engine::HandoffFromYaml;
using engine::HandoffToYaml;
using engine::SaveHandoffFile;

// What the script was told: `acked` returned ok; `durable` returned ok and
// survives a power loss.
struct Acked {
  std::vector<std::string> acked;
  std::vector<std::string> durable;
  void Add(const std::string& what, bool synced) {
    acked.push_back(what);
    if (synced) durable.push_back(what);
  }
  const std::vector<std::string>& For(Crash mode) const {
    return mode == Crash::kProcess ? acked : durable;
  }
};

using Script = std::function<void(Env& env, const std::string& dir, Acked& acked)>;
using Check = std::function<void(Env& env, const std::string& dir, const Acked& acked, Crash mode)>;

const char* ModeName(Crash mode) { return mode == Crash::kProcess ? "process" : "power loss"; }

// Runs `script` once to count its write ops, then once per op k and crash
// mode with op k failing, crashes, and runs `check`.
void CrashAtEveryWrite(const Script& script, const Check& check) {
  int64_t total = 0;
  {
    TempDir dir;
    FaultInjectionEnv env;
    Acked acked;
    script(env, dir.path(), acked);
    total = env.ops();
  }
  ASSERT_GT(total, 3);
  for (int64_t k = 1; k <= total + 1; ++k) {  // total + 1: no fault at all
    for (Crash mode : {Crash::kProcess, Crash::kPowerLoss}) {
      SCOPED_TRACE(::testing::Message() << "crash at write op " << k << " of " << total << " ("
                                        << ModeName(mode) << ")");
      TempDir dir;
      FaultInjectionEnv env;
      env.FailFromOp(k);
      Acked acked;
      script(env, dir.path(), acked);
      ASSERT_TRUE(env.SimulateCrash(mode).ok());
      check(env, dir.path(), acked, mode);
      if (::testing::Test::HasFailure()) return;  // one failing k tells the story
    }
  }
}

// Every complete line of `path`, each of which must be a JSON object, and
// no bytes after the last '\n' (a torn line would be read next).
std::vector<Json> WholeRecords(Env& env, const std::string& path) {
  std::vector<Json> out;
  EXPECT_TRUE(ForEachLine(env, path, [&](std::string_view line, uint64_t) {
                Json j = Json::parse(line, nullptr, false);
                EXPECT_TRUE(j.is_object()) << path << ": half-written line read: " << line;
                out.push_back(std::move(j));
                return true;
              }).ok());
  auto text = ReadFileToString(env, path);
  if (text.ok()) {
    EXPECT_TRUE(text->empty() || text->back() == '\n') << path << " ends torn";
  }
  return out;
}

bool HasContent(const std::vector<Json>& records, const std::string& content) {
  for (const Json& r : records) {
    if (r.value("content", Json()).is_string() && r["content"] == content) return true;
  }
  return false;
}

// ---- the conversation: messages.jsonl, current.jsonl, transcript.jsonl,
// and summaries.jsonl through a compression.

Json User(const std::string& text) { return {{"role", "user"}, {"content", text}}; }
Json Assistant(const std::string& text) { return {{"role", "assistant"}, {"content", text}}; }

TEST(FaultInjectionTest, ConversationSurvivesACrashAtEveryWrite) {
  FakeClock clock;
  ContextConfig config;
  config.keep_recent_messages = 2;
  // Written before the compression ("m1".."m4") and after it ("m5", "m6").
  Script script = [&](Env& env, const std::string& dir, Acked& acked) {
    auto ms = MessageStore::Open(dir, &clock, &env);
    if (!ms.ok()) return;
    // The archive's first seed is not synced (the job's next run would
    // write it again); the compression's synced summary makes it durable.
    if (ms->SeedThread("j1", {{{"role", "system"}, {"content", "sys"}}, User("u0")}, "plan").ok()) {
      acked.Add("u0", false);
    }
    for (int i = 1; i <= 4; ++i) {
      std::string m = "m" + std::to_string(i);
      if (ms->AddMessage(i % 2 ? Assistant(m) : User(m), "j1").ok()) acked.Add(m, false);
    }
    auto summaries = SummaryStore::Open(dir, &clock, &env);
    if (!summaries.ok()) return;
    maestro::testing::ScriptedLlm llm;
    llm.usage = {100, 0, 20, true};
    llm.Text("S");
    ContextCompressor compressor(&llm, config);
    if (compressor.Compress(*ms, *summaries, "j1", dir + "/compress", 0).ok()) {
      // The summary is synced in the archive (making every earlier archive
      // line durable) and in summaries.jsonl.
      for (std::string& a : acked.acked) {
        if (std::find(acked.durable.begin(), acked.durable.end(), a) == acked.durable.end()) {
          acked.durable.push_back(a);
        }
      }
      acked.Add("summary", true);
    }
    for (int i = 5; i <= 6; ++i) {
      std::string m = "m" + std::to_string(i);
      if (ms->AddMessage(i % 2 ? Assistant(m) : User(m), "j1").ok()) acked.Add(m, false);
    }
  };
  Check check = [&](Env& env, const std::string& dir, const Acked& acked, Crash mode) {
    auto ms = MessageStore::Open(dir, &clock, &env);
    ASSERT_TRUE(ms.ok()) << ms.status().ToString();
    auto archive = WholeRecords(env, ms->messages_path());
    auto current = WholeRecords(env, ms->current_path());
    WholeRecords(env, ms->transcript_path());
    const auto& required = acked.For(mode);
    const std::set<std::string> before_compression = {"u0", "m1", "m2", "m3", "m4"};
    bool current_has_summary = false;
    for (const Json& c : current) {
      current_has_summary |= c.value("content", "").rfind("[Summary", 0) == 0;
    }
    for (const std::string& r : required) {
      if (r == "summary") {
        EXPECT_TRUE(current_has_summary) << "acknowledged compression lost";
        continue;
      }
      EXPECT_TRUE(HasContent(archive, r)) << "acknowledged message " << r << " lost";
      // In the live context, unless a compression summarized it.
      EXPECT_TRUE(HasContent(current, r) || (current_has_summary && before_compression.count(r)))
          << r << " missing from current.jsonl";
    }
    if (ms->seed_incomplete()) {
      EXPECT_TRUE(required.empty()) << "an acknowledged seed reads as incomplete";
    } else if (ms->current_lines() > 0) {
      // One source of truth: the transcript is the live context, and the
      // archive replays to it.
      EXPECT_EQ(*ReadFileToString(env, ms->transcript_path()),
                *ReadFileToString(env, ms->current_path()));
      auto entries = ms->CurrentEntries();
      ASSERT_TRUE(entries.ok());
      EXPECT_EQ(static_cast<int64_t>(entries->size()), ms->current_lines());
    }
    // Repaired once: a second open finds nothing left to repair.
    auto again = MessageStore::Open(dir, &clock, &env);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->repairs().torn_bytes_cut, 0u);
    EXPECT_FALSE(again->repairs().current_rebuilt);
    EXPECT_FALSE(again->repairs().transcript_rebuilt);
    // Summaries: whole records once opened, and the acknowledged one is there.
    auto summary_store = SummaryStore::Open(dir, &clock, &env);
    ASSERT_TRUE(summary_store.ok());
    auto summaries = WholeRecords(env, summary_store->path());
    if (std::find(required.begin(), required.end(), "summary") != required.end()) {
      ASSERT_EQ(summaries.size(), 1u);
      EXPECT_EQ(summaries[0]["summary"], "S");
    }
    EXPECT_LE(summaries.size(), 1u);
    // The store goes on: the next message lands after the repair.
    if (!ms->seed_incomplete() && ms->current_lines() > 0) {
      ASSERT_TRUE(again->AddMessage(User("after"), "j2").ok());
    }
  };
  CrashAtEveryWrite(script, check);
}

// ---- summaries.jsonl: every Add is synced.

TEST(FaultInjectionTest, SummariesSurviveACrashAtEveryWrite) {
  FakeClock clock;
  Script script = [&](Env& env, const std::string& dir, Acked& acked) {
    auto s = SummaryStore::Open(dir, &clock, &env);
    if (!s.ok()) return;
    for (int i = 1; i <= 4; ++i) {
      SummaryRecord r;
      r.summary = "summary " + std::to_string(i);
      if (s->Add(r).ok()) acked.Add(r.summary, true);
    }
  };
  Check check = [&](Env& env, const std::string& dir, const Acked& acked, Crash mode) {
    auto s = SummaryStore::Open(dir, &clock, &env);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    auto records = WholeRecords(env, s->path());
    std::set<std::string> seen;
    int64_t last_id = 0;
    for (const Json& r : records) {
      seen.insert(r["summary"].get<std::string>());
      EXPECT_GT(r["id"].get<int64_t>(), last_id) << "ids repeat";
      last_id = r["id"].get<int64_t>();
    }
    for (const std::string& a : acked.For(mode)) EXPECT_TRUE(seen.count(a)) << a << " lost";
    auto next = s->Add(SummaryRecord{});
    ASSERT_TRUE(next.ok());
    EXPECT_EQ(*next, last_id + 1);
  };
  CrashAtEveryWrite(script, check);
}

// ---- tools.jsonl: the tools ledger fdatasyncs every record.

TEST(FaultInjectionTest, ToolsLedgerSurvivesACrashAtEveryWrite) {
  FakeClock clock;
  Script script = [&](Env& env, const std::string& dir, Acked& acked) {
    auto ledger = tools::ToolLedger::Open(dir, &clock, &env);
    if (!ledger.ok()) return;
    for (int i = 1; i <= 3; ++i) {
      const std::string call = "c" + std::to_string(i);
      tools::IdempotencyKey key{"t", "j", call};
      if ((*ledger)->Started(key, "WriteFile", {{"path", call}}, false).ok()) {
        acked.Add("started/" + call, true);
      }
      if ((*ledger)->Finished(key, "WriteFile", false, 5, tools::ToolResult::Ok("ok")).ok()) {
        acked.Add("finished/" + call, true);
      }
    }
    if ((*ledger)
            ->RecordEnded({"t", "j", "c4"}, "ReadFile", {{"path", "x"}}, 1,
                          tools::ToolResult::Ok("x"))
            .ok()) {
      acked.Add("finished/c4", true);
    }
  };
  Check check = [&](Env& env, const std::string& dir, const Acked& acked, Crash mode) {
    auto ledger = tools::ToolLedger::Open(dir, &clock, &env);
    ASSERT_TRUE(ledger.ok()) << ledger.status().ToString();
    WholeRecords(env, dir + "/tools.jsonl");
    auto records = tools::ToolLedger::Read(dir, &env);
    ASSERT_TRUE(records.ok());
    std::set<std::string> seen;
    int64_t last_seq = 0;
    for (const auto& r : *records) {
      seen.insert(r.event + "/" + r.key.call_id);
      EXPECT_GT(r.seq, last_seq) << "seqs repeat";
      last_seq = r.seq;
    }
    for (const std::string& a : acked.For(mode)) EXPECT_TRUE(seen.count(a)) << a << " lost";
    // A call whose `finished` was acknowledged is not reported for recovery.
    auto plan = tools::PlanRecovery(dir, "j", &env);
    ASSERT_TRUE(plan.ok());
    for (const auto& open : plan->reconcile) {
      EXPECT_FALSE(seen.count("finished/" + open.key.call_id));
    }
    ASSERT_TRUE((*ledger)->Started({"t", "j", "c9"}, "ReadFile", Json::object(), true).ok());
    auto after = tools::ToolLedger::Read(dir, &env);
    ASSERT_TRUE(after.ok());
    EXPECT_GT(after->back().seq, last_seq);
  };
  CrashAtEveryWrite(script, check);
}

// ---- handoffs/NNNN.yaml: SaveHandoffFile (src/engine/handoff/document.cc)
// writes each whole with ReplaceFileContent.

TEST(FaultInjectionTest, HandoffFilesAreOldOrNewAfterACrashAtEveryWrite) {
  auto doc = [](int n) {
    HandoffDocument d;
    d.spec_ref = "spec " + std::to_string(n);
    d.completed = {"part " + std::to_string(n)};
    d.files_changed = {"src/a.cc — WriteFile"};
    return d;
  };
  Script script = [&](Env& env, const std::string& dir, Acked& acked) {
    for (int n = 1; n <= 3; ++n) {
      auto path = SaveHandoffFile(env, dir + "/handoffs", HandoffToYaml(doc(n)));
      if (!path.ok()) return;  // the next number would be this one again
      acked.Add(*path, true);
    }
    // A rewrite of the first: it must read as the old or the new version.
    if (ReplaceFileContent(env, dir + "/handoffs/0001.yaml", HandoffToYaml(doc(4))).ok()) {
      acked.Add("rewrite", true);
    }
  };
  Check check = [&](Env& env, const std::string& dir, const Acked& acked, Crash mode) {
    const auto& required = acked.For(mode);
    for (int n = 1; n <= 3; ++n) {
      const std::string path = dir + "/handoffs/000" + std::to_string(n) + ".yaml";
      auto text = ReadFileToString(env, path);
      if (!text.ok()) {
        EXPECT_EQ(std::find(required.begin(), required.end(), path), required.end())
            << path << " acknowledged, then lost";
        continue;
      }
      auto parsed = HandoffFromYaml(*text);
      ASSERT_TRUE(parsed.ok()) << path << " half-written: " << *text;
      std::set<std::string> versions = {doc(n).spec_ref};
      if (n == 1) versions.insert(doc(4).spec_ref);
      EXPECT_TRUE(versions.count(parsed->spec_ref)) << parsed->spec_ref;
      if (n == 1 && std::find(required.begin(), required.end(), "rewrite") != required.end()) {
        EXPECT_EQ(parsed->spec_ref, doc(4).spec_ref) << "acknowledged rewrite lost";
      }
    }
  };
  CrashAtEveryWrite(script, check);
}

// ---- metadata.json and the directory moves: a task's session through
// TaskContext (Start writes metadata.json once, EndSession moves the
// directory running/ → paused/).

class TaskContextFaultTest : public maestro::testing::StoreTest {};

TEST_F(TaskContextFaultTest, MetadataAndDirectoryMovesSurviveACrashAtEveryWrite) {
  auto created = NewTaskWith("coding");
  Job job = Claim();
  auto task = store_->GetTask(job.task_id);
  ASSERT_TRUE(task.ok());
  const std::string id = task->id;
  ContextConfig config;
  Script script = [&](Env& env, const std::string& dir, Acked& acked) {
    ContextDirs dirs(dir, &env);
    auto ctx = TaskContext::Start(dirs, {store_.get(), &clock_, &env}, *task, job, config);
    if (!ctx.ok()) return;
    // A new directory's entry is not synced by Start (NewDirEnv syncs it
    // with the first synced record inside); metadata.json is written but not
    // synced (a copy of the task's rows, rewritten at the next start when a
    // power loss took it).
    acked.Add("started", false);
    // The archive's first seed: not synced (the next run writes it again).
    if ((*ctx)->messages().StartThread(job.id, {{"role", "system"}, {"content", "s"}}).ok()) {
      acked.Add("thread", false);
    }
    ToolCallRecord r;
    r.tool = "ReadFile";
    r.call_id = "c1";
    if ((*ctx)->RecordToolCall(r).ok()) {
      // The ledger's synced record made the directory's entry durable too.
      acked.durable.push_back("started");
      acked.Add("tool", true);
    }
    if (TaskContext::EndSession(std::move(*ctx), JobStatus::kWaitingHuman).ok()) {
      acked.Add("paused", true);  // rename + fsync of both parents
    }
  };
  Check check = [&](Env& env, const std::string& dir, const Acked& acked, Crash mode) {
    const auto& required = acked.For(mode);
    auto has = [&](const char* what) {
      return std::find(required.begin(), required.end(), what) != required.end();
    };
    ContextDirs dirs(dir, &env);
    auto place = dirs.Find(id);
    if (has("started")) {
      ASSERT_TRUE(place.has_value()) << "acknowledged context directory lost";
    }
    if (has("paused")) {
      EXPECT_EQ(place, Placement::kPaused) << "acknowledged move lost";
    }
    // Exactly one place: a move is a rename.
    int copies = 0;
    for (Placement p : {Placement::kRunning, Placement::kPaused, Placement::kCompleted}) {
      copies += env.FileExists(dirs.PathOf(p, id)) ? 1 : 0;
    }
    EXPECT_LE(copies, 1);
    if (place) {
      auto meta = ReadFileToString(env, dirs.PathOf(*place, id) + "/metadata.json");
      // A process crash cannot tear it (temp file + rename); a power loss
      // may leave it empty or gone: the Start below writes it again.
      if (meta.ok() && mode == Crash::kProcess) {
        Json m = Json::parse(*meta, nullptr, false);
        ASSERT_TRUE(m.is_object()) << "half-written metadata.json: " << *meta;
        EXPECT_EQ(m["uuid"], id);
      } else if (!meta.ok()) {
        EXPECT_FALSE(has("started") && mode == Crash::kProcess) << "metadata.json lost";
      }
    }
    // The next session opens whatever the crash left.
    auto ctx = TaskContext::Start(dirs, {store_.get(), &clock_, &env}, *task, job, config);
    ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
    // A power loss may take the unsynced first seed, and with it the
    // directory's entries.
    if (has("started") && (mode == Crash::kProcess || has("thread"))) {
      EXPECT_TRUE((*ctx)->is_resumed());
    }
    if (has("thread")) {
      EXPECT_EQ((*ctx)->messages().current_lines(), 1);
    }
    if (has("tool")) {
      auto n = (*ctx)->tools().CountEndedCalls();
      ASSERT_TRUE(n.ok());
      EXPECT_EQ(*n, 1);
    }
    auto meta = ReadFileToString(env, (*ctx)->metadata_path());
    ASSERT_TRUE(meta.ok());
    EXPECT_EQ(Json::parse(*meta)["uuid"], id);
  };
  CrashAtEveryWrite(script, check);
}

// ---- the other faults: a full disk and a slow fsync.

TEST(FaultInjectionTest, AFullDiskFailsTheAppendAndTheReopenedLogHasOnlyWholeRecords) {
  TempDir dir;
  FaultInjectionEnv env;
  auto log = JsonlLog::Open(env, dir.File("events.jsonl"));
  ASSERT_TRUE(log.ok());
  ASSERT_TRUE(log->Append({{"n", 1}}).ok());
  env.SetSpaceLimit(10);  // less than one record
  Status st = log->Append({{"n", 2}}).status();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("No space left on device"), std::string::npos) << st.ToString();
  // Space is back, but the log does not glue a record onto the torn one.
  env.SetSpaceLimit(1 << 20);
  EXPECT_FALSE(log->Append({{"n", 3}}).ok());
  auto reopened = JsonlLog::Open(env, dir.File("events.jsonl"));
  ASSERT_TRUE(reopened.ok());
  EXPECT_GT(reopened->open_info().torn_bytes_cut, 0u);
  ASSERT_TRUE(reopened->Append({{"n", 4}}).ok());
  std::vector<int> ns;
  for (const Json& r : WholeRecords(env, dir.File("events.jsonl"))) ns.push_back(r["n"]);
  EXPECT_EQ(ns, (std::vector<int>{1, 4}));
}

TEST(FaultInjectionTest, ATransientWriteErrorIsReportedAndRepairedOnReopen) {
  TempDir dir;
  FakeClock clock;
  FaultInjectionEnv env;
  auto ledger = tools::ToolLedger::Open(dir.path(), &clock, &env);
  ASSERT_TRUE(ledger.ok());
  env.FailOnlyOp(env.ops() + 1);
  EXPECT_FALSE((*ledger)->Started({"t", "j", "a"}, "ReadFile", Json::object(), true).ok());
  ledger->reset();
  auto reopened = tools::ToolLedger::Open(dir.path(), &clock, &env);
  ASSERT_TRUE(reopened.ok());
  ASSERT_TRUE((*reopened)->Started({"t", "j", "b"}, "ReadFile", Json::object(), true).ok());
  auto records = tools::ToolLedger::Read(dir.path(), &env);
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0].key.call_id, "b");
  WholeRecords(env, dir.File("tools.jsonl"));
}

TEST(FaultInjectionTest, ASlowFsyncDelaysTheSyncedAppendOnly) {
  TempDir dir;
  FaultInjectionEnv env;
  env.SetSyncDelay(std::chrono::milliseconds(50));
  auto log = JsonlLog::Open(env, dir.File("summaries.jsonl"));
  ASSERT_TRUE(log.ok());
  int64_t t0 = env.MonotonicMs();
  ASSERT_TRUE(log->Append({{"n", 1}}).ok());
  EXPECT_LT(env.MonotonicMs() - t0, 50);
  ASSERT_TRUE(log->Append({{"n", 2}}, /*sync=*/true).ok());
  EXPECT_GE(env.MonotonicMs() - t0, 50);
}

// Creates `path` with `content`, fsync'ed.
Status WriteSynced(Env& env, const std::string& path, const std::string& content) {
  MAESTRO_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> f, env.NewWritableFile(path));
  MAESTRO_RETURN_IF_ERROR(f->Append(content));
  MAESTRO_RETURN_IF_ERROR(f->Sync());
  return f->Close();
}

// The model itself: a power loss keeps what was synced and undoes an
// un-synced rename; a process crash keeps everything.
TEST(FaultInjectionEnvTest, PowerLossDropsUnsyncedDataAndUndoesUnsyncedRenames) {
  TempDir dir;
  FaultInjectionEnv env;
  const std::string a = dir.File("a"), b = dir.File("b");
  ASSERT_TRUE(WriteSynced(env, b, "old b").ok());
  ASSERT_TRUE(env.SyncDir(dir.path()).ok());
  {
    auto f = env.NewAppendableFile(a);
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE(env.SyncDir(dir.path()).ok());
    ASSERT_TRUE((*f)->Append("synced.").ok());
    ASSERT_TRUE((*f)->Sync().ok());
    ASSERT_TRUE((*f)->Append("lost").ok());
  }
  ASSERT_TRUE(WriteSynced(env, dir.File("tmp"), "new b").ok());
  ASSERT_TRUE(env.RenameFile(dir.File("tmp"), b).ok());  // no SyncDir after it
  ASSERT_TRUE(env.SimulateCrash(Crash::kPowerLoss).ok());
  EXPECT_EQ(*ReadFileToString(env, a), "synced.");
  EXPECT_EQ(*ReadFileToString(env, b), "old b");
  EXPECT_FALSE(env.FileExists(dir.File("tmp")));  // created, never made durable
  // Written but never synced: a power loss leaves it empty.
  ASSERT_TRUE(WriteStringToFile(env, b, "unsynced").ok());
  ASSERT_TRUE(env.SimulateCrash(Crash::kPowerLoss).ok());
  EXPECT_EQ(*ReadFileToString(env, b), "");

  ASSERT_TRUE(WriteSynced(env, dir.File("tmp"), "new b").ok());
  ASSERT_TRUE(env.RenameFile(dir.File("tmp"), b).ok());
  ASSERT_TRUE(env.SyncDir(dir.path()).ok());
  ASSERT_TRUE(env.SimulateCrash(Crash::kPowerLoss).ok());
  EXPECT_EQ(*ReadFileToString(env, b), "new b");
}

TEST(FaultInjectionEnvTest, AProcessCrashKeepsEveryWrittenByteAndKillsOpenHandles) {
  TempDir dir;
  FaultInjectionEnv env;
  auto f = env.NewAppendableFile(dir.File("a"));
  ASSERT_TRUE(f.ok());
  env.FailFromOp(2);
  ASSERT_TRUE((*f)->Append("0123").ok());
  EXPECT_FALSE((*f)->Append("4567").ok());  // torn: half of it reaches the file
  EXPECT_FALSE((*f)->Sync().ok());
  ASSERT_TRUE(env.SimulateCrash(Crash::kProcess).ok());
  EXPECT_EQ(*ReadFileToString(env, dir.File("a")), "012345");
  EXPECT_FALSE((*f)->Append("x").ok());  // a handle from before the crash
}

}  // namespace
}  // namespace maestro::context
