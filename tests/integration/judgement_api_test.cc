// The judgement routes of a real `maestro serve` (no workers: tasks stay
// queued; issue 21): lessons and missions with every field checked (400
// naming it), a task's mission_id, and which piece a task without one gets —
// a space's own piece, a grounded space refusing another, the configured
// default, the router's `auto`.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/json.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace maestro {
namespace {

using namespace std::chrono_literals;
using testing::Process;

class JudgementApiTest : public ::testing::Test {
 protected:
  void Start(std::map<std::string, std::string> extra = {}) {
    std::filesystem::create_directories(dir_.File("docs"));
    std::filesystem::create_directories(dir_.File("proj"));
    std::ofstream(dir_.File("maestro.yaml"))
        << "spaces:\n"
        << "  docs: {path: " << dir_.File("docs") << ", piece: research, grounded: true}\n"
        << "  proj: {path: " << dir_.File("proj") << ", piece: review}\n"
        << "  plain: {path: " << dir_.File("proj") << "}\n";
    port_ = testing::FreePort();
    std::map<std::string, std::string> env{{"MAESTRO_DATA_DIR", dir_.File("data")},
                                           {"MAESTRO_LISTEN", "127.0.0.1:" + std::to_string(port_)},
                                           {"MAESTRO_WORKERS", "0"},
                                           {"MAESTRO_ADMIN_TOKEN", "tok"}};
    env.insert(extra.begin(), extra.end());
    serve_ = std::make_unique<Process>(
        std::vector<std::string>{MAESTRO_BIN, "--config", dir_.File("maestro.yaml"), "serve"}, env,
        dir_.File("serve.out"), dir_.File("serve.err"));
    httplib::Client c("127.0.0.1", port_);
    for (int i = 0; i < 500; ++i) {
      if (auto r = c.Get("/api/health"); r && r->status == 200) return;
      std::this_thread::sleep_for(10ms);
    }
    FAIL() << "serve did not start: " << serve_->Stderr();
  }

  std::pair<int, Json> Call(const std::string& method, const std::string& path,
                            const Json& body = Json()) {
    httplib::Client c("127.0.0.1", port_);
    c.set_bearer_token_auth("tok");
    const std::string text = body.is_null() ? "" : body.dump();
    httplib::Result r = method == "POST"     ? c.Post(path, text, "application/json")
                        : method == "PATCH"  ? c.Patch(path, text, "application/json")
                        : method == "DELETE" ? c.Delete(path)
                                             : c.Get(path);
    if (!r) return {0, Json()};
    return {r->status, Json::parse(r->body, nullptr, false)};
  }

  std::string Field(const Json& error) { return error["error"].value("field", ""); }

