// The exact `messages` of each of the five prompt paths (seed 000 §3.2).
#include "engine/prompt/prompt_paths.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "chat_messages.h"
#include "engine_test_util.h"
#include "support/temp_dir.h"

namespace maestro::engine {
namespace {

using test::Builtin;
using test::PolicyTools;
using ::testing::HasSubstr;
using ::testing::Not;

using test::Asst;
using test::Call;
using test::Tool;

const char* kFinalUserWithHandoff =
    "# Context\n"
    "Current date and time: 2026-07-24 10:00 UTC\n\n"
    "## Mission\nShip the parser\n\n"
    "## Files\n- src/a.cc\n- README.md\n\n"
    "## Handoff from the previous session\nParser half done.\n\n"
    "## Console\n$ make\nok\n\n"
    "# Task\nFix the bug";

const char* kFinalUserWithoutHandoff =
    "# Context\n"
    "Current date and time: 2026-07-24 10:00 UTC\n\n"
    "## Mission\nShip the parser\n\n"
    "## Files\n- src/a.cc\n- README.md\n\n"
    "## Console\n$ make\nok\n\n"
    "# Task\nFix the bug";

class PromptPaths : public ::testing::Test {
 protected:
  void SetUp() override {
    coding_ = Builtin("coding");
    research_ = Builtin("research");
    coding_tools_ = *BuildPieceTools(coding_, PolicyTools());
    research_tools_ = *BuildPieceTools(research_, PolicyTools());
  }

  PromptInputs Inputs(const Piece& piece, const PieceTools& tools) {
    PromptInputs in;
    in.piece = &piece;
    in.tools = &tools;
    in.preamble.agents_md = "Use tabs.";
    in.preamble.memory_index = "- parser.md";
    in.preamble.skills_index = "- make";
    in.preamble.working_directory = "/ws/project";
    in.dynamic.datetime = "2026-07-24 10:00 UTC";
    in.dynamic.mission = "Ship the parser";
    in.dynamic.files = {"src/a.cc", "README.md"};
    in.dynamic.handoff = "Parser half done.";
    in.dynamic.console = "$ make\nok";
    in.task_instruction = "Fix the bug";
    return in;
  }

  std::vector<Json> Seed(const PromptInputs& in, PromptPath path) {
    auto r = SeedConversation(in, {path, dir_.File("transcript.jsonl")});
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? r->messages : std::vector<Json>{};
  }

  void WriteTranscript(const std::vector<Json>& lines) {
    std::ofstream out(dir_.File("transcript.jsonl"));
    for (const auto& l : lines) out << l.dump() << "\n";
  }

  // The first job: plan, read a file, transition to implement, complete.
  std::vector<Json> FirstJobTranscript() {
    std::vector<Json> msgs = Seed(Inputs(coding_, coding_tools_), PromptPath::kNewJob);
    msgs.push_back(Asst("", {Call("gen_call_1", "ReadFile", R"({"path":"src/a.cc"})")}));
    msgs.push_back(Tool("gen_call_1", "1: int main() {}"));
    msgs.push_back(
        Asst("Plan ready.", {Call("gen_call_2", "transition", R"({"next":"implement"})")}));
    msgs.push_back(Tool("gen_call_2", "Now in movement implement"));
    msgs.push_back(TransitionGuidanceMessage(coding_, "implement"));
    msgs.push_back(
        Asst("", {Call("gen_call_3", "complete", R"({"status":"success","result":"fixed"})")}));
    msgs.push_back(Tool("gen_call_3", "Completed"));
    return msgs;
  }

