// Every route × every role (issue 49 item 6), on a real `maestro serve` (no
// workers: tasks stay queued) with teams in its config. The route list
// comes from the server itself (GET /api/routes), so a route added later is
// called by every role without being listed here; what it targets (a task or
// job of the platform team by its pattern, or nothing in particular) and its
// need give the expectation from the role's capabilities (api/access.h):
//   - a credential without the capability → 403, and never the task's data;
//   - a user of another team on a team task → 404 (exactly like a missing
//     one), never the task's data;
//   - otherwise the route runs (any answer but 401/403).
// Also: a read-scoped token of an operator is refused the run and decide
// routes; a forged or malformed token or session cookie is 401; a team
// space's lessons, CAPTCHA pool and live view follow the team.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <thread>

#include "core/json.h"
#include "support/serve_process.h"
#include "support/temp_dir.h"

namespace maestro {
namespace {

using namespace std::chrono_literals;

constexpr uint32_t kRead = 1, kRun = 2, kDecide = 4, kAdmin = 8;

// What each role grants (api/access.h CapsOf).
uint32_t Caps(const std::string& role) {
  if (role == "viewer") return kRead;
  if (role == "approver") return kRead | kDecide;
  if (role == "operator") return kRead | kRun | kDecide;
  if (role == "admin") return kRead | kRun | kDecide | kAdmin;
  return 0;
}

uint32_t NeedCap(const std::string& need) {
  if (need == "read") return kRead;
  if (need == "run") return kRun;
  if (need == "decide") return kDecide;
  if (need == "admin") return kAdmin;
  return 0;
}

// A user of the test: its role in team platform ("" = not a member) and in
// team other, its role outside team spaces (auth.default_role: viewer for
// all), its token.
struct User {
  std::string name;
  std::string platform_role;
  std::string other_role;
  std::string token;
  uint32_t scopes = kRead | kRun | kDecide | kAdmin;
};

class RolesRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(dir_.File("plat"));
    std::filesystem::create_directories(dir_.File("oth"));
    std::ofstream(dir_.File("maestro.yaml"))
        << "auth:\n"
        << "  default_role: viewer\n"
        << "teams:\n"
        << "  platform:\n"
        << "    members: {op: operator, appr: approver, view: viewer, tadm: admin, mixed: viewer}\n"
        << "  other:\n"
        << "    members: {stranger: operator, mixed: operator}\n"
        << "spaces:\n"
        << "  plat: {path: " << dir_.File("plat") << ", team: platform}\n"
        << "  oth: {path: " << dir_.File("oth") << ", team: other}\n";
    ASSERT_EQ(serve_.Start(dir_.File("maestro.yaml")), "");
    struct Member {
      const char *name, *platform, *other;
    };
    for (const Member m :
         {Member{"op", "operator", ""}, Member{"appr", "approver", ""},
          Member{"view", "viewer", ""}, Member{"tadm", "admin", ""},
          Member{"stranger", "", "operator"}, Member{"mixed", "viewer", "operator"}}) {
      auto a = Call("POST", "/api/local/tokens", Json{{"user", m.name}}, "adm");
      ASSERT_EQ(a.code, 201) << a.text << serve_.Stderr();
      users_.push_back({m.name, m.platform, m.other, a.body["token"]});
    }
  }

  using Answer = testing::ServeProcess::Answer;
  Answer Call(const std::string& method, const std::string& path, const Json& body,
              const std::string& token) {
    return serve_.Call(method, path, body, token);
  }
  const User& U(const std::string& name) {
    for (const auto& u : users_) {
      if (u.name == name) return u;
    }
    throw std::runtime_error("no user " + name);
  }

  testing::TempDir dir_;
  testing::ServeProcess serve_{dir_};
  std::vector<User> users_;
};