  testing::TempDir dir_;
  int port_ = 0;
  std::unique_ptr<Process> serve_;
};

TEST_F(JudgementApiTest, LessonsAreAddedListedEditedAndDeletedWithFieldErrors) {
  Start();
  ASSERT_FALSE(HasFatalFailure());
  struct Case {
    Json body;
    const char* field;
  } const bad[] = {
      {{{"space", "proj"}, {"scope", "space"}}, "lesson"},
      {{{"space", "proj"}, {"lesson", std::string(2001, 'x')}}, "lesson"},
      {{{"space", "proj"}, {"lesson", "x"}, {"scope", "team"}}, "scope"},
      {{{"space", "proj"}, {"lesson", "x"}, {"scope", "piece"}}, "piece"},
      {{{"space", "proj"}, {"lesson", "x"}, {"scope", "piece"}, {"piece", "nope"}}, "piece"},
      {{{"space", "nope"}, {"lesson", "x"}}, "space"},
      {{{"space", "proj"}, {"lesson", "x"}, {"evidence", "t1"}}, "evidence"},
      {{{"space", "proj"}, {"lesson", "x"}, {"colour", "red"}}, "colour"},
  };
  for (const Case& c : bad) {
    auto [code, body] = Call("POST", "/api/local/lessons", c.body);
    EXPECT_EQ(code, 400) << c.body.dump() << " " << body.dump();
    EXPECT_EQ(Field(body), c.field) << c.body.dump() << " " << body.dump();
  }
  auto [c1, a] =
      Call("POST", "/api/local/lessons",
           {{"space", "proj"}, {"lesson", "Run make fixtures first."}, {"evidence", {"t1"}}});
  ASSERT_EQ(c1, 201) << a.dump();
  EXPECT_EQ(a["lesson"]["scope"], "space");
  EXPECT_EQ(a["lesson"]["source_task_id"], "");
  auto [c2, b] =
      Call("POST", "/api/local/lessons",
           {{"space", "proj"}, {"scope", "piece"}, {"piece", "coding"}, {"lesson", "Plan first."}});
  ASSERT_EQ(c2, 201) << b.dump();
  const std::string id = a["lesson"]["id"];

  auto [c3, chat] = Call("GET", "/api/local/lessons?space=proj&piece=chat");
  ASSERT_EQ(c3, 200);
  ASSERT_EQ(chat["lessons"].size(), 1u);
  EXPECT_EQ(chat["lessons"][0]["lesson"], "Run make fixtures first.");
  auto [c4, all] = Call("GET", "/api/local/lessons");
  ASSERT_EQ(c4, 200);
  EXPECT_EQ(all["lessons"].size(), 2u);
  EXPECT_EQ(all["lessons"][0]["lesson"], "Plan first.") << "newest first";

  auto [c5, edited] =
      Call("PATCH", "/api/local/lessons/" + id, {{"lesson", "Run `make fixtures` first."}});
  ASSERT_EQ(c5, 200) << edited.dump();
  EXPECT_EQ(edited["lesson"]["lesson"], "Run `make fixtures` first.");
  EXPECT_EQ(edited["lesson"]["evidence"], Json::array({"t1"}));
  auto [c6, moved] = Call("PATCH", "/api/local/lessons/" + id, {{"space", "docs"}});
  EXPECT_EQ(c6, 400);
  EXPECT_EQ(Field(moved), "space");
  EXPECT_EQ(Call("DELETE", "/api/local/lessons/" + id).first, 200);
  EXPECT_EQ(Call("GET", "/api/local/lessons/" + id).first, 404);
  EXPECT_EQ(Call("DELETE", "/api/local/lessons/" + id).first, 404);
}

TEST_F(JudgementApiTest, MissionsHoldTasksAndRefuseBadFields) {
  Start();
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(Field(Call("POST", "/api/local/missions", {{"notes", "n"}}).second), "title");
  EXPECT_EQ(Field(Call("POST", "/api/local/missions", {{"title", "t"}, {"space", "nope"}}).second),
            "space");
  EXPECT_EQ(
      Field(Call("POST", "/api/local/missions", {{"title", "t"}, {"visibility", "all"}}).second),
      "visibility");
  EXPECT_EQ(Field(Call("POST", "/api/local/missions", {{"title", std::string(201, 't')}}).second),
            "title");
  auto [c1, m] =
      Call("POST", "/api/local/missions",
           {{"title", "Ship v2"}, {"notes", "Keep v1 until March."}, {"space", "plain"}});
  ASSERT_EQ(c1, 201) << m.dump();
  const std::string id = m["mission"]["id"];
  EXPECT_EQ(m["mission"]["owner"], "admin");

  // A task in the mission takes its space; another space or an unknown mission is refused.
  auto [c2, t] =
      Call("POST", "/api/local/tasks", {{"instruction", "draft it"}, {"mission_id", id}});
  ASSERT_EQ(c2, 201) << t.dump();
  EXPECT_EQ(t["task"]["mission_id"], id);
  EXPECT_EQ(t["task"]["space"], "plain");
  auto [c3, wrong] = Call("POST", "/api/local/tasks",
                          {{"instruction", "x"}, {"mission_id", id}, {"space", "proj"}});
  EXPECT_EQ(c3, 400);
  EXPECT_EQ(Field(wrong), "space");
  auto [c4, unknown] =
      Call("POST", "/api/local/tasks",
           {{"instruction", "x"}, {"mission_id", "00000000-0000-0000-0000-000000000000"}});
  EXPECT_EQ(c4, 400);
  EXPECT_EQ(Field(unknown), "mission_id");

  auto [c5, shown] = Call("GET", "/api/local/missions/" + id);
  ASSERT_EQ(c5, 200);
  ASSERT_EQ(shown["tasks"].size(), 1u);
  EXPECT_EQ(shown["tasks"][0]["id"], t["task"]["id"]);
  auto [c6, patched] =
      Call("PATCH", "/api/local/missions/" + id, {{"notes", "v1 stays until May."}});
  ASSERT_EQ(c6, 200);
  EXPECT_EQ(patched["mission"]["notes"], "v1 stays until May.");
  EXPECT_EQ(Field(Call("PATCH", "/api/local/missions/" + id, {{"space", "proj"}}).second), "space");
  auto [c7, list] = Call("GET", "/api/local/missions");
  ASSERT_EQ(c7, 200);
  EXPECT_EQ(list["missions"].size(), 1u);
}

TEST_F(JudgementApiTest, APieceIsChosenBySpaceGroundingAndTheDefault) {
  Start({{"MAESTRO_PIECES_DEFAULT", "coding"}});
  ASSERT_FALSE(HasFatalFailure());
  auto piece_of = [&](const Json& body) {
    auto [code, t] = Call("POST", "/api/local/tasks", body);
    EXPECT_EQ(code, 201) << t.dump();
    return t["task"].value("piece", "");
  };
  EXPECT_EQ(piece_of({{"instruction", "x"}}), "coding") << "pieces.default";
  EXPECT_EQ(piece_of({{"instruction", "x"}, {"space", "proj"}}), "review") << "the space's piece";
  EXPECT_EQ(piece_of({{"instruction", "x"}, {"space", "proj"}, {"piece", "chat"}}), "chat")
      << "a space's piece is only a default";
  EXPECT_EQ(piece_of({{"instruction", "x"}, {"space", "docs"}}), "research");
  EXPECT_EQ(piece_of({{"instruction", "x"}, {"space", "docs"}, {"piece", "research"}}), "research");
  auto [code, refused] = Call("POST", "/api/local/tasks",
                              {{"instruction", "x"}, {"space", "docs"}, {"piece", "chat"}});
  EXPECT_EQ(code, 400);
  EXPECT_EQ(Field(refused), "piece");
  EXPECT_NE(refused["error"]["message"].get<std::string>().find("grounded to piece 'research'"),
            std::string::npos)
      << refused.dump();
  // A Continue into another piece is refused the same way.
  auto [c2, docs] = Call("POST", "/api/local/tasks", {{"instruction", "x"}, {"space", "docs"}});
  ASSERT_EQ(c2, 201);
  const std::string path =
      "/api/local/tasks/" + docs["task"]["id"].get<std::string>() + "/continue";
  auto [c3, cont] = Call("POST", path, {{"piece", "chat"}, {"note", "go on"}});
  EXPECT_EQ(c3, 400) << cont.dump();
  EXPECT_EQ(Field(cont), "piece");
}

TEST_F(JudgementApiTest, WithTheRouterATaskWithoutAPieceWaitsForItsChoice) {
  Start({{"MAESTRO_PIECES_ROUTER", "llm"}});
  ASSERT_FALSE(HasFatalFailure());
  auto [c1, t] = Call("POST", "/api/local/tasks", {{"instruction", "look over my change"}});
  ASSERT_EQ(c1, 201) << t.dump();
  EXPECT_EQ(t["task"]["piece"], "auto");
  auto [c2, named] = Call("POST", "/api/local/tasks", {{"instruction", "x"}, {"piece", "review"}});
  ASSERT_EQ(c2, 201);
  EXPECT_EQ(named["task"]["piece"], "review");
  auto [c3, grounded] = Call("POST", "/api/local/tasks", {{"instruction", "x"}, {"space", "docs"}});
  ASSERT_EQ(c3, 201);
  EXPECT_EQ(grounded["task"]["piece"], "research") << "a grounded space is not routed";
}

}  // namespace
}  // namespace maestro
