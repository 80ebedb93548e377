// The Auto Prompter's policy file (engine/loop/auto_prompter.h): parsing with
// file:line:col errors, the first-match rule, movement and argument
// matching, the off switch, and arguments of any size.
#include "engine/loop/auto_prompter.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/temp_dir.h"

namespace maestro::engine {
namespace {

std::unique_ptr<AutoPrompter> MustParse(const std::string& text) {
  auto p = AutoPrompter::Parse(text, "policy.yaml");
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? std::move(p).value() : nullptr;
}

std::string ParseError(const std::string& text) {
  auto p = AutoPrompter::Parse(text, "policy.yaml");
  EXPECT_FALSE(p.ok());
  return p.ok() ? "" : p.status().message();
}

constexpr char kPolicy[] = R"(rules:
  - id: no-rm-rf
    tool: RunCommand
    match: {command: 'rm[[:space:]]+-rf'}
    deny: remove files one by one
  - id: review-reads
    tool: "*"
    movement: [review]
    instruct: cite what you read
  - id: npm-test
    tool: RunCommand
    match: {command: '^npm test$'}
    approve_once: true
)";

TEST(AutoPrompter, TheFirstMatchingRuleDecides) {
  auto p = MustParse(kPolicy);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->rules().size(), 3u);
  EXPECT_EQ(p->hash().size(), 64u);
  auto deny = p->Evaluate("implement", "RunCommand", {{"command", "cd x && rm  -rf /"}});
  ASSERT_TRUE(deny);
  EXPECT_EQ(deny->rule->id, "no-rm-rf");
  EXPECT_EQ(deny->rule->decision, PolicyDecision::kDeny);
  EXPECT_EQ(deny->args_hash.size(), 64u);
  EXPECT_FALSE(p->Evaluate("implement", "RunCommand", {{"command", "ls -rf"}}));
  auto approve = p->Evaluate("implement", "RunCommand", {{"command", "npm test"}});
  ASSERT_TRUE(approve);
  EXPECT_EQ(approve->rule->decision, PolicyDecision::kApproveOnce);
  // Movement-bound: only in review, for every tool.
  auto instruct = p->Evaluate("review", "ReadFile", {{"path", "a"}});
  ASSERT_TRUE(instruct);
  EXPECT_EQ(instruct->rule->id, "review-reads");
  EXPECT_FALSE(p->Evaluate("implement", "ReadFile", {{"path", "a"}}));
  // An argument the rule names but the call lacks does not match.
  EXPECT_FALSE(p->Evaluate("implement", "RunCommand", Json::object()));
  // A non-string argument matches on its JSON text.
  auto n =
      MustParse("rules:\n  - {id: big, tool: Grep, match: {limit: '^[0-9]{4,}$'}, deny: no}\n");
  EXPECT_TRUE(n->Evaluate("m", "Grep", {{"limit", 10000}}));
  EXPECT_FALSE(n->Evaluate("m", "Grep", {{"limit", 10}}));
}

TEST(AutoPrompter, AnArgumentOfAnySizeIsMatchedWithoutRecursion) {
  auto p = MustParse(kPolicy);
  // A megabyte of padding before the forbidden command: found, no crash.
  std::string cmd(1 << 20, ' ');
  cmd += "rm -rf /";
  auto f = p->Evaluate("m", "RunCommand", {{"command", cmd}});
  ASSERT_TRUE(f);
  EXPECT_EQ(f->rule->id, "no-rm-rf");
}

TEST(AutoPrompter, DisabledOrEmptyMeansNoPolicy) {
  auto off = AutoPrompter::Parse("enabled: false\nrules:\n  - {id: a, tool: x, deny: y}\n", "p");
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(*off, nullptr);
  auto empty = AutoPrompter::Parse("", "p");
  ASSERT_TRUE(empty.ok());
  ASSERT_NE(*empty, nullptr);
  EXPECT_TRUE((*empty)->rules().empty());
}

