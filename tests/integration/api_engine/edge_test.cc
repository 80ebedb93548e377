// Issue 12 at the real edge (`maestro serve` + `maestro-fakellm`): unknown
// piece/space/profile/model refused with a 400 naming the field and no row
// written; GET /api/spaces and GET /api/profiles; a task in a configured space writes into the
// space's directory; an approved SpinOffTask to a space starts its child
// there, owned by the parent's owner (another user gets 404); a profile
// routes to its model; a job for a model no worker serves fails with a reason.
#include <fstream>
#include <sstream>

#include "serve_fixture.h"

namespace maestro::testing {
namespace {

namespace fs = std::filesystem;

class EdgeTest : public ServeEngineTest {
 protected:
  // A `docs` space whose directory serve creates, and a `fast` profile on the
  // same fake under another model name.
  void StartWithSpaces(const Json& replies) {
    space_dir_ = dir_.File("spaces/docs");
    extra_config_ = "spaces:\n  docs:\n    path: " + space_dir_ +
                    "\n    description: Team docs\n    edit_allowed: true\n"
                    "    tools: [ReadFile, WriteFile, ListDir]\n"
                    "llm_profiles:\n  fast:\n    base_url: {llm_base_url}\n    model: fast-model\n"
                    "    max_attempts: 1\n    context_length: 1000000\n";
    Start(replies);
  }

  int TaskCount() const { return static_cast<int>(Get("/api/local/tasks")["tasks"].size()); }

  // POSTs `body` and expects a 400 naming `field`; returns the message.
  std::string Refused(const std::string& path, const Json& body, const std::string& field) {
    auto [code, reply] = Post(path, body);
    EXPECT_EQ(code, 400) << body.dump() << " -> " << reply.dump();
    EXPECT_EQ(reply["error"].value("field", ""), field) << reply.dump();
    return reply["error"].value("message", "");
  }