  testing::TempDir dir_;
  Piece coding_, research_;
  PieceTools coding_tools_, research_tools_;
};

TEST_F(PromptPaths, NewJobIsOneStaticSystemAndOneDynamicUser) {
  auto msgs = Seed(Inputs(coding_, coding_tools_), PromptPath::kNewJob);
  ASSERT_EQ(msgs.size(), 2u);
  EXPECT_EQ(msgs[0]["role"], "system");
  std::string sys = msgs[0]["content"];
  EXPECT_EQ(sys.rfind(StaticPreamble::DefaultCommonRules(), 0), 0u);
  // Sections in their fixed order, then the starting movement's guidance.
  size_t tools = sys.find("\n\n## Tools\n- EditFile: Replace text in a file.\n");
  size_t agents = sys.find("\n\n## Workspace instructions (AGENTS.md)\nUse tabs.");
  size_t memory = sys.find("\n\n## Memory index\n- parser.md");
  size_t skills = sys.find("\n\n## Skills index\n- make");
  size_t wd = sys.find("\n\n## Working directory\n/ws/project");
  size_t guidance = sys.find("\n\n# Movement: plan (piece coding)\nUnderstand the code");
  ASSERT_NE(guidance, std::string::npos) << sys;
  EXPECT_LT(tools, agents);
  EXPECT_LT(agents, memory);
  EXPECT_LT(memory, skills);
  EXPECT_LT(skills, wd);
  EXPECT_LT(wd, guidance);
  EXPECT_THAT(sys, HasSubstr("- transition: Move this task to another movement of the piece.\n"));
  EXPECT_THAT(sys,
              HasSubstr("- `implement`: The plan is ready and names the files and the checks."));
  // Nothing dynamic in the system message.
  for (const char* dyn :
       {"2026", "Ship the parser", "src/a.cc", "Parser half done", "$ make", "Fix the bug"}) {
    EXPECT_THAT(sys, Not(HasSubstr(dyn)));
  }
  EXPECT_EQ(msgs[1], Json({{"role", "user"}, {"content", kFinalUserWithHandoff}}));
}

TEST_F(PromptPaths, SameJobTransitionAppendsGuidanceAndKeepsTheHead) {
  auto msgs = Seed(Inputs(coding_, coding_tools_), PromptPath::kNewJob);
  std::string head = Json(msgs).dump();
  msgs.push_back(Asst("", {Call("gen_call_1", "transition", R"({"next":"implement"})")}));
  msgs.push_back(Tool("gen_call_1", "ok"));
  msgs.push_back(TransitionGuidanceMessage(coding_, "implement"));
  ASSERT_EQ(msgs.size(), 5u);
  EXPECT_EQ(Json(std::vector<Json>(msgs.begin(), msgs.begin() + 2)).dump(), head);
  EXPECT_EQ(msgs[4]["role"], "user");
  std::string g = msgs[4]["content"];
  EXPECT_EQ(g.rfind("# Movement: implement (piece coding)\nMake the planned change", 0), 0u) << g;
  EXPECT_THAT(g, HasSubstr("## Permissions\nYou may modify files in this movement."));
  EXPECT_THAT(g, HasSubstr("Call `transition` with one of these when its condition holds:\n"
                           "- `review`: The change is implemented and its checks pass.\n"
                           "- `WAIT_SUBTASKS`: "));
  // Only one system message, at index 0.
  for (size_t i = 1; i < msgs.size(); ++i) EXPECT_NE(msgs[i]["role"], "system");
}

TEST_F(PromptPaths, SamePieceContinueReplaysWithTransitionsAndOmitsHandoff) {
  std::vector<Json> first = FirstJobTranscript();
  WriteTranscript(first);
  auto msgs = Seed(Inputs(coding_, coding_tools_), PromptPath::kSamePieceContinue);
  // system, user(first instruction), ReadFile pair, transition pair,
  // implement guidance + final user (one message: roles alternate). The
  // completed `complete` is gone.
  ASSERT_EQ(msgs.size(), 7u) << Json(msgs).dump(1);
  EXPECT_EQ(msgs[0], first[0]);  // byte-identical system: the cache prefix holds
  for (size_t i = 1; i <= 5; ++i) EXPECT_EQ(msgs[i], first[i]) << i;
  EXPECT_EQ(msgs[6], Json({{"role", "user"},
                           {"content", first[6]["content"].get<std::string>() + "\n\n" +
                                           kFinalUserWithoutHandoff}}));
}

// Issue 45 item 2: a Continue starts in the initial movement; when the
// replayed conversation ended in another, the final message names the start
// movement with its guidance (the system message's alone would leave the
// replay's last guidance in force).
TEST_F(PromptPaths, AContinueThatStartsElsewhereThanTheReplayEndedSaysItsMovement) {
  WriteTranscript(FirstJobTranscript());
  PromptInputs in = Inputs(coding_, coding_tools_);
  in.conversation_movement = "implement";
  auto msgs = Seed(in, PromptPath::kSamePieceContinue);
  ASSERT_EQ(msgs.size(), 7u) << Json(msgs).dump(1);
  std::string last = msgs[6]["content"];
  size_t guidance = last.find("# Movement: plan (piece coding)");
  EXPECT_NE(guidance, std::string::npos) << last;
  EXPECT_LT(guidance, last.find("# Task\nFix the bug"));
  in.conversation_movement = "plan";  // already there: nothing added
  msgs = Seed(in, PromptPath::kSamePieceContinue);
  EXPECT_THAT(msgs.back()["content"].get<std::string>(),
              Not(HasSubstr("# Movement: plan (piece coding)")));
}

TEST_F(PromptPaths, CrossPieceContinueUsesTheNewPieceAndDropsTransitions) {
  WriteTranscript(FirstJobTranscript());
  auto msgs = Seed(Inputs(research_, research_tools_), PromptPath::kCrossPieceContinue);
  ASSERT_EQ(msgs.size(), 6u) << Json(msgs).dump(1);
  EXPECT_THAT(msgs[0]["content"].get<std::string>(),
              HasSubstr("# Movement: investigate (piece research)"));
  EXPECT_EQ(msgs[1]["role"], "user");  // first job's instruction
  EXPECT_EQ(msgs[2]["tool_calls"][0]["function"]["name"], "ReadFile");
  EXPECT_EQ(msgs[3]["role"], "tool");
  // The transition call is gone; its message keeps only its text.
  EXPECT_EQ(msgs[4], Json({{"role", "assistant"}, {"content", "Plan ready."}}));
  // The old guidance stays a plain turn, joined by the final user message.
  std::string last = msgs[5]["content"];
  EXPECT_EQ(last.rfind("# Movement: implement (piece coding)", 0), 0u) << last;
  for (const auto& m : msgs) {
    if (m.contains("tool_calls")) {
      EXPECT_NE(m["tool_calls"][0]["function"]["name"], "transition");
    }
  }
  EXPECT_EQ(last.substr(last.size() - std::string(kFinalUserWithoutHandoff).size()),
            kFinalUserWithoutHandoff);
}

TEST_F(PromptPaths, ContinueWithNothingToReplayKeepsTheHandoff) {
  WriteTranscript({Json{{"role", "system"}, {"content", "old"}}});
  auto msgs = Seed(Inputs(research_, research_tools_), PromptPath::kCrossPieceContinue);
  ASSERT_EQ(msgs.size(), 2u);
  EXPECT_EQ(msgs[1]["content"], kFinalUserWithHandoff);
}

TEST_F(PromptPaths, FollowUpReplaysAndStartsAtTheResumeMovement) {
  std::vector<Json> first = FirstJobTranscript();
  WriteTranscript(first);
  PromptInputs in = Inputs(coding_, coding_tools_);
  in.start_movement = "review";
  in.task_instruction = "Fix the bug\n\nThe user answered: use the new parser.";
  auto msgs = Seed(in, PromptPath::kFollowUp);
  ASSERT_EQ(msgs.size(), 7u);
  EXPECT_EQ(msgs[0], first[0]);  // still the piece's initial guidance: same cached prefix
  for (size_t i = 1; i <= 5; ++i) EXPECT_EQ(msgs[i], first[i]) << i;
  // The replay's last turn (implement's guidance) and the final message are
  // one user message, the replayed text first.
  std::string last = msgs[6]["content"];
  const std::string replayed = first[6]["content"].get<std::string>() + "\n\n";
  ASSERT_EQ(last.rfind(replayed, 0), 0u) << last;
  last = last.substr(replayed.size());
  size_t ctx = last.find("# Context\n");
  size_t guidance = last.find("# Movement: review (piece coding)");
  size_t task = last.find("# Task\nFix the bug\n\nThe user answered: use the new parser.");
  EXPECT_EQ(ctx, 0u);
  EXPECT_LT(ctx, guidance);
  EXPECT_LT(guidance, task);
  EXPECT_NE(task, std::string::npos);
  EXPECT_THAT(last, Not(HasSubstr("Parser half done.")));
}

TEST_F(PromptPaths, FollowUpAfterAnEmptyTranscriptStartsFresh) {
  auto msgs = Seed(Inputs(coding_, coding_tools_), PromptPath::kFollowUp);  // no file
  ASSERT_EQ(msgs.size(), 2u);
  EXPECT_EQ(msgs[1]["content"], kFinalUserWithHandoff);
}

TEST_F(PromptPaths, ToolsAndSystemAreIdenticalInEveryMovementOfAJob) {
  // Walk the whole coding piece the way the runner would: every request of
  // the job is sent with coding_tools_.bytes, and no movement rebuilds them.
  std::string tools_bytes = BuildPieceTools(coding_, PolicyTools())->bytes;
  std::string system;
  for (const auto& m : coding_.movements) {
    PromptInputs in = Inputs(coding_, coding_tools_);
    in.start_movement = m.name;
    auto msgs = Seed(in, PromptPath::kNewJob);
    if (system.empty()) system = msgs[0].dump();
    EXPECT_EQ(msgs[0].dump(), system) << m.name;
    EXPECT_EQ(BuildPieceTools(coding_, PolicyTools())->bytes, tools_bytes) << m.name;
  }
  EXPECT_EQ(coding_tools_.bytes, tools_bytes);
}

TEST_F(PromptPaths, EveryRequestOfAJobExtendsThePreviousOne) {
  // The requests of one coding job through plan -> implement -> review ->
  // fix -> review: each is the previous request plus appended messages, with
  // the same tools bytes — the shape that lets the server reuse its cache.
  std::vector<Json> msgs = Seed(Inputs(coding_, coding_tools_), PromptPath::kNewJob);
  std::vector<std::vector<Json>> requests = {msgs};
  int n = 0;
  auto call = [&](const std::string& name, const std::string& args, const std::string& result) {
    std::string id = "gen_call_" + std::to_string(++n);
    msgs.push_back(Asst("", {Call(id, name, args)}));
    msgs.push_back(Tool(id, result));
  };
  for (const char* next : {"implement", "review", "fix", "review"}) {
    call("ReadFile", R"({"path":"src/a.cc"})", "1: int main() {}");
    requests.push_back(msgs);
    call("transition", Json({{"next", next}}).dump(), "ok");
    msgs.push_back(TransitionGuidanceMessage(coding_, next));
    requests.push_back(msgs);
  }
  msgs.push_back(UserMessage("interjection: also update the README"));
  requests.push_back(msgs);
  for (size_t r = 1; r < requests.size(); ++r) {
    const auto& prev = requests[r - 1];
    const auto& cur = requests[r];
    ASSERT_GT(cur.size(), prev.size());
    for (size_t i = 0; i < prev.size(); ++i) {
      ASSERT_EQ(cur[i].dump(), prev[i].dump()) << "request " << r << " rewrote message " << i;
    }
  }
  size_t systems = 0;
  for (const auto& m : msgs) systems += m["role"] == "system";
  EXPECT_EQ(systems, 1u);
}

}  // namespace
}  // namespace maestro::engine
