// Scoped tokens and the audit log on a real `maestro serve` (issue 49; no
// workers: tasks stay queued), with `teams:` in its config and real time:
// the admin's old token call, a read-scoped token refused on a run route
// and unable to mint a run token, a 1-second token refused after 1.5 s, a
// revoked token refused on its very next request, another user's token a
// 404; the audit log's token and task entries with actor and time, a
// non-admin's 403, a team admin who never sees another team's task, and
// the JSON-lines export.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/json.h"
#include "support/serve_process.h"
#include "support/temp_dir.h"

namespace maestro {
namespace {

using namespace std::chrono_literals;

class TokensAuditServeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(dir_.File("plat"));
    std::filesystem::create_directories(dir_.File("dat"));
    std::ofstream(dir_.File("maestro.yaml"))
        << "teams:\n"
        << "  platform:\n"
        << "    members: {alice: admin, bob: operator}\n"
        << "  data:\n"
        << "    members: {carol: admin}\n"
        << "spaces:\n"
        << "  plat: {path: " << dir_.File("plat") << ", team: platform}\n"
        << "  dat: {path: " << dir_.File("dat") << ", team: data}\n";
    ASSERT_EQ(serve_.Start(dir_.File("maestro.yaml")), "");
    for (const char* u : {"alice", "bob", "carol"}) {
      // The admin's old call, unchanged.
      auto [code, out] = Call("POST", "/api/local/tokens", Json{{"user", u}});
      ASSERT_EQ(code, 201) << out.dump() << serve_.Stderr();
      ASSERT_EQ(out["user"], u);
      tokens_[u] = out["token"];
    }
  }

  using Answer = testing::ServeProcess::Answer;
  Answer Raw(const std::string& method, const std::string& path, const Json& body,
             const std::string& token) {
    return serve_.Call(method, path, body, token);
  }
  std::pair<int, Json> Call(const std::string& method, const std::string& path,
                            const Json& body = Json(), const std::string& token = "adm") {
    Answer a = Raw(method, path, body, token);
    return {a.code, a.body};
  }

  testing::TempDir dir_;
  testing::ServeProcess serve_{dir_};
  std::map<std::string, std::string> tokens_;
};

TEST_F(TokensAuditServeTest, ScopesExpiryRevocationAndOwnership) {
  const std::string alice = tokens_["alice"];
  auto [mc, made] = Call("POST", "/api/local/tokens",
                         {{"name", "ci"}, {"scopes", {"read"}}, {"expires_in_s", 3600}}, alice);
  ASSERT_EQ(mc, 201) << made.dump();
  const std::string read_token = made["token"];
  EXPECT_EQ(made["scopes"], Json::array({"read"}));
  // Shown once: the list has no plain token.
  auto [lc, list] = Call("GET", "/api/local/tokens", Json(), alice);
  ASSERT_EQ(lc, 200);
  EXPECT_EQ(list.dump().find(read_token), std::string::npos);
  for (const Json& t : list["tokens"]) EXPECT_FALSE(t.contains("token"));

  EXPECT_EQ(Call("GET", "/api/local/tasks", Json(), read_token).first, 200);
  EXPECT_EQ(Call("POST", "/api/local/tasks", {{"instruction", "hi"}, {"space", "plat"}}, read_token)
                .first,
            403);
  EXPECT_EQ(Call("POST", "/api/local/tokens", {{"scopes", {"read", "run"}}}, read_token).first,
            403);

  // Expiry, in real time.
  auto [sc, brief] = Call("POST", "/api/local/tokens", {{"expires_in_s", 1}}, alice);
  ASSERT_EQ(sc, 201) << brief.dump();
  EXPECT_EQ(Call("GET", "/api/local/tasks", Json(), brief["token"]).first, 200);
  std::this_thread::sleep_for(1500ms);
  EXPECT_EQ(Call("GET", "/api/local/tasks", Json(), brief["token"]).first, 401);

  // Revocation: refused on the very next request.
  EXPECT_EQ(Call("GET", "/api/local/tasks", Json(), read_token).first, 200);
  const std::string id = made["id"];
  // bob neither sees nor revokes it.
  auto [bc, bobs] = Call("GET", "/api/local/tokens", Json(), tokens_["bob"]);
  ASSERT_EQ(bc, 200);
  EXPECT_EQ(bobs.dump().find(id), std::string::npos);
  EXPECT_EQ(Call("DELETE", "/api/local/tokens/" + id, Json(), tokens_["bob"]).first, 404);
  EXPECT_EQ(Call("GET", "/api/local/tasks", Json(), read_token).first, 200);
  Answer del = Raw("DELETE", "/api/local/tokens/" + id, Json(), alice);
  EXPECT_EQ(del.code, 204) << del.text;
  EXPECT_EQ(Call("GET", "/api/local/tasks", Json(), read_token).first, 401);

  // Bad fields name themselves; bob cannot make tokens for others.
  auto [nc, name] = Call("POST", "/api/local/tokens", {{"name", std::string(101, 'x')}}, alice);
  EXPECT_EQ(nc, 400);
  EXPECT_EQ(name["error"]["field"], "name");
  auto [xc, scopes] = Call("POST", "/api/local/tokens", {{"scopes", {"root"}}}, alice);
  EXPECT_EQ(xc, 400);
  EXPECT_EQ(scopes["error"]["field"], "scopes");
  auto [ec, exp] = Call("POST", "/api/local/tokens", {{"expires_in_s", 0}}, alice);
  EXPECT_EQ(ec, 400);
  EXPECT_EQ(exp["error"]["field"], "expires_in_s");
  EXPECT_EQ(Call("POST", "/api/local/tokens", {{"user", "eve"}}, tokens_["bob"]).first, 403);
}

