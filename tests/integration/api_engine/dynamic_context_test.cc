// Issue 45 item 5 through the real `maestro serve` + `maestro-fakellm`: the
// dynamic context lists the workspace and the console (seed 000 §3 DYNAMIC),
// in the final user message only — the exact `messages` the fake received
// show the listing after a stable prefix (system text and tools the same
// for every task of the piece, a follow-up's replay the same as before),
// nothing of what a planted symlink points at, and a handoff
// continuation's first request carrying its predecessor's last command
// output.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "serve_fixture.h"

namespace maestro::testing {
namespace {

const Json& Messages(const Json& logged) { return logged["body"]["messages"]; }

std::string ContentOf(const Json& message) {
  return message["content"].is_string() ? message["content"].get<std::string>()
                                        : message["content"].dump();
}

// The text of `## title` in `text` up to the next heading ("" = absent).
std::string SectionOf(const std::string& text, const std::string& title) {
  const std::string head = "\n## " + title + "\n";
  size_t at = text.find(head);
  if (at == std::string::npos) return "";
  at += head.size();
  size_t end = text.find("\n\n#", at);
  return text.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

Json Once(Json reply) {
  reply["repeat"] = 1;
  return reply;
}

TEST_F(ServeEngineTest, TheFirstRequestListsTheWorkspaceAfterTheStablePrefix) {
  const std::string space = dir_.File("proj");
  std::filesystem::create_directories(space);
  TempDir outside;
  WriteFile(outside.File("SECRET-OUTSIDE.txt"), "secret");
  extra_config_ = "spaces:\n  proj:\n    path: " + space + "\n    edit_allowed: true\n";
  Json done = ToolCallReply("complete", {{"status", "success"}, {"result", "ok"}});
  Start(Json::array({Once(Matching(done, "DYN-EMPTY")), Once(Matching(done, "DYN-FILES")),
                     Once(Matching(done, "DYN-MORE"))}),
        1);
  auto run = [&](const std::string& instruction) {
    auto [code, c] = Post("/api/local/tasks",
                          {{"instruction", instruction}, {"piece", "coding"}, {"space", "proj"}});
    EXPECT_EQ(code, 201) << c.dump();
    WaitStatus(c, "succeeded");
    return c;
  };
  run("DYN-EMPTY look around");

  // The workspace gets files, noise, a symlink out of the tree and an odd name.
  WriteFile(space + "/README.md", "# proj\n");
  WriteFile(space + "/src/main.cc", "int main() { return 0; }\n");
  WriteFile(space + "/__pycache__/main.cpython-311.pyc", "..");
  WriteFile(space + "/node_modules/left-pad/index.js", "module.exports = 1;\n");
  WriteFile(space + "/odd\nname.txt", "");
  ASSERT_EQ(::symlink(outside.path().c_str(), (space + "/escape").c_str()), 0);
  Json second = run("DYN-FILES look around");

  WaitFakeRequests(2);
  Json reqs = FakeRequests();
  ASSERT_EQ(reqs.size(), 2u) << LogTail();
  const Json& a = Messages(reqs[0]);
  const Json& b = Messages(reqs[1]);
  ASSERT_EQ(a.size(), 2u);
  ASSERT_EQ(b.size(), 2u);
  // The stable prefix: the same system text and tools for both tasks, bytes
  // for bytes, with nothing of the workspace in it.
  EXPECT_EQ(a[0].dump(), b[0].dump());
  EXPECT_EQ(reqs[0]["body"]["tools"].dump(), reqs[1]["body"]["tools"].dump());
  EXPECT_EQ(ContentOf(b[0]).find("README.md"), std::string::npos);
  EXPECT_EQ(ContentOf(b[0]).find("## Files"), std::string::npos);
  // An empty workspace and a task that ran no command: neither section.
  EXPECT_EQ(ContentOf(a[1]).find("## Files"), std::string::npos) << ContentOf(a[1]);
  EXPECT_EQ(ContentOf(a[1]).find("## Console"), std::string::npos) << ContentOf(a[1]);
  // The listing, in the final user message, before the task.
  const std::string user = ContentOf(b[1]);
  EXPECT_EQ(SectionOf(user, "Files"),
            "- README.md (7 bytes)\n"
            "- escape (symlink, not followed)\n"
            "- node_modules/ (not listed)\n"
            "- odd\\nname.txt (0 bytes)\n"
            "- src/\n"
            "- src/main.cc (25 bytes)")
      << user;
  EXPECT_LT(user.find("## Files"), user.find("# Task\nDYN-FILES"));
  EXPECT_EQ(user.find("SECRET-OUTSIDE"), std::string::npos);
  EXPECT_EQ(user.find("__pycache__"), std::string::npos);
  EXPECT_EQ(user.find("left-pad"), std::string::npos);
  EXPECT_EQ(user.find("## Console"), std::string::npos);

  // A follow-up of the second task: its replay is the first request's
  // messages unchanged (the old listing included), and its own final
  // message lists the workspace as it is now.
  WriteFile(space + "/added-later.txt", "new\n");
  auto [code, body] = Post(TaskPath(second) + "/comments", {{"body", "DYN-MORE and again"}});
  ASSERT_EQ(code, 201) << body.dump();
  WaitFakeRequests(3);
  const Json after = FakeRequests();
  const Json& c = Messages(after[2]);
  ASSERT_GE(c.size(), 2u);
  EXPECT_EQ(c[0].dump(), b[0].dump());
  // b[1] is the start of the merged user message (role alternation).
  EXPECT_EQ(ContentOf(c[1]).rfind(user + "\n\n", 0), 0u) << ContentOf(c[1]);
  const std::string grown = ContentOf(c[1]).substr(user.size());
  EXPECT_NE(grown.find("- added-later.txt (4 bytes)"), std::string::npos) << grown;
  EXPECT_LT(grown.find("## Files"), grown.find("DYN-MORE"));
}

// The workspace is the agent's: an AGENTS.md it replaces with a symlink to
// a host file is not followed into the system text, and one replaced with a
// FIFO does not hang the job (both were read with a plain open before).
TEST_F(ServeEngineTest, AnAgentsMdSymlinkOrFifoIsNeverReadIntoTheSystemText) {
  const std::string space = dir_.File("proj");
  TempDir outside;
  WriteFile(outside.File("secret.txt"), "HOST-SECRET-IN-AGENTS\n");
  WriteFile(space + "/AGENTS.md", "Use tabs. AGENTS-REAL\n");
  extra_config_ = "spaces:\n  proj:\n    path: " + space + "\n    edit_allowed: true\n";
  Json done = ToolCallReply("complete", {{"status", "success"}, {"result", "ok"}});
  done["repeat"] = 0;
  Start(Json::array({done}), 1);
  auto run = [&](const std::string& instruction) {
    auto [code, c] = Post("/api/local/tasks",
                          {{"instruction", instruction}, {"piece", "chat"}, {"space", "proj"}});
    EXPECT_EQ(code, 201) << c.dump();
    WaitStatus(c, "succeeded");
  };
  run("AG-1");
  std::filesystem::remove(space + "/AGENTS.md");
  ASSERT_EQ(::symlink(outside.File("secret.txt").c_str(), (space + "/AGENTS.md").c_str()), 0);
  run("AG-2");
  std::filesystem::remove(space + "/AGENTS.md");
  ASSERT_EQ(::mkfifo((space + "/AGENTS.md").c_str(), 0644), 0);
  run("AG-3");
  Json reqs = FakeRequests();
  ASSERT_EQ(reqs.size(), 3u) << LogTail();
  EXPECT_NE(ContentOf(Messages(reqs[0])[0]).find("AGENTS-REAL"), std::string::npos);
  for (size_t k = 1; k < 3; ++k) {
    const std::string all = MessagesText(reqs[k]);
    EXPECT_EQ(all.find("HOST-SECRET-IN-AGENTS"), std::string::npos) << all;
    EXPECT_EQ(ContentOf(Messages(reqs[k])[0]).find("AGENTS.md"), std::string::npos);
  }
  // The listing says what is there instead.
  EXPECT_NE(ContentOf(Messages(reqs[1]).back()).find("- AGENTS.md (symlink, not followed)"),
            std::string::npos);
  EXPECT_NE(ContentOf(Messages(reqs[2]).back()).find("- AGENTS.md (special file)"),
            std::string::npos);
}

// A coding task runs a failing command, fills its small context and hands
// off; the continuation replays nothing, and its first request's console is
// the predecessor's last command: the command, its exit code and the tail
// of its output.
TEST_F(ServeEngineTest, AHandoffContinuationsFirstRequestCarriesTheLastCommandOutput) {
  extra_config_ =
      "llm_profiles:\n  small:\n    base_url: {llm_base_url}\n    model: fake\n"
      "    max_attempts: 1\n    context_length: 12000\n";
  const std::string command =
      "for i in $(seq -w 1 59); do echo \"build step $i\"; done; "
      "echo 'CONSOLE-TAIL: 2 tests failed'; exit 3";
  Json handoff = {{"spec_ref", "the task instruction"},
                  {"status",
                   {{"completed", {"ran the build"}},
                    {"in_progress", Json::array()},
                    {"pending", {"fix the failing tests"}}}},
                  {"decisions", Json::array()},
                  {"blockers", Json::array()},
                  {"files_changed", Json::array()}};
  Json replies = Json::array(
      {Matching(ToolCallReply("RunCommand", {{"command", command}}), "CON-0"),
       Matching(ToolCallReply("transition", {{"next", "implement"}}), "[exit code 3]"),
       Matching(ToolCallReply("WriteHandoff", handoff), "context is nearly full"),
       {{"match", {{"any_message_contains", "## Handoff from the previous session"}}},
        {"tool_calls",
         Json::array({{{"name", "complete"},
                       {"arguments", {{"status", "success"}, {"result", "CON-DONE"}}}}})}}});
  for (int i = 0; i < 12; ++i) {
    std::string text;
    while (text.size() < 3'000) text += "step " + std::to_string(i) + " thinking out loud. ";
    Json r = ToolCallReply("Glob", {{"pattern", "*.n" + std::to_string(i)}});
    r["text"] = text;
    replies.push_back(r);
  }
  for (auto& r : replies) r["repeat"] = 1;
  Start(replies, 1);
  auto [code, c] = Post(
      "/api/local/tasks",
      {{"instruction", "CON-0 make the tests pass"}, {"piece", "coding"}, {"profile", "small"}});
  ASSERT_EQ(code, 201) << c.dump();
  const std::string task = c["task"]["id"];
  Json jobs;
  const auto end = std::chrono::steady_clock::now() + 40s;
  while (std::chrono::steady_clock::now() < end) {
    jobs = Get("/api/local/tasks/" + task)["jobs"];
    bool settled = jobs.size() == 2;
    for (const auto& j : jobs)
      settled = settled && j["status"] != "running" && j["status"] != "queued";
    if (settled) break;
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_EQ(jobs.size(), 2u) << jobs.dump() << LogTail();
  Json reqs = FakeRequests();
  // The task's first request: a new task has no console.
  EXPECT_EQ(ContentOf(Messages(reqs[0]).back()).find("## Console"), std::string::npos);
  Json cont = RequestsWith(reqs, "## Handoff from the previous session");
  ASSERT_FALSE(cont.empty()) << LogTail();
  const Json& first = Messages(cont[0]);
  ASSERT_EQ(first.size(), 2u) << MessagesText(cont[0]);
  EXPECT_EQ(ContentOf(first[0]).find("## Console"), std::string::npos);
  const std::string user = ContentOf(first[1]);
  const std::string console = SectionOf(user, "Console");
  ASSERT_FALSE(console.empty()) << user;
  EXPECT_EQ(console.rfind("```\n$ " + command +
                              "\n[exit code 3]\n[… 20 earlier lines not shown]\n"
                              "build step 21\n",
                          0),
            0u)
      << console;
  EXPECT_NE(console.find("build step 59\nCONSOLE-TAIL: 2 tests failed\n```"), std::string::npos)
      << console;
  EXPECT_EQ(console.find("build step 20\n"), std::string::npos) << console;
  // The dynamic context first, then the facts and the instruction.
  EXPECT_EQ(user.rfind("# Context\nCurrent date and time: ", 0), 0u) << user;
  EXPECT_LT(user.find("## Console"),
            user.find("## Handoff from the previous session (facts only)"));
  EXPECT_LT(user.find("## Handoff from the previous session"), user.find("CON-0 make the tests"));
  EXPECT_TRUE(jobs[0]["result"] == "CON-DONE" || jobs[1]["result"] == "CON-DONE") << jobs.dump();
}

}  // namespace
}  // namespace maestro::testing