// The placeholders of a pattern filled with the fixture's ids.
std::string Fill(std::string pattern, const std::map<std::string, std::string>& ids) {
  auto put = [&](const std::string& ph, const std::string& v) {
    for (size_t at; (at = pattern.find(ph)) != std::string::npos;)
      pattern.replace(at, ph.size(), v);
  };
  // {uuid}: the task under /tasks/, the schedule under /schedules/, the
  // mission under /missions/.
  if (pattern.find("/schedules/{uuid}") != std::string::npos) put("{uuid}", ids.at("schedule"));
  if (pattern.find("/missions/{uuid}") != std::string::npos) put("{uuid}", ids.at("mission"));
  put("{uuid}", ids.at("task"));
  put("{id}", pattern.find("/lessons/") != std::string::npos ? ids.at("lesson") : ids.at("job"));
  put("{ulid}", "01JDW3K6V4Q8X2M7N5P0R9S1TB");
  put("{rest}", "README.md");
  return pattern;
}

// What a route acts on: a task of team platform (so team roles and the 404
// for strangers apply), or nothing in particular (the roles anywhere).
bool TargetsTeamTask(const std::string& pattern) {
  return pattern.find("/tasks/{uuid}") != std::string::npos ||
         pattern.find("/jobs/{id}") != std::string::npos;
}

TEST_F(RolesRoutesTest, EveryRouteByEveryRole) {
  // The platform team's task (made by its operator), a job id of it, and a
  // schedule in its space.
  const std::string secret = "platform-secret-instruction-7f3a";
  auto created = Call("POST", "/api/local/tasks", Json{{"instruction", secret}, {"space", "plat"}},
                      U("op").token);
  ASSERT_EQ(created.code, 201) << created.text;
  EXPECT_EQ(created.body["task"]["visibility"], "shared");  // a team space's default
  std::map<std::string, std::string> ids = {{"task", created.body["task"]["id"]},
                                            {"job", created.body["job"]["id"]},
                                            {"schedule", "00000000-0000-4000-8000-000000000001"},
                                            {"mission", "00000000-0000-4000-8000-000000000002"},
                                            {"lesson", "00000000-0000-4000-8000-000000000003"}};

  auto routes = Call("GET", "/api/routes", Json(), "adm");
  ASSERT_EQ(routes.code, 200) << routes.text;
  ASSERT_GT(routes.body["routes"].size(), 50u);
  int checked = 0, denied = 0, hidden = 0;
  for (const auto& r : routes.body["routes"]) {
    const std::string method = r["method"], pattern = r["pattern"], need = r["need"];
    if (need == "public") continue;
    // Streams (SSE) would hold the request open: only their refusals are
    // called (the gate is the same Dispatch).
    const bool stream = pattern.find("/stream") != std::string::npos ||
                        pattern.find("/events") != std::string::npos ||
                        (pattern == "/mcp" && method == "GET");
    const bool team_task = TargetsTeamTask(pattern);
    const std::string path = Fill(pattern, ids);
    for (const User& u : users_) {
      // The user's capabilities where the route acts.
      const uint32_t anywhere = Caps("viewer") | Caps(u.platform_role) | Caps(u.other_role);
      const uint32_t on_target = team_task ? Caps(u.platform_role) : anywhere;
      const bool member = !u.platform_role.empty();
      const bool route_ok = (anywhere & NeedCap(need)) != 0;
      SCOPED_TRACE(method + " " + pattern + " as " + u.name);
      if (stream) {
        if (route_ok) continue;  // a stream that opens stays open: only the refusal is checked
      }
      Answer a = Call(method, path, Json::object(), u.token);
      ++checked;
      ASSERT_NE(a.code, 0) << "no answer";
      EXPECT_NE(a.code, 401) << a.text;
      if (!route_ok) {
        EXPECT_EQ(a.code, 403) << a.text;
        ++denied;
      } else if (team_task && !member) {
        EXPECT_EQ(a.code, 404) << a.text;
        ++hidden;
      } else if (team_task && !(on_target & NeedCap(need))) {
        EXPECT_EQ(a.code, 403) << a.text;
        ++denied;
      } else {
        EXPECT_NE(a.code, 403) << a.text;
      }
      if (team_task && (!member || !route_ok)) {
        EXPECT_EQ(a.text.find(secret), std::string::npos) << "the task's text leaked";
      }
    }
  }
  std::cout << "routes x roles: " << routes.body["routes"].size() << " routes, " << checked
            << " calls, " << denied << " refused 403, " << hidden << " hidden 404\n";
  EXPECT_GT(checked, 250);
  EXPECT_GT(denied, 40);
  EXPECT_GT(hidden, 15);
  // The task was never changed by a refused call: still one job, queued.
  auto t = Call("GET", "/api/local/tasks/" + ids["task"], Json(), U("view").token);
  ASSERT_EQ(t.code, 200);
  EXPECT_EQ(t.body["task"]["can"]["decide"], false);
  EXPECT_EQ(t.body["task"]["team"], "platform");
  auto ta = Call("GET", "/api/local/tasks/" + ids["task"], Json(), U("appr").token);
  EXPECT_EQ(ta.body["task"]["can"]["decide"], true);
  EXPECT_EQ(ta.body["task"]["can"]["run"], false);
}

