// Access (api/access.h) and its config sections (api/access_config.h): the
// rules of roles, teams, scopes and visibility on plain values, and the
// errors of `auth:` / `teams:` / `spaces.<name>.team` with file:line:col.
#include "api/access.h"

#include <gtest/gtest.h>

#include <fstream>

#include "core/config.h"
#include "support/temp_dir.h"

namespace maestro::api {
namespace {

// The groups a provider said users are in (the store's role, in memory).
class Groups : public IdentityRecords {
 public:
  std::map<std::string, std::vector<std::string>> of;
  int reads = 0;
  Result<std::vector<std::string>> UserGroups(const std::string& user) override {
    ++reads;
    auto it = of.find(user);
    return it == of.end() ? std::vector<std::string>{} : it->second;
  }
};

Result<AccessSettings> FromYaml(const testing::TempDir& dir, const std::string& yaml) {
  const std::string path = dir.File("maestro.yaml");
  std::ofstream(path) << yaml;
  auto cfg = LoadConfig(path, {});
  if (!cfg.ok()) return cfg.status();
  return AccessSettingsFrom(*cfg, "");
}

Task TaskIn(const std::string& space, const std::string& owner, const std::string& visibility) {
  Task t;
  t.space = space;
  t.owner = owner;
  t.visibility = visibility;
  return t;
}

TEST(AccessTest, RolesFromMembersAndGroupsAndTheDefault) {
  testing::TempDir dir;
  auto s = FromYaml(dir, R"(auth:
  default_role: viewer
  oidc: {issuer: "http://127.0.0.1:1", client_id: m, client_secret: s,
         redirect_uri: "http://127.0.0.1:2/auth/callback"}
teams:
  platform:
    members: {alice: approver}
    groups: {eng: operator, watchers: viewer}
spaces:
  plat: {path: /tmp/plat-access-test, team: platform}
)");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  Groups groups;
  groups.of["alice"] = {"eng"};
  groups.of["wendy"] = {"watchers"};
  Access access(*s, &groups);
  // The highest of the member entry and the groups' roles.
  EXPECT_EQ(access.RoleIn("alice", "platform"), Role::kOperator);
  EXPECT_EQ(access.RoleIn("wendy", "platform"), Role::kViewer);
  EXPECT_EQ(access.RoleIn("mallory", "platform"), Role::kNone);
  EXPECT_EQ(access.RoleIn("mallory", ""), Role::kViewer);  // auth.default_role
  EXPECT_EQ(access.RoleIn("admin", "platform"), Role::kAdmin);
  // Groups are cached, and forgotten on demand.
  const int reads = groups.reads;
  access.RoleIn("alice", "platform");
  EXPECT_EQ(groups.reads, reads);
  access.Forget("alice");
  access.RoleIn("alice", "platform");
  EXPECT_EQ(groups.reads, reads + 1);

  const Task shared = TaskIn("plat", "alice", "shared");
  const Task secret = TaskIn("plat", "alice", "private");
  EXPECT_TRUE(access.Visible(shared, "wendy"));
  EXPECT_FALSE(access.Visible(shared, "mallory"));  // not a member: 404
  EXPECT_FALSE(access.Visible(secret, "wendy"));    // private: owner and team admins
  EXPECT_TRUE(access.Visible(secret, "alice"));
  EXPECT_TRUE(access.Visible(secret, "admin"));
  EXPECT_TRUE(access.Allow(shared, "alice", kCapDecide).ok());
  Status viewer = access.Allow(shared, "wendy", kCapDecide);
  EXPECT_EQ(viewer.code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(viewer.message(), "your role viewer in team platform cannot decide");
  EXPECT_FALSE(access.SpaceVisible("plat", "mallory"));
  EXPECT_TRUE(access.SpaceVisible("elsewhere", "mallory"));
  // Outside team spaces: the old rule, the default role.
  EXPECT_TRUE(access.Visible(TaskIn("", "bob", "shared"), "mallory"));
  EXPECT_FALSE(access.Visible(TaskIn("", "bob", "private"), "mallory"));
  EXPECT_EQ(access.Allow(TaskIn("", "mallory", "private"), "mallory", kCapRun).code(),
            StatusCode::kPermissionDenied);
}

TEST(AccessTest, TheRouteCheckNeedsTheScopeAndTheRole) {
  Access access;  // single-user rules: everyone an operator
  Principal p;
  p.user = "bob";
  EXPECT_TRUE(access.AllowRoute(p, Need::kRun).ok());
  EXPECT_TRUE(access.AllowRoute(p, Need::kDecide).ok());
  EXPECT_EQ(access.AllowRoute(p, Need::kAdmin).code(), StatusCode::kPermissionDenied);
  p.scopes = kCapRead;
  Status st = access.AllowRoute(p, Need::kRun);
  EXPECT_EQ(st.code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(st.message(), "this token's scopes (read) do not include run");
  EXPECT_TRUE(access.AllowRoute(p, Need::kRead).ok());
  EXPECT_TRUE(access.AllowRoute(p, Need::kPublic).ok());
}

TEST(AccessTest, Scopes) {
  EXPECT_EQ(*ParseScopes("*"), kAllCaps);
  EXPECT_EQ(*ParseScopes("read decide"), kCapRead | kCapDecide);
  EXPECT_EQ(ScopesText(kCapRead | kCapRun), "read run");
  EXPECT_EQ(ScopesText(kAllCaps), "*");
  auto bad = ParseScopes("read sudo");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "scopes");
}

TEST(AccessTest, ConfigErrorsNameTheKeyAndThePosition) {
  testing::TempDir dir;
  struct Case {
    const char* yaml;
    const char* key;
  } const cases[] = {
      {"auth:\n  default_role: god\n", "auth.default_role"},
      {"auth:\n  defualt_role: viewer\n", "auth.defualt_role"},
      {"auth:\n  session_ttl_s: 5\n", "auth.session_ttl_s"},
      {"auth:\n  oidc: {client_id: m, client_secret: s, redirect_uri: 'http://x/cb'}\n",
       "auth.oidc.issuer"},
      {"auth:\n  oidc: {issuer: 'ftp://x', client_id: m, client_secret: s, redirect_uri: "
       "'http://x/cb'}\n",
       "auth.oidc.issuer"},
      {"auth:\n  oidc: {issuer: 'http://x', client_id: m, redirect_uri: 'http://x/cb'}\n",
       "auth.oidc.client_secret"},
      {"auth:\n  oidc: {issuer: 'http://x', client_id: m, client_secret: s, redirect_uri: "
       "'http://x/cb', scopes: [profile]}\n",
       "auth.oidc.scopes"},
      {"teams:\n  platform:\n    members: {alice: boss}\n", "teams.platform.members.alice"},
      {"teams:\n  platform:\n    people: {alice: admin}\n", "teams.platform.people"},
      {"spaces:\n  s: {path: /tmp/access-test-s, team: nobody}\n", "spaces.s.team"},
  };
  for (const auto& c : cases) {
    auto s = FromYaml(dir, c.yaml);
    ASSERT_FALSE(s.ok()) << c.yaml;
    EXPECT_EQ(s.status().field(), c.key) << s.status().ToString();
    EXPECT_NE(s.status().message().find("maestro.yaml:"), std::string::npos)
        << s.status().ToString();
  }
  // The client secret may come from MAESTRO_OIDC_CLIENT_SECRET instead.
  const std::string path = dir.File("maestro.yaml");
  std::ofstream(path) << "auth:\n  oidc: {issuer: 'http://x', client_id: m, redirect_uri: "
                         "'http://x/cb'}\n";
  auto cfg = LoadConfig(path, {});
  ASSERT_TRUE(cfg.ok());
  auto s = AccessSettingsFrom(*cfg, "from-env");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->oidc->client_secret, "from-env");
}

}  // namespace
}  // namespace maestro::api
