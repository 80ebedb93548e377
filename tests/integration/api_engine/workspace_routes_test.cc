// The workspace routes against the real `maestro serve` + fakellm (issue
// 17): a task writes a file with WriteFile and succeeds; then the listing
// shows it, the content route returns it (JSON and ?raw=1), the diff shows
// it under its job's commit and in total, and tool-calls shows the finished
// WriteFile call — still after a restart on the same data dir. Bad paths
// are 400 naming `path`; another user's private task is 404 on every route.
#include "serve_fixture.h"
#include "workspace/git_repo.h"

namespace maestro::testing {
namespace {

class WorkspaceRoutesTest : public ServeEngineTest {};

Json FindPath(const Json& files, const std::string& path) {
  for (const auto& f : files) {
    if (f.value("path", "") == path) return f;
  }
  return Json();
}

TEST_F(WorkspaceRoutesTest, ATaskFilesDiffAndToolCallsAreReadableAndSurviveARestart) {
  Json done = ToolCallReply("complete", {{"status", "success"}, {"result", "written"}});
  Start(Json::array(
      {ToolCallReply("WriteFile", {{"path", "notes/hello.md"}, {"content", "HELLO-17\n"}}), done}));
  Json c = Create("write the notes");
  ASSERT_EQ(WaitStatus(c, "succeeded")["status"], "succeeded") << LogTail();
  const std::string task = TaskPath(c);
  const std::string job_id = c["job"]["id"];

  // The job-end commit lands just after the job's status.
  Json diff;
  for (int i = 0; i < 300; ++i) {
    diff = Get(task + "/diff");
    if (diff.value("jobs", Json::array()).size() == 1) break;
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_EQ(diff["repository"], true) << diff.dump();
  ASSERT_EQ(diff["jobs"].size(), 1u) << diff.dump() << LogTail();
  EXPECT_EQ(diff["jobs"][0]["job_id"], job_id);
  EXPECT_EQ(diff["jobs"][0]["commit"].get<std::string>().size(), 40u);
  EXPECT_TRUE(Contains(diff["jobs"][0]["message"], "job " + job_id));
  Json in_job = FindPath(diff["jobs"][0]["files"], "notes/hello.md");
  ASSERT_FALSE(in_job.is_null()) << diff.dump();
  EXPECT_EQ(in_job["status"], "added");
  EXPECT_EQ(in_job["additions"], 1);
  EXPECT_TRUE(Contains(in_job["patch"], "+HELLO-17")) << in_job.dump();
  EXPECT_EQ(FindPath(diff["total"]["files"], "notes/hello.md")["status"], "added");
  EXPECT_TRUE(diff["uncommitted"]["files"].empty()) << diff.dump();

  Json files = Get(task + "/files");
  EXPECT_EQ(files["root_kind"], "ephemeral");
  EXPECT_EQ(files["space"], "");
  EXPECT_EQ(files["truncated"], false);
  EXPECT_EQ(FindPath(files["files"], "notes")["type"], "dir") << files.dump();
  Json entry = FindPath(files["files"], "notes/hello.md");
  EXPECT_EQ(entry["type"], "file") << files.dump();
  EXPECT_EQ(entry["size"], 9);
  EXPECT_GT(entry["modified_at"].get<int64_t>(), 0);
  for (const auto& f : files["files"]) {
    EXPECT_FALSE(Contains(f["path"], ".git")) << f.dump();
  }

  Json content = Get(task + "/files/notes/hello.md");
  EXPECT_EQ(content["content"], "HELLO-17\n") << content.dump();
  EXPECT_EQ(content["binary"], false);
  EXPECT_EQ(content["truncated"], false);
  EXPECT_EQ(content["size"], 9);
  EXPECT_EQ(Get(task + "/files/notes%2Fhello.md")["content"], "HELLO-17\n") << "percent-decoded";
  auto raw = Client().Get(task + "/files/notes/hello.md?raw=1");
  ASSERT_TRUE(raw);
  EXPECT_EQ(raw->status, 200);
  EXPECT_EQ(raw->body, "HELLO-17\n");
  EXPECT_EQ(raw->get_header_value("Content-Type"), "application/octet-stream");
  EXPECT_EQ(raw->get_header_value("Content-Disposition"), "attachment; filename=\"hello.md\"");
  for (const std::string bad :
       {"%2e%2e/maestro.db", "notes/%2E%2E/%2E%2E/x", ".git/config", "notes/..%2F..%2Fx"}) {
    auto [status, body] = GetWithStatus(task + "/files/" + bad);
    EXPECT_EQ(status, 400) << bad << " " << body.dump();
    EXPECT_EQ(body["error"]["field"], "path") << bad;
  }
  EXPECT_EQ(GetWithStatus(task + "/files/notes/none.md").first, 404);

  // Untrusted bytes the agent could have left: a name that is not UTF-8,
  // binary content, a symlink to a file outside the workspace.
  const std::string ws = DataDir() + "/workspaces/tasks/" + c["task"]["id"].get<std::string>();
  std::ofstream(ws + "/bad\xff.txt") << "x";
  std::ofstream(ws + "/blob.bin", std::ios::binary) << std::string("\x00\x01zz", 4);
  std::ofstream(dir_.File("outside-secret.txt")) << "TOP SECRET";
  std::filesystem::create_symlink(dir_.File("outside-secret.txt"), ws + "/leak");
  auto [ls_status, listed] = GetWithStatus(task + "/files");
  EXPECT_EQ(ls_status, 200);
  EXPECT_FALSE(FindPath(listed["files"], "bad\xef\xbf\xbd.txt").is_null())
      << "shown with U+FFFD: " << listed.dump();
  EXPECT_EQ(FindPath(listed["files"], "leak")["type"], "symlink");
  Json blob = Get(task + "/files/blob.bin");
  EXPECT_EQ(blob["binary"], true) << blob.dump();
  EXPECT_TRUE(blob["content"].is_null());
  auto [leak_status, leak] = GetWithStatus(task + "/files/leak");
  EXPECT_EQ(leak_status, 400) << leak.dump();
  EXPECT_EQ(GetWithStatus(task + "/files/leak?raw=1").first, 400);
  Json dirty = Get(task + "/diff");
  EXPECT_EQ(FindPath(dirty["uncommitted"]["files"], "blob.bin")["binary"], true) << dirty.dump();
  EXPECT_FALSE(Contains(dirty.dump(), "TOP SECRET")) << "the symlink is not followed";

  auto check_calls = [&](const std::string& when) {
    Json calls = Get(task + "/tool-calls");
    ASSERT_TRUE(calls["tool_calls"].is_array()) << when << calls.dump();
    ASSERT_EQ(calls["tool_calls"].size(), 1u) << when << calls.dump();
    const Json& w = calls["tool_calls"][0];
    EXPECT_EQ(w["tool"], "WriteFile") << when;
    EXPECT_EQ(w["status"], "finished") << when;
    EXPECT_EQ(w["job_id"], job_id) << when;
    EXPECT_EQ(w["args"]["path"], "notes/hello.md") << when;
    EXPECT_EQ(w["read_only"], false) << when;
    EXPECT_FALSE(w["result"].get<std::string>().empty()) << when;
    EXPECT_TRUE(w["finished_at"].is_number()) << when;
    EXPECT_TRUE(calls["next_after"].is_null()) << when;
  };
  check_calls("before the restart");
  EXPECT_TRUE(Get(task + "/tool-calls?after=1")["tool_calls"].empty());
  EXPECT_EQ(GetWithStatus(task + "/tool-calls?limit=0").second["error"]["field"], "limit");
  EXPECT_EQ(GetWithStatus(task + "/tool-calls?limit=501").first, 400);
  EXPECT_EQ(GetWithStatus(task + "/tool-calls?after=-1").second["error"]["field"], "after");

  RestartServe();
  check_calls("after the restart");
  EXPECT_EQ(Get(task + "/files/notes/hello.md")["content"], "HELLO-17\n");

  auto [tc, token] = Post("/api/local/tokens", {{"user", "bob"}});
  ASSERT_EQ(tc, 201) << token.dump();
  const std::string bob = token["token"];
  for (const std::string route :
       {"/files", "/files/notes/hello.md", "/files/notes/hello.md?raw=1", "/diff", "/tool-calls"}) {
    EXPECT_EQ(GetWithStatus(task + route, bob).first, 404) << route;
  }
  EXPECT_EQ(GetWithStatus(task + "/files", "").first, 401);
}

// A park call is one card: `waiting` while the job is parked, then folded
// with the call the resumed job re-issues, `finished` with its answer.
TEST_F(WorkspaceRoutesTest, AParkedRequestToolIsOneCardWaitingThenFinished) {
  Json park = ToolCallReply("RequestTool", {{"tool", "RunCommand"},
                                            {"arguments", {{"command", "echo hi"}}},
                                            {"reason", "needs a shell"}});
  Start(Json::array({ToolCallReply("transition", {{"next", "implement"}}), park, park,
                     ToolCallReply("complete", {{"status", "success"}, {"result", "done"}})}));
  Json c = Create("do the change", "coding");
  ASSERT_EQ(WaitStatus(c, "waiting_human")["status"], "waiting_human") << LogTail();
  const std::string task = TaskPath(c);
  Json calls = Get(task + "/tool-calls")["tool_calls"];
  ASSERT_EQ(calls.size(), 1u) << calls.dump();
  EXPECT_EQ(calls[0]["tool"], "RequestTool");
  EXPECT_EQ(calls[0]["status"], "waiting");
  EXPECT_TRUE(calls[0]["finished_at"].is_null());
  EXPECT_EQ(calls[0]["args"]["reason"], "needs a shell");

  Json req = Get(task + "/tool-requests")["requests"][0];
  auto [code, body] = Post(task + "/tool-requests/" + req["id"].get<std::string>() + "/decide",
                           {{"decision", "approve"}, {"scope", "once"}});
  ASSERT_EQ(code, 200) << body.dump();
  ASSERT_EQ(WaitStatus(c, "succeeded")["status"], "succeeded") << LogTail();
  calls = Get(task + "/tool-calls")["tool_calls"];
  ASSERT_EQ(calls.size(), 1u) << "the park and its re-issue are one card: " << calls.dump();
  EXPECT_EQ(calls[0]["status"], "finished");
  EXPECT_TRUE(Contains(calls[0]["result"], "Approved")) << calls.dump();
  EXPECT_TRUE(calls[0]["finished_at"].is_number());
  EXPECT_GE(calls[0]["finished_at"].get<int64_t>(), calls[0]["started_at"].get<int64_t>());
}

// A persistent space: root_kind "space"; not a git repository → the diff
// says so; once it is one, only the task's commit is under `jobs` and
// `total` starts at that commit's parent (a person's earlier commit is not
// in it).
TEST_F(WorkspaceRoutesTest, ASpaceTaskListsTheSpaceAndDiffsOnlyWhatTheTaskChanged) {
  const std::string space = dir_.File("spaces/docs");
  std::filesystem::create_directories(space);
  std::ofstream(space + "/before.txt") << "a person's file\n";
  extra_config_ = "spaces:\n  docs:\n    path: " + space +
                  "\n    edit_allowed: true\n    tools: [ReadFile, WriteFile, ListDir]\n";
  Json write = ToolCallReply("WriteFile", {{"path", "notes/task.txt"}, {"content", "BY-TASK\n"}});
  Json done = ToolCallReply("complete", {{"status", "success"}, {"result", "ok"}});
  Start(Json::array({write, done, write, done}));

  auto [code, plain] = Post("/api/local/tasks", {{"instruction", "write"}, {"space", "docs"}});
  ASSERT_EQ(code, 201) << plain.dump();
  ASSERT_EQ(WaitStatus(plain, "succeeded")["status"], "succeeded") << LogTail();
  Json files = Get(TaskPath(plain) + "/files");
  EXPECT_EQ(files["root_kind"], "space");
  EXPECT_EQ(files["space"], "docs");
  EXPECT_FALSE(FindPath(files["files"], "notes/task.txt").is_null()) << files.dump();
  EXPECT_FALSE(FindPath(files["files"], "before.txt").is_null());
  Json no_repo = Get(TaskPath(plain) + "/diff");
  EXPECT_EQ(no_repo["repository"], false) << no_repo.dump();
  EXPECT_TRUE(no_repo["total"]["files"].empty());

  // The space becomes a repository with a person's commit of before.txt.
  auto repo = tools::GitRepo::Init(space);
  ASSERT_TRUE(repo.ok()) << repo.status().ToString();
  std::filesystem::remove(space + "/notes/task.txt");
  ASSERT_TRUE(repo->CommitAll("a person's commit").ok());
  auto [code2, c] = Post("/api/local/tasks", {{"instruction", "write again"}, {"space", "docs"}});
  ASSERT_EQ(code2, 201) << c.dump();
  ASSERT_EQ(WaitStatus(c, "succeeded")["status"], "succeeded") << LogTail();
  Json diff;
  for (int i = 0; i < 300; ++i) {
    diff = Get(TaskPath(c) + "/diff");
    if (diff.value("jobs", Json::array()).size() == 1) break;
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_EQ(diff["jobs"].size(), 1u) << diff.dump() << LogTail();
  EXPECT_EQ(diff["jobs"][0]["job_id"], c["job"]["id"]);
  ASSERT_EQ(diff["total"]["files"].size(), 1u) << diff.dump();
  EXPECT_EQ(diff["total"]["files"][0]["path"], "notes/task.txt");
  EXPECT_EQ(diff["total"]["files"][0]["status"], "added");
  EXPECT_TRUE(Get(TaskPath(plain) + "/diff")["jobs"].empty())
      << "the first task made no commit (the space was no repository then)";
}

TEST_F(WorkspaceRoutesTest, ATaskWithoutAWorkspaceYetListsNothing) {
  // workers: 0 — the job stays queued, so no workspace is made.
  Start(Json::array(), /*workers=*/0);
  Json c = Create("never runs");
  const std::string task = TaskPath(c);
  auto [fs_status, files] = GetWithStatus(task + "/files");
  EXPECT_EQ(fs_status, 200);
  EXPECT_TRUE(files["files"].empty()) << files.dump();
  auto [d_status, diff] = GetWithStatus(task + "/diff");
  EXPECT_EQ(d_status, 200);
  EXPECT_EQ(diff["repository"], false);
  EXPECT_TRUE(diff["jobs"].empty());
  auto [t_status, calls] = GetWithStatus(task + "/tool-calls");
  EXPECT_EQ(t_status, 200);
  EXPECT_TRUE(calls["tool_calls"].empty());
  EXPECT_EQ(GetWithStatus(task + "/files/a.txt").first, 404);
  EXPECT_EQ(GetWithStatus("/api/local/tasks/00000000-0000-4000-8000-000000000000/files").first,
            404);
}

}  // namespace
}  // namespace maestro::testing