TEST_F(RolesRoutesTest, AScopedTokenCannotExceedItsScopes) {
  auto made =
      Call("POST", "/api/local/tokens", Json{{"name", "ro"}, {"scopes", {"read"}}}, U("op").token);
  ASSERT_EQ(made.code, 201) << made.text;
  const std::string ro = made.body["token"];
  auto created = Call("POST", "/api/local/tasks", Json{{"instruction", "x"}, {"space", "plat"}},
                      U("op").token);
  ASSERT_EQ(created.code, 201);
  const std::string task = created.body["task"]["id"];
  EXPECT_EQ(Call("GET", "/api/local/tasks/" + task, Json(), ro).code, 200);
  auto refused =
      Call("POST", "/api/local/tasks", Json{{"instruction", "y"}, {"space", "plat"}}, ro);
  EXPECT_EQ(refused.code, 403);
  EXPECT_NE(refused.body["error"]["message"].get<std::string>().find("scopes"), std::string::npos);
  EXPECT_EQ(Call("POST", "/api/local/tasks/" + task + "/cancel", Json(), ro).code, 403);
  EXPECT_EQ(
      Call("POST", "/api/local/tasks/" + task + "/tool-requests/01JDW3K6V4Q8X2M7N5P0R9S1TB/decide",
           Json{{"decision", "approve"}}, ro)
          .code,
      403);
  // The task's can{} follows the token's scopes, not only the role.
  auto seen = Call("GET", "/api/local/tasks/" + task, Json(), ro);
  EXPECT_EQ(seen.body["task"]["can"]["run"], false);
  EXPECT_EQ(seen.body["task"]["can"]["decide"], false);
}

