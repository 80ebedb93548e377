// The agent's judgement (issue 21) end to end on the real job path — WorkerPool,
// PieceExecutor, SqliteStore, HttpLlmClient — against the real maestro-fakellm:
// the Auto Prompter's deny / instruct / approve_once and its off switch, skills
// and memory in the system text, a Reflection task's lesson in the next task's
// instruction, and the LLM piece router.
#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <fstream>

#include "cache_figures.h"
#include "engine/job/reflection.h"
#include "engine_rig.h"
#include "fakellm_process.h"
#include "knowledge/memory.h"
#include "support/temp_dir.h"

namespace maestro::engine {
namespace {

using maestro::testing::FakeLlmProcess;
using maestro::testing::TempDir;
using test::ClearRequests;
using test::FirstRequestReuse;
using test::Retention;
using test::ServerRequests;

Json Call(const std::string& id, const std::string& name, Json args) {
  return {{"id", id}, {"name", name}, {"arguments", std::move(args)}};
}

// A reply that makes `calls` when some message contains every one of `tags`.
Json Reply(std::vector<std::string> tags, Json calls) {
  return {{"match", {{"any_message_contains", tags}}}, {"tool_calls", std::move(calls)}};
}

Json Complete(const std::string& status, const std::string& result) {
  return Call("call_done", "complete", {{"status", status}, {"result", result}});
}

void WriteScript(const TempDir& dir, const Json& replies) {
  std::ofstream(dir.File("script.json"))
      << Json{{"replies", replies}, {"default", {{"text", "exhausted"}}}}.dump();
}

void WriteFile(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

class JudgementTest : public ::testing::Test {
 protected:
  void StartRig(const std::function<void(PieceExecutorOptions&)>& tune,
                tools::ToolPolicy space_policy = {}) {
    fake_ = std::make_unique<FakeLlmProcess>(
        std::vector<std::string>{"--script", dir_.File("script.json"), "--slots", "2"});
    std::filesystem::create_directories(dir_.File("proj"));
    rig_.Start(dir_.path(), tools::Space{"proj", dir_.File("proj"), space_policy},
               fake_->base_url(), 100'000, [&](PieceExecutorOptions& o) {
                 o.clock = &clock_;  // the prompt's date: the same for every run
                 if (tune) tune(o);
               });
  }

  Job RunTask(const std::string& instruction, const std::string& piece = "chat",
              const std::string& space = "") {
    NewTask t;
    t.instruction = instruction;
    t.piece = piece;
    t.space = space;
    auto created = rig_.store().CreateTask(t);
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    if (!created.ok()) return {};
    rig_.pool().Notify();
    return rig_.WaitForEnd(created->job.id);
  }

  // The request bodies whose messages mention `tag`, in order.
  std::vector<Json> BodiesFor(const std::string& tag) {
    std::vector<Json> out;
    for (const Json& r : ServerRequests(*fake_)) {
      if (r["body"]["messages"].dump().find(tag) != std::string::npos) out.push_back(r["body"]);
    }
    return out;
  }

  TempDir dir_;
  FakeClock clock_{1'780'000'000'000};
  std::unique_ptr<FakeLlmProcess> fake_;
  test::EngineRig rig_;  // declared after the fake: stopped before it
};

// The Done-when: a rule denying RunCommand with `rm -rf` answers the call
// with an Error result; the Policy Event holds no raw arguments.
TEST_F(JudgementTest, ADenyRuleAnswersTheCallWithAnErrorAndItsEventHoldsNoArguments) {
  WriteFile(dir_.File("policies/default.yaml"), R"(rules:
  - id: no-rm-rf
    tool: RunCommand
    match: {command: 'rm[[:space:]]+-rf'}
    deny: "deleting whole trees is not allowed; remove files one by one"
)");
  WriteScript(
      dir_,
      Json::array(
          {Reply({"[clean]"}, {Call("c1", "RunCommand", {{"command", "rm -rf build SECRET-42"}})}),
           Reply({"[clean]", "denied by policy"}, {Complete("success", "could not delete")})}));
  StartRig([&](PieceExecutorOptions& o) { o.policies_dir = dir_.File("policies"); });
  Job job = RunTask("[clean] remove the build output");
  ASSERT_EQ(job.status, JobStatus::kSucceeded) << job.error_message;

  std::vector<Json> bodies = BodiesFor("[clean]");
  ASSERT_EQ(bodies.size(), 2u);
  const Json& tool_msg = bodies[1]["messages"].back();
  EXPECT_EQ(tool_msg["role"], "tool");
  EXPECT_EQ(tool_msg["tool_call_id"], "c1");
  EXPECT_EQ(tool_msg["content"].get<std::string>(),
            "Error: RunCommand was denied by policy rule 'no-rm-rf': deleting whole trees is not "
            "allowed; remove files one by one. The call did not run.");

  auto events = rig_.store().ListEvents(job.task_id, "", 1000);
  ASSERT_TRUE(events.ok());
  int fired = 0, snapshots = 0;
  for (const Event& e : *events) {
    if (e.type == "policy.snapshot") ++snapshots;
    if (e.type != "policy.fired") continue;
    ++fired;
    // The allow-list, exactly: no raw arguments anywhere in it.
    std::vector<std::string> keys;
    for (auto it = e.payload.begin(); it != e.payload.end(); ++it) keys.push_back(it.key());
    EXPECT_EQ(keys,
              (std::vector<std::string>{"args_hash", "decision", "movement", "rule", "tool"}));
    EXPECT_EQ(e.payload["rule"], "no-rm-rf");
    EXPECT_EQ(e.payload["decision"], "deny");
    EXPECT_EQ(e.payload["tool"], "RunCommand");
    EXPECT_EQ(e.payload["args_hash"].get<std::string>().size(), 64u);
    EXPECT_EQ(e.payload.dump().find("rm -rf"), std::string::npos);
    EXPECT_EQ(e.payload.dump().find("SECRET-42"), std::string::npos);
  }
  EXPECT_EQ(fired, 1);
  EXPECT_EQ(snapshots, 1);
  // The denied call never ran: the ledger has no started record of it.
  std::ifstream ledger(dir_.path() + "/contexts/completed/" + job.task_id + "/tools.jsonl");
  std::string line, all;
  while (std::getline(ledger, line)) all += line;
  EXPECT_EQ(all.find("\"started\""), std::string::npos) << all;
}

// instruct adds its text as a user message after the tool results;
// approve_once opens a tool the space's policy does not allow, for exactly
// those arguments.
TEST_F(JudgementTest, InstructFollowsTheResultsAndApproveOnceOpensOneCall) {
  WriteFile(dir_.File("proj/notes.txt"), "hello\n");
  WriteFile(dir_.File("policies/proj.yaml"), R"(rules:
  - id: cite-files
    tool: ReadFile
    instruct: "Quote the line you rely on."
  - id: allow-notes-write
    tool: WriteFile
    match: {path: '^notes2[.]txt$'}
    approve_once: true
)");
  WriteScript(
      dir_,
      Json::array({Reply({"[read]"}, {Call("r1", "ReadFile", {{"path", "notes.txt"}})}),
                   Reply({"[read]", "Quote the line"},
                         {Call("w1", "WriteFile", {{"path", "notes2.txt"}, {"content", "x"}})}),
                   Reply({"[read]", "wrote 1 bytes"}, {Complete("success", "done")})}));
  // The space allows reading only: the rule alone opens WriteFile.
  tools::ToolPolicy read_only;
  read_only.allowed_tools = {"ReadFile"};
  StartRig([&](PieceExecutorOptions& o) { o.policies_dir = dir_.File("policies"); }, read_only);
  Job job = RunTask("[read] read the notes", "chat", "proj");
  ASSERT_EQ(job.status, JobStatus::kSucceeded) << job.error_message;
  std::vector<Json> bodies = BodiesFor("[read]");
  ASSERT_EQ(bodies.size(), 3u);
  const Json& m = bodies[1]["messages"];
  ASSERT_GE(m.size(), 2u);
  EXPECT_EQ(m[m.size() - 2]["role"], "tool");
  EXPECT_EQ(m.back()["role"], "user");
  EXPECT_EQ(m.back()["content"], "Policy note (rule cite-files): Quote the line you rely on.");
  // The instruction is appended, never inserted: the next request reuses
  // the whole previous prompt.
  Json reqs = ServerRequests(*fake_);
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_GE(Retention(reqs, 1), 0.99) << reqs[1]["cache"].dump();
  EXPECT_GE(Retention(reqs, 2), 0.99) << reqs[2]["cache"].dump();
  RecordProperty("retention_after_instruct_pct", static_cast<int>(100 * Retention(reqs, 2)));
  // approve_once: the grant was spent on exactly that call, and the file exists.
  const Json& w = bodies[2]["messages"].back();
  EXPECT_EQ(w["tool_call_id"], "w1");
  EXPECT_EQ(w["content"].get<std::string>().rfind("Error", 0), std::string::npos) << w.dump();
  EXPECT_TRUE(std::filesystem::exists(dir_.File("proj/notes2.txt")));
  auto events = rig_.store().ListEvents(job.task_id, "", 1000);
  ASSERT_TRUE(events.ok());
  std::vector<std::string> decisions;
  for (const Event& e : *events) {
    if (e.type == "policy.fired") decisions.push_back(e.payload["decision"]);
  }
  EXPECT_EQ(decisions, (std::vector<std::string>{"instruct", "approve_once"}));
}

// The Done-when's other half: with the Auto Prompter off — no policy file,
// `enabled: false`, or rules that never match — every request body is
// byte-identical.
TEST_F(JudgementTest, WithTheAutoPrompterOffTheRequestBodiesAreByteIdentical) {
  // The same two replies serve the three runs (repeat 0: unlimited): the
  // first request ends with the instruction, the second with the listing.
  Json list = {{"match", {{"last_message_contains", "# Task\n[same]"}}},
               {"tool_calls", {Call("l1", "ListDir", {{"path", "."}})}},
               {"repeat", 0}};
  Json done = Reply({"[same]"}, {Complete("success", "listed")});
  done["repeat"] = 0;
  WriteScript(dir_, Json::array({list, done}));
  std::string policies = dir_.File("policies");
  StartRig([&](PieceExecutorOptions& o) { o.policies_dir = policies; });
  std::vector<std::string> dumps;
  for (const char* policy : {"", "enabled: false\nrules:\n  - {id: d, tool: ListDir, deny: no}\n",
                             "rules:\n  - {id: n, tool: RunCommand, deny: no}\n"}) {
    std::filesystem::remove_all(policies);
    if (*policy) WriteFile(policies + "/default.yaml", policy);
    ClearRequests(*fake_);
    Job job = RunTask("[same] list the workspace");
    ASSERT_EQ(job.status, JobStatus::kSucceeded) << job.error_message;
    std::string all;
    for (const Json& b : BodiesFor("[same]")) all += b.dump() + "\n";
    dumps.push_back(all);
  }
  ASSERT_FALSE(dumps[0].empty());
  EXPECT_EQ(dumps[0], dumps[1]) << "enabled: false changed the requests";
  EXPECT_EQ(dumps[0], dumps[2]) << "a rule that never fires changed the requests";
}

// The Done-when: skills and memory indexes appear in the system text in a
// stable order, and the first requests of two tasks in one space share the
// whole system text; ReadSkill and Memory reach what the indexes list.
TEST_F(JudgementTest, SkillsAndMemoryIndexesAreInTheSystemTextTheSameForEveryTask) {
  auto skill = [](const std::string& name, const std::string& desc, const std::string& body) {
    return "---\nname: " + name + "\ndescription: " + desc + "\n---\n" + body;
  };
  WriteFile(dir_.File("skills/zeta-release/SKILL.md"),
            skill("zeta-release", "Cut a release.", "Tag it."));
  WriteFile(dir_.File("skills/alpha-notes/SKILL.md"),
            skill("alpha-notes", "Global notes.", "Global."));
  // The workspace's own skill replaces the global one of the same name.
  WriteFile(dir_.File("proj/.maestro/skills/alpha-notes/SKILL.md"),
            skill("alpha-notes", "Write release notes the team's way.", "Use the changelog."));
  WriteFile(dir_.File("proj/.maestro/skills/broken/SKILL.md"), "no front matter");
  ASSERT_TRUE(knowledge::AppendMemory(*Env::Default(), knowledge::MemoryDir(dir_.path(), "proj"),
                                      {1, "testing", "run make fixtures first", "t0"})
                  .ok());
  ASSERT_TRUE(knowledge::AppendMemory(*Env::Default(), knowledge::MemoryDir(dir_.path(), "proj"),
                                      {2, "build", "use ninja", "t0"})
                  .ok());
  WriteScript(
      dir_,
      Json::array(
          {Reply({"[one]"}, {Call("s1", "ReadSkill", {{"name", "alpha-notes"}}),
                             Call("m1", "Memory", {{"action", "read"}, {"topic", "testing"}})}),
           Reply({"[one]", "Use the changelog."}, {Call("m2", "Memory",
                                                        {{"action", "append"},
                                                         {"topic", "testing"},
                                                         {"text", "fixtures live in t/"}})}),
           Reply({"[one]", "Noted under 'testing'"}, {Complete("success", "ok")}),
           Reply({"[two]"}, {Complete("success", "ok")})}));
  StartRig([&](PieceExecutorOptions& o) {
    o.skills_dir = dir_.File("skills");
    o.memory = true;
  });
  ASSERT_EQ(RunTask("[one] prepare the release", "chat", "proj").status, JobStatus::kSucceeded);
  ASSERT_EQ(RunTask("[two] prepare the release again", "chat", "proj").status,
            JobStatus::kSucceeded);

  std::vector<Json> one = BodiesFor("[one]"), two = BodiesFor("[two]");
  ASSERT_EQ(one.size(), 3u);
  ASSERT_EQ(two.size(), 1u);
  const std::string system = one[0]["messages"][0]["content"];
  EXPECT_EQ(system, two[0]["messages"][0]["content"].get<std::string>());
  Json reqs = ServerRequests(*fake_);
  ASSERT_EQ(reqs.size(), 4u);
  EXPECT_GE(FirstRequestReuse(reqs[3]), 0.99) << reqs[3]["cache"].dump();
  EXPECT_EQ(one[0]["tools"].dump(), two[0]["tools"].dump());
  const size_t mem = system.find("## Memory index\n- build\n- testing\n");
  const size_t skills = system.find(
      "## Skills index\n- alpha-notes: Write release notes the team's way.\n"
      "- zeta-release: Cut a release.\n");
  EXPECT_NE(mem, std::string::npos) << system;
  EXPECT_NE(skills, std::string::npos) << system;
  EXPECT_LT(mem, skills);
  EXPECT_EQ(system.find("broken"), std::string::npos);
  EXPECT_EQ(system.find("run make fixtures"), std::string::npos)
      << "notes stay out of the system text";
  // The tool results.
  const Json& m = one[1]["messages"];
  EXPECT_NE(m[m.size() - 2]["content"].get<std::string>().find("Use the changelog."),
            std::string::npos);
  EXPECT_EQ(m.back()["content"], "## testing\n- run make fixtures first\n");
  auto notes = knowledge::ReadMemory(*Env::Default(), knowledge::MemoryDir(dir_.path(), "proj"));
  ASSERT_TRUE(notes.ok());
  ASSERT_EQ(notes->size(), 3u);
  EXPECT_EQ(notes->back().text, "fixtures live in t/");
  std::ifstream view(knowledge::MemoryDir(dir_.path(), "proj") + "/MEMORY.md");
  std::string text((std::istreambuf_iterator<char>(view)), std::istreambuf_iterator<char>());
  EXPECT_EQ(
      text,
      "## build\n- use ninja\n\n## testing\n- run make fixtures first\n- fixtures live in t/\n");
}

// The Done-when: a failed task's reflection writes a lesson; the next task
// in that space shows it in its instruction.
TEST_F(JudgementTest, AFailedTasksReflectionWritesALessonTheNextTaskIsGiven) {
  WriteScript(
      dir_,
      Json::array(
          {Reply({"[build]"}, {Complete("error", "the tests failed: fixtures missing")}),
           Reply({"Record with RecordLesson", "[build]"},
                 {Call("rl1", "RecordLesson",
                       {{"lesson", "Run `make fixtures` before the tests."}, {"scope", "space"}})}),
           Reply({"Record with RecordLesson", "recorded (scope space)"},
                 {Complete("success", "one lesson")}),
           Reply({"[next]"}, {Complete("success", "ok")})}));
  StartRig([&](PieceExecutorOptions& o) { o.reflection = "failure"; });
  Job failed = RunTask("[build] run the tests", "chat", "proj");
  ASSERT_EQ(failed.status, JobStatus::kFailed);

  // The Reflection task: created by the ended job, reviewed it, wrote one lesson.
  std::optional<Task> reflection;
  for (int i = 0; i < 300 && !reflection; ++i) {
    auto tasks = rig_.store().ListTasks(std::nullopt, 100);
    ASSERT_TRUE(tasks.ok());
    for (const Task& t : *tasks) {
      if (t.piece == kReflectionPiece && IsTerminal(t.status)) reflection = t;
    }
    if (!reflection) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(reflection) << "no Reflection task ended";
  EXPECT_EQ(reflection->status, JobStatus::kSucceeded);
  EXPECT_EQ(reflection->space, "proj");
  EXPECT_EQ(ReflectedTaskId(*reflection), failed.task_id);
  std::vector<Json> reviewed = BodiesFor("Record with RecordLesson");
  ASSERT_FALSE(reviewed.empty());
  const std::string instruction = reviewed[0]["messages"].back()["content"];
  EXPECT_NE(instruction.find("the tests failed: fixtures missing"), std::string::npos)
      << instruction;
  EXPECT_NE(instruction.find("[build] run the tests"), std::string::npos);
  auto lessons = rig_.store().ListLessons("proj", std::string("chat"), 10);
  ASSERT_TRUE(lessons.ok());
  ASSERT_EQ(lessons->size(), 1u);
  EXPECT_EQ(lessons->front().lesson, "Run `make fixtures` before the tests.");
  EXPECT_EQ(lessons->front().evidence, std::vector<std::string>{failed.task_id});
  EXPECT_EQ(lessons->front().source_task_id, reflection->id);

  // The next task in the space: the lesson after its instruction, in the
  // final user message; the system text is the one the failed task had.
  ASSERT_EQ(RunTask("[next] run the tests again", "chat", "proj").status, JobStatus::kSucceeded);
  std::vector<Json> next = BodiesFor("[next]"), first = BodiesFor("[build]");
  ASSERT_EQ(next.size(), 1u);
  const std::string text = next[0]["messages"].back()["content"];
  EXPECT_NE(text.find("# Task\n[next] run the tests again\n\n## Lessons from earlier tasks\n- Run "
                      "`make fixtures` before the tests."),
            std::string::npos)
      << text;
  EXPECT_EQ(next[0]["messages"][0], first[0]["messages"][0]);
  Json reqs = ServerRequests(*fake_);
  ASSERT_FALSE(reqs.empty());
  EXPECT_GE(FirstRequestReuse(reqs.back()), 0.99)
      << "the lessons sit after the cached prefix: " << reqs.back()["cache"].dump();
  // A Reflection task is not reflected on, and a succeeded task is not (mode failure).
  auto tasks = rig_.store().ListTasks(std::nullopt, 100);
  ASSERT_TRUE(tasks.ok());
  int reflections = 0;
  for (const Task& t : *tasks) reflections += t.piece == kReflectionPiece;
  EXPECT_EQ(reflections, 1);
}

// A mission's title, notes and its other tasks' results go into the dynamic
// context of its tasks — the final user message, not the system text.
TEST_F(JudgementTest, AMissionsNotesAndRecentResultsAreInItsTasksDynamicContext) {
  WriteScript(dir_,
              Json::array({Reply({"[m1]"}, {Complete("success", "the API draft is in docs/v2.md")}),
                           Reply({"[m2]"}, {Complete("success", "ok")})}));
  StartRig(nullptr);
  Mission m;
  m.title = "Ship the v2 API";
  m.notes = "Keep v1 working until March.";
  m.space = "proj";
  auto mission = rig_.store().CreateMission(m);
  ASSERT_TRUE(mission.ok()) << mission.status().ToString();
  auto run = [&](const std::string& instruction) {
    NewTask t;
    t.instruction = instruction;
    t.title = instruction.substr(5);
    t.piece = "chat";
    t.space = "proj";
    t.mission_id = mission->id;
    auto created = rig_.store().CreateTask(t);
    EXPECT_TRUE(created.ok());
    rig_.pool().Notify();
    return rig_.WaitForEnd(created->job.id);
  };
  ASSERT_EQ(run("[m1] draft the API").status, JobStatus::kSucceeded);
  ASSERT_EQ(run("[m2] write the migration guide").status, JobStatus::kSucceeded);
  std::vector<Json> second = BodiesFor("[m2]"), first = BodiesFor("[m1]");
  ASSERT_EQ(second.size(), 1u);
  const std::string text = second[0]["messages"].back()["content"];
  EXPECT_NE(
      text.find("## Mission\nShip the v2 API\nKeep v1 working until March.\n\nRecent tasks of "
                "this mission (newest first):\n- draft the API (succeeded): the API draft is in "
                "docs/v2.md"),
      std::string::npos)
      << text;
  EXPECT_EQ(second[0]["messages"][0], first[0]["messages"][0]) << "the system text stays";
  Json reqs = ServerRequests(*fake_);
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_GE(FirstRequestReuse(reqs[1]), 0.99) << reqs[1]["cache"].dump();
  EXPECT_EQ(second[0]["messages"][0]["content"].get<std::string>().find("Ship the v2"),
            std::string::npos);
  auto tasks = rig_.store().ListMissionTasks(mission->id, 10);
  ASSERT_TRUE(tasks.ok());
  EXPECT_EQ(tasks->size(), 2u);
}

// A task on the routed piece: one LLM call with the pieces as an enum picks
// it, stored with a task.routed event before the job runs.
TEST_F(JudgementTest, TheRouterChoosesThePieceWithOneConstrainedCall) {
  WriteScript(dir_,
              Json::array({{{"match", {{"tool_offered", "choose_piece"}}},
                            {"tool_calls", {Call("p1", "choose_piece", {{"piece", "review"}})}}},
                           Reply({"[route]"}, {Complete("success", "reviewed")})}));
  StartRig(nullptr);
  Job job = RunTask("[route] look over the change for bugs", kRoutedPiece);
  ASSERT_EQ(job.status, JobStatus::kSucceeded) << job.error_message;
  auto task = rig_.store().GetTask(job.task_id);
  ASSERT_TRUE(task.ok());
  EXPECT_EQ(task->piece, "review");
  Json reqs = ServerRequests(*fake_);
  ASSERT_EQ(reqs.size(), 2u);
  const Json& route = reqs[0]["body"];
  EXPECT_EQ(route["tool_choice"]["function"]["name"], "choose_piece");
  Json names = route["tools"][0]["function"]["parameters"]["properties"]["piece"]["enum"];
  EXPECT_EQ(names, (Json{"chat", "coding", "research", "review"}));
  EXPECT_NE(reqs[1]["body"]["messages"][0]["content"].get<std::string>().find("piece review"),
            std::string::npos);
  auto events = rig_.store().ListEvents(job.task_id, "", 100);
  ASSERT_TRUE(events.ok());
  bool routed = false;
  for (const Event& e : *events) {
    if (e.type == "task.routed") {
      routed = true;
      EXPECT_EQ(e.payload["piece"], "review");
      EXPECT_EQ(e.payload["by"], "llm");
    }
  }
  EXPECT_TRUE(routed);
}

}  // namespace
}  // namespace maestro::engine