TEST_F(TokensAuditServeTest, TheAuditLogShowsWhoDidWhatToItsAdminsOnly) {
  const auto before = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  auto [mc, made] = Call("POST", "/api/local/tokens", {{"name", "laptop"}}, tokens_["alice"]);
  ASSERT_EQ(mc, 201) << made.dump();
  ASSERT_EQ(
      Call("DELETE", "/api/local/tokens/" + made["id"].get<std::string>(), Json(), tokens_["alice"])
          .first,
      204);
  auto [tc, task] =
      Call("POST", "/api/local/tasks",
           {{"instruction", "tidy the platform repo"}, {"space", "plat"}, {"visibility", "shared"}},
           tokens_["bob"]);
  ASSERT_EQ(tc, 201) << task.dump();

  // The admin sees alice's token entries with actor and time.
  auto [ac, page] = Call("GET", "/api/local/audit?actor=alice&action=token.");
  ASSERT_EQ(ac, 200) << page.dump();
  ASSERT_EQ(page["entries"].size(), 2u) << page.dump();
  EXPECT_EQ(page["entries"][0]["action"], "token.revoke");
  EXPECT_EQ(page["entries"][1]["action"], "token.create");
  EXPECT_EQ(page["entries"][1]["detail"]["name"], "laptop");
  EXPECT_GE(page["entries"][1]["at"].get<int64_t>(), before);
  EXPECT_LE(page["entries"][1]["at"].get<int64_t>(), page["entries"][0]["at"].get<int64_t>());

  // bob is no admin: 403. alice (platform admin) sees bob's platform task;
  // carol (data admin) sees neither it nor alice's tokens.
  EXPECT_EQ(Call("GET", "/api/local/audit", Json(), tokens_["bob"]).first, 403);
  auto [pc, plat] = Call("GET", "/api/local/audit?action=task.create", Json(), tokens_["alice"]);
  ASSERT_EQ(pc, 200) << plat.dump();
  ASSERT_EQ(plat["entries"].size(), 1u)
      << plat.dump() << " (task.create is recorded by the TaskService)";
  EXPECT_EQ(plat["entries"][0]["actor"], "bob");
  EXPECT_EQ(plat["entries"][0]["team"], "platform");
  auto [cc, data] = Call("GET", "/api/local/audit", Json(), tokens_["carol"]);
  ASSERT_EQ(cc, 200) << data.dump();
  for (const Json& e : data["entries"]) {
    EXPECT_TRUE(e["team"] == "data" || e["actor"] == "carol") << e.dump();
  }

  // The export: JSON lines, oldest first, the right type.
  Answer ex = Raw("GET", "/api/local/audit/export", Json(), "adm");
  ASSERT_EQ(ex.code, 200);
  EXPECT_EQ(ex.header("Content-Type"), "application/x-ndjson");
  std::istringstream lines(ex.text);
  std::string line;
  int n = 0;
  int64_t last = 0;
  bool saw_task = false;
  while (std::getline(lines, line)) {
    Json e = Json::parse(line, nullptr, false);
    ASSERT_TRUE(e.is_object()) << line;
    EXPECT_GT(e["id"].get<int64_t>(), last);
    last = e["id"];
    saw_task = saw_task || e["action"] == "task.create";
    ++n;
  }
  EXPECT_GE(n, 6);  // 3 tokens by the admin, alice's create + revoke, bob's task
  EXPECT_TRUE(saw_task);
}

}  // namespace
}  // namespace maestro