TEST_F(RolesRoutesTest, ForgedAndMalformedCredentialsAre401) {
  for (const std::string& token :
       std::vector<std::string>{"not-a-token", U("op").token + "x", std::string(5000, 'a')}) {
    auto a = Call("GET", "/api/local/tasks", Json(), token);
    EXPECT_EQ(a.code, 401) << a.text;
    EXPECT_EQ(a.text.find(token.substr(0, 20)), std::string::npos);  // never echoed
  }
  // A session cookie nobody issued.
  httplib::Client c("127.0.0.1", serve_.port());
  auto r = c.Get("/api/local/tasks", {{"Cookie", "maestro_session=forged"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  // No credential at all.
  EXPECT_EQ(Call("GET", "/api/me", Json(), "").code, 401);
}

TEST_F(RolesRoutesTest, SpacesAndMeFollowTheTeams) {
  auto spaces = Call("GET", "/api/spaces", Json(), U("stranger").token);
  ASSERT_EQ(spaces.code, 200);
  std::set<std::string> names;
  for (const auto& s : spaces.body["spaces"]) names.insert(s["name"].get<std::string>());
  EXPECT_EQ(names, (std::set<std::string>{"oth"}));
  // Creating in another team's space is as unknown as a missing space.
  auto a = Call("POST", "/api/local/tasks", Json{{"instruction", "x"}, {"space", "plat"}},
                U("stranger").token);
  EXPECT_EQ(a.code, 400);
  EXPECT_EQ(a.body["error"]["field"], "space");
  auto me = Call("GET", "/api/me", Json(), U("appr").token);
  ASSERT_EQ(me.code, 200) << me.text;
  EXPECT_EQ(me.body["user"], "appr");
  ASSERT_EQ(me.body["teams"].size(), 1u);
  EXPECT_EQ(me.body["teams"][0]["team"], "platform");
  EXPECT_EQ(me.body["teams"][0]["role"], "approver");
  EXPECT_EQ(me.body["can"]["decide"], true);
  EXPECT_EQ(me.body["can"]["run"], false);
  // A viewer of the team: no run, no decide anywhere.
  auto vme = Call("GET", "/api/me", Json(), U("view").token);
  EXPECT_EQ(vme.body["can"]["decide"], false);
  EXPECT_EQ(vme.body["can"]["run"], false);
}

// A team space's lessons, CAPTCHA pool and the live view of its jobs follow
// the team: a non-member gets 404 (as for nothing there), a member whose role
// there cannot run gets 403 on a change — here "mixed", viewer in platform
// but operator in another team, so the routes' own check lets it through.
TEST_F(RolesRoutesTest, ATeamSpacesLessonsCaptchaAndLiveViewFollowTheTeam) {
  auto lesson = Call("POST", "/api/local/lessons",
                     Json{{"space", "plat"}, {"lesson", "deploy on Tuesdays only"}}, U("op").token);
  ASSERT_EQ(lesson.code, 201) << lesson.text;
  const std::string id = lesson.body["lesson"]["id"];
  const std::string path = "/api/local/lessons/" + id;
  // Another team: not shown, not listed, not changed; not addable either.
  auto hidden = Call("GET", path, Json(), U("stranger").token);
  EXPECT_EQ(hidden.code, 404);
  EXPECT_EQ(hidden.text.find("Tuesdays"), std::string::npos);
  auto list = Call("GET", "/api/local/lessons", Json(), U("stranger").token);
  ASSERT_EQ(list.code, 200);
  EXPECT_EQ(list.text.find("Tuesdays"), std::string::npos);
  EXPECT_EQ(Call("PATCH", path, Json{{"lesson", "x"}}, U("stranger").token).code, 404);
  EXPECT_EQ(Call("DELETE", path, Json(), U("stranger").token).code, 404);
  EXPECT_EQ(Call("POST", "/api/local/lessons", Json{{"space", "plat"}, {"lesson", "y"}},
                 U("stranger").token)
                .code,
            400);
  // A viewer of the team reads it but changes nothing.
  EXPECT_EQ(Call("GET", path, Json(), U("mixed").token).code, 200);
  EXPECT_EQ(Call("PATCH", path, Json{{"lesson", "x"}}, U("mixed").token).code, 403);
  EXPECT_EQ(Call("DELETE", path, Json(), U("mixed").token).code, 403);
  EXPECT_EQ(
      Call("POST", "/api/local/lessons", Json{{"space", "plat"}, {"lesson", "y"}}, U("mixed").token)
          .code,
      403);
  EXPECT_EQ(Call("PATCH", path, Json{{"lesson", "deploy on Wednesdays"}}, U("op").token).code, 200);
  // The CAPTCHA pool of the team's space.
  const Json captcha = {{"space_id", "plat"}, {"screen", "s1"}};
  EXPECT_EQ(Call("POST", "/api/local/captcha-pool/resolve", captcha, U("stranger").token).code,
            404);
  EXPECT_EQ(Call("POST", "/api/local/captcha-pool/resolve", captcha, U("mixed").token).code, 403);
  EXPECT_EQ(Call("POST", "/api/local/captcha-pool/resolve", captcha, U("op").token).code, 404);
  // The live view of a team task's job: watching is read, input is run.
  auto created = Call("POST", "/api/local/tasks", Json{{"instruction", "x"}, {"space", "plat"}},
                      U("op").token);
  ASSERT_EQ(created.code, 201);
  const std::string job = "/api/local/jobs/" + created.body["job"]["id"].get<std::string>();
  EXPECT_EQ(Call("GET", job + "/browser/screenshot", Json(), U("stranger").token).code, 404);
  EXPECT_EQ(Call("POST", job + "/browser/input", Json{{"type", "key"}, {"key", "Enter"}},
                 U("mixed").token)
                .code,
            403);
  EXPECT_EQ(Call("POST", job + "/browser/done", Json(), U("mixed").token).code, 403);
  EXPECT_EQ(Call("GET", job + "/browser/screenshot", Json(), U("mixed").token).code, 404)
      << "readable, but no browser is open";
}

}  // namespace
}  // namespace maestro