  std::string space_dir_;
};

TEST_F(EdgeTest, CreateRefusesUnknownPieceSpaceProfileAndModelWritingNothing) {
  StartWithSpaces(Json::array());
  const std::string tasks = "/api/local/tasks";
  EXPECT_TRUE(
      Contains(Refused(tasks, {{"instruction", "x"}, {"piece", "nosuch"}}, "piece"), "chat"));
  EXPECT_TRUE(
      Contains(Refused(tasks, {{"instruction", "x"}, {"space", "nosuch"}}, "space"), "docs"));
  std::string profile = Refused(tasks, {{"instruction", "x"}, {"profile", "turbo"}}, "profile");
  EXPECT_TRUE(Contains(profile, "default, fast")) << profile;
  Refused(tasks, {{"instruction", "x"}, {"model", "gpt-9"}}, "model");
  Refused(tasks, {{"instruction", "x"}, {"profile", "fast"}, {"model", "fake"}}, "model");
  EXPECT_EQ(TaskCount(), 0) << "a refused request writes no task";
  auto store = SqliteStore::Open(DataDir() + "/maestro.db", StoreOptions{});
  ASSERT_TRUE(store.ok());
  EXPECT_TRUE((*store)->ListTasks(std::nullopt, 10)->empty()) << "and no row in the database";
}

TEST_F(EdgeTest, ContinueRefusesAnUnknownPieceWithoutANewJob) {
  StartWithSpaces(Json::array({SucceedReply("first")}));
  Json c = Create("answer once");
  WaitStatus(c, "succeeded");
  Refused(TaskPath(c) + "/continue", {{"piece", "nosuch"}}, "piece");
  EXPECT_EQ(Get(TaskPath(c))["jobs"].size(), 1u) << "no job was written";
}

TEST_F(EdgeTest, SpacesAreListedBehindTheBearerToken) {
  StartWithSpaces(Json::array());
  EXPECT_EQ(GetWithStatus("/api/spaces", "").first, 401);
  auto [code, body] = GetWithStatus("/api/spaces");
  ASSERT_EQ(code, 200) << body.dump();
  EXPECT_TRUE(fs::is_directory(space_dir_)) << "serve created the missing space directory";
  Json want = {{"spaces", Json::array({{{"name", "docs"},
                                        {"description", "Team docs"},
                                        {"path", fs::canonical(space_dir_).string()},
                                        {"network_allowed", false},
                                        {"edit_allowed", true},
                                        {"shell_allowed", false},
                                        {"tools", {"ListDir", "ReadFile", "WriteFile"}},
                                        {"team", ""}}})}};  // no team: every user's
  EXPECT_EQ(body, want) << body.dump();
}

// GET /api/profiles (the web UI's profile select, issue 45 item 12): the
// configured names and models behind the bearer token, the same for a second
// user, and never a profile's URL or key.
TEST_F(EdgeTest, ProfilesAreListedByNameAndModelWithoutUrlsOrKeys) {
  extra_llm_config_ = "  api_key: DEFAULT-KEY-never-shown\n";
  StartWithSpaces(Json::array());
  EXPECT_EQ(GetWithStatus("/api/profiles", "").first, 401);
  EXPECT_EQ(GetWithStatus("/api/profiles", "not-a-token").first, 401);
  auto [code, body] = GetWithStatus("/api/profiles");
  ASSERT_EQ(code, 200) << body.dump();
  Json want = {{"profiles", Json::array({{{"name", "default"}, {"model", "fake"}},
                                         {{"name", "fast"}, {"model", "fast-model"}}})}};
  EXPECT_EQ(body, want) << body.dump();
  const std::string text = body.dump();
  EXPECT_FALSE(Contains(text, "KEY-never-shown")) << text;
  EXPECT_FALSE(Contains(text, "127.0.0.1")) << "no base_url: " << text;

  auto [tc, token] = Post("/api/local/tokens", {{"user", "bob"}});
  ASSERT_EQ(tc, 201) << token.dump();
  auto [bob_code, bob_body] = GetWithStatus("/api/profiles", token["token"]);
  EXPECT_EQ(bob_code, 200);
  EXPECT_EQ(bob_body, want) << "the config's profiles, the same for every user";

  // Read-only: a write to it is no route.
  auto [post_code, post_body] = Post("/api/profiles", {{"name", "evil"}, {"base_url", "x"}});
  EXPECT_EQ(post_code, 404) << post_body.dump();
  EXPECT_EQ(GetWithStatus("/api/profiles").second, want) << "nothing was added";
}

TEST_F(EdgeTest, ATaskInAConfiguredSpaceWritesIntoItsDirectory) {
  StartWithSpaces(Json::array(
      {ToolCallReply("WriteFile", {{"path", "notes/hello.txt"}, {"content", "IN-THE-SPACE"}}),
       SucceedReply("written")}));
  auto [code, c] = Post("/api/local/tasks", {{"instruction", "write a note"}, {"space", "docs"}});
  ASSERT_EQ(code, 201) << c.dump();
  EXPECT_EQ(c["task"]["space"], "docs");
  WaitStatus(c, "succeeded");
  EXPECT_EQ(ReadWholeFile(space_dir_ + "/notes/hello.txt"), "IN-THE-SPACE");
  EXPECT_FALSE(fs::exists(DataDir() + "/workspaces/tasks/" + c["task"]["id"].get<std::string>() +
                          "/notes/hello.txt"))
      << "not in the task's ephemeral workspace";
}

TEST_F(EdgeTest, AProfileRoutesToItsModel) {
  StartWithSpaces(Json::array({SucceedReply("fast answer"), SucceedReply("default answer")}));
  auto [code, c] = Post("/api/local/tasks", {{"instruction", "quick"}, {"profile", "fast"}});
  ASSERT_EQ(code, 201) << c.dump();
  EXPECT_EQ(c["job"]["profile"], "fast");
  WaitStatus(c, "succeeded");
  // A bare `model` is mapped onto the profile that serves it.
  auto [code2, d] = Post("/api/local/tasks", {{"instruction", "plain"}, {"model", "fake"}});
  ASSERT_EQ(code2, 201) << d.dump();
  EXPECT_EQ(d["job"]["profile"], "default");
  WaitStatus(d, "succeeded");
  Json reqs = FakeRequests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0]["body"]["model"], "fast-model");
  EXPECT_EQ(reqs[1]["body"]["model"], "fake");
}