TEST(AutoPrompter, ErrorsNameTheFileLineAndColumn) {
  EXPECT_EQ(ParseError("rules:\n  - id: a\n    tool: x\n"),
            "policy.yaml:2:5: rule 'a' needs exactly one of 'deny', 'instruct', 'approve_once'");
  EXPECT_EQ(ParseError("rules:\n  - id: a\n    tool: x\n    deny: no\n    instruct: yes\n"),
            "policy.yaml:2:5: rule 'a' needs exactly one of 'deny', 'instruct', 'approve_once'");
  EXPECT_EQ(ParseError("rules:\n  - id: a\n    tol: x\n    deny: n\n"),
            "policy.yaml:3:5: unknown rule key 'tol'; did you mean 'tool'?");
  const std::string re =
      ParseError("rules:\n  - {id: a, tool: x, deny: n, match: {command: '(('}}\n");
  EXPECT_EQ(re.rfind("policy.yaml:2:", 0), 0u) << re;
  EXPECT_NE(re.find("bad regular expression"), std::string::npos) << re;
  EXPECT_EQ(ParseError("rules:\n  - {id: a, tool: x, deny: n}\n  - {id: a, tool: y, deny: n}\n"),
            "policy.yaml:3:10: duplicate rule id 'a'");
  EXPECT_EQ(ParseError("rule: []\n"),
            "policy.yaml:1:1: unknown key 'rule' (expected 'enabled', 'rules')");
  EXPECT_EQ(ParseError("enabled: maybe\n"), "policy.yaml:1:10: 'enabled' must be true or false");
}

TEST(AutoPrompter, LoadPrefersThePiecesFileThenTheSpacesThenNone) {
  testing::TempDir dir;
  auto write = [&](const std::string& rel, const std::string& text) {
    std::filesystem::create_directories(std::filesystem::path(dir.File(rel)).parent_path());
    std::ofstream(dir.File(rel)) << text;
  };
  Env& env = *Env::Default();
  auto none = AutoPrompter::Load(env, dir.path(), "proj", "coding");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, nullptr);
  write("proj.yaml", "rules:\n  - {id: space, tool: x, deny: n}\n");
  write("proj/coding.yaml", "rules:\n  - {id: piece, tool: x, deny: n}\n");
  write("default.yaml", "rules:\n  - {id: ephemeral, tool: x, deny: n}\n");
  EXPECT_EQ((*AutoPrompter::Load(env, dir.path(), "proj", "coding"))->rules()[0].id, "piece");
  EXPECT_EQ((*AutoPrompter::Load(env, dir.path(), "proj", "chat"))->rules()[0].id, "space");
  EXPECT_EQ((*AutoPrompter::Load(env, dir.path(), "", "chat"))->rules()[0].id, "ephemeral");
  EXPECT_EQ((*AutoPrompter::Load(env, dir.path(), "proj", "chat"))->source(),
            dir.File("proj.yaml"));
  EXPECT_EQ(*AutoPrompter::Load(env, "", "proj", "chat"), nullptr) << "no dir: no policy";
  write("proj.yaml", "rules: [\n");
  EXPECT_FALSE(AutoPrompter::Load(env, dir.path(), "proj", "chat").ok());
}

TEST(AutoPrompter, TheEventPayloadIsTheAllowList) {
  auto p = MustParse(kPolicy);
  auto f = p->Evaluate("m", "RunCommand", {{"command", "rm -rf secret-dir"}});
  ASSERT_TRUE(f);
  Json payload = PolicyEventPayload(*f, "RunCommand", "m");
  EXPECT_EQ(payload, (Json{{"rule", "no-rm-rf"},
                           {"tool", "RunCommand"},
                           {"movement", "m"},
                           {"decision", "deny"},
                           {"args_hash", f->args_hash}}));
  EXPECT_EQ(PolicyDenialText(*f->rule, "RunCommand"),
            "Error: RunCommand was denied by policy rule 'no-rm-rf': remove files one by one. The "
            "call did not run.");
}

}  // namespace
}  // namespace maestro::engine