TEST_F(EdgeTest, AJobForAModelNoWorkerServesFailsWithTheReason) {
  StartWithSpaces(Json::array());
  // Written past the API (an old row, another tool): the worker still must
  // not leave it queued where no worker looks.
  auto store = SqliteStore::Open(DataDir() + "/maestro.db", StoreOptions{});
  ASSERT_TRUE(store.ok());
  NewTask t;
  t.instruction = "stranded?";
  t.model = "ghost-model";
  auto created = (*store)->CreateTask(t);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  Json job = WaitJob(created->task.id, created->job.id,
                     [](const Json& j) { return j["status"] == "failed"; });
  EXPECT_TRUE(Contains(job.value("error_message", ""), "ghost-model")) << job.dump();
  EXPECT_TRUE(FakeRequests().empty()) << "no LLM call for a model it does not serve";
}

// The parent (chat) asks to start a child in `docs`; after approval the
// child (piece `spacechild`, told apart by its guidance) writes a file into
// the space. The child belongs to the parent's owner: another user gets 404.
TEST_F(EdgeTest, ApprovedSpinOffToASpaceStartsAChildThereOwnedLikeTheParent) {
  fs::create_directories(DataDir() + "/pieces");
  std::ofstream(DataDir() + "/pieces/spacechild.yaml")
      << "name: spacechild\ndescription: writes in a space\nmovements:\n"
         "  - name: write\n    description: Write the file.\n    edit: true\n"
         "    guidance: |\n      SPACE-CHILD-GUIDANCE write the file, then complete.\n"
         "    rules: []\n";
  Json spin_args = {{"title", "space child"},
                    {"instruction", "write it"},
                    {"piece", "spacechild"},
                    {"space", "docs"}};
  Json child_write =
      ToolCallReply("WriteFile", {{"path", "from-child.txt"}, {"content", "CHILD-WROTE"}});
  child_write["match"] = {{"system_contains", "SPACE-CHILD-GUIDANCE"}};
  Json child_done = SucceedReply("child done");
  child_done["match"] = {{"system_contains", "SPACE-CHILD-GUIDANCE"}};
  StartWithSpaces(
      Json::array({child_write, child_done, ToolCallReply("SpinOffTask", spin_args),
                   ToolCallReply("SpinOffTask", spin_args),
                   ToolCallReply("WaitSubTask", Json::object()), SucceedReply("parent done")}));
  Json c = Create("start a child in docs");
  WaitStatus(c, "waiting_human");
  Json reqs = Get(TaskPath(c) + "/spawn-requests")["requests"];
  ASSERT_EQ(reqs.size(), 1u) << reqs.dump();
  auto [code, body] =
      Post(TaskPath(c) + "/spawn-requests/" + reqs[0]["id"].get<std::string>() + "/decide",
           {{"decision", "approve"}});
  ASSERT_EQ(code, 200) << body.dump();
  WaitStatus(c, "succeeded", 30s);

  Json child;
  const Json all = Get("/api/local/tasks")["tasks"];
  for (const auto& t : all) {
    if (t["title"] == "space child") child = t;
  }
  ASSERT_FALSE(child.is_null()) << "the child task exists";
  EXPECT_EQ(child["space"], "docs");
  EXPECT_EQ(child["owner"], c["task"]["owner"]);
  EXPECT_EQ(child["visibility"], "private");
  EXPECT_EQ(ReadWholeFile(space_dir_ + "/from-child.txt"), "CHILD-WROTE");

  auto [tc, token] = Post("/api/local/tokens", {{"user", "bob"}});
  ASSERT_EQ(tc, 201) << token.dump();
  const std::string bob = token["token"];
  EXPECT_EQ(GetWithStatus("/api/local/tasks/" + child["id"].get<std::string>(), bob).first, 404);
  EXPECT_TRUE(GetWithStatus("/api/local/tasks", bob).second["tasks"].empty())
      << "bob sees neither the parent nor the child";
  httplib::Client as_bob("127.0.0.1", port_);
  as_bob.set_bearer_token_auth(bob);
  auto cancel = as_bob.Post("/api/local/tasks/" + child["id"].get<std::string>() + "/cancel", "{}",
                            "application/json");
  ASSERT_TRUE(cancel);
  EXPECT_EQ(cancel->status, 404);
}

}  // namespace
}  // namespace maestro::testing
