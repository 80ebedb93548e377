// Transcript replay (seed 000 §3.3): one table row per rule, plus the file reader.
#include "engine/prompt/transcript_replay.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "chat_messages.h"
#include "support/temp_dir.h"

namespace maestro::engine {
namespace {

using test::Asst;
using test::Call;
using test::Sys;
using test::Tool;
using test::User;

struct ReplayRow {
  const char* name;
  std::vector<Json> in;
  bool keep_transitions;
  std::vector<Json> want;
};

class ReplayRules : public ::testing::TestWithParam<ReplayRow> {};

TEST_P(ReplayRules, Replays) {
  const auto& row = GetParam();
  ReplayResult r = ReplayMessages(row.in, {row.keep_transitions});
  EXPECT_EQ(Json(r.messages).dump(1), Json(row.want).dump(1));
}

std::vector<ReplayRow> Rows() {
  return {
      {"SystemLinesAreDropped",
       {Sys(), User("hi"), Asst("hello")},
       true,
       {User("hi"), Asst("hello")}},
      {"AllThreadsOldestFirst",
       {Sys(), User("one"), Asst("a1"), Sys(), User("two"), Asst("a2")},
       true,
       {User("one"), Asst("a1"), User("two"), Asst("a2")}},
      {"LinesBeforeTheFirstSystemLineFormAThread",
       {User("headless"), Sys(), User("two")},
       true,
       {User("headless"), User("two")}},
      {"SuccessfulCompleteIsDroppedWithItsResult",
       {Sys(), User("go"), Asst("", {Call("c1", "complete")}), Tool("c1", "Task completed")},
       true,
       {User("go")}},
      {"UnansweredCompleteIsDropped",
       {Sys(), User("go"), Asst("done", {Call("c1", "complete")})},
       true,
       {User("go"), Asst("done")}},
      {"CompleteDropsCoEmittedTransitionEvenWhenKept",
       {Sys(), User("go"), Asst("x", {Call("t1", "transition"), Call("c1", "complete")}),
        Tool("t1", "Moving to review"), Tool("c1", "ok")},
       true,
       {User("go"), Asst("x")}},
      {"ErrorAnsweredCompleteIsKept",
       {Sys(), User("go"), Asst("", {Call("c1", "complete")}),
        Tool("c1", "Error: children still running"), Asst("waiting")},
       true,
       {User("go"), Asst("", {Call("c1", "complete")}), Tool("c1", "Error: children still running"),
        Asst("waiting")}},
      {"ErrorAnsweredCompleteKeepsCoEmittedAnsweredTransition",
       {Sys(), Asst("", {Call("t1", "transition"), Call("c1", "complete")}), Tool("t1", "ok"),
        Tool("c1", "Error: pick one")},
       true,
       {Asst("", {Call("t1", "transition"), Call("c1", "complete")}), Tool("t1", "ok"),
        Tool("c1", "Error: pick one")}},
      {"AnsweredTransitionKeptInLastThreadOfSamePiece",
       {Sys(), User("go"), Asst("", {Call("t1", "transition")}), Tool("t1", "Now in review")},
       true,
       {User("go"), Asst("", {Call("t1", "transition")}), Tool("t1", "Now in review")}},
      {"TransitionDroppedForCrossPieceContinue",
       {Sys(), User("go"), Asst("moving on", {Call("t1", "transition")}),
        Tool("t1", "Now in review")},
       false,
       {User("go"), Asst("moving on")}},
      {"TransitionDroppedInOlderThreads",
       {Sys(), Asst("", {Call("t1", "transition")}), Tool("t1", "ok"), Sys(),
        Asst("", {Call("t2", "transition")}), Tool("t2", "ok")},
       true,
       {Asst("", {Call("t2", "transition")}), Tool("t2", "ok")}},
      {"UnansweredTransitionDropped", {Sys(), Asst("", {Call("t1", "transition")})}, true, {}},
      {"UnansweredRegularCallDroppedAnsweredKept",
       {Sys(), Asst("look", {Call("r1", "ReadFile"), Call("r2", "Grep")}), Tool("r1", "text")},
       true,
       {Asst("look", {Call("r1", "ReadFile")}), Tool("r1", "text")}},
      {"OrphanResultDropped",
       {Sys(), User("go"), Tool("nope", "stray"), Asst("ok")},
       true,
       {User("go"), Asst("ok")}},
      {"EmptyAssistantDropped",
       {Sys(), User("go"), Asst(""), Json{{"role", "assistant"}, {"content", nullptr}},
        Asst("  \n"), Asst("real")},
       true,
       {User("go"), Asst("real")}},
      {"AssistantEmptiedByDroppedCallsIsDropped",
       {Sys(), User("go"), Asst("", {Call("r1", "ReadFile")})},
       true,
       {User("go")}},
      {"ThreadsAreCleanedSeparatelySoReusedIdsDoNotMix",
       // Job 1 finished with gen_call_1 = complete; job 2 reuses gen_call_1
       // for a ReadFile. Cleaned together, job 2's result would pair with the
       // finished complete and keep it alive.
       {Sys(), User("one"), Asst("", {Call("gen_call_1", "complete")}), Sys(), User("two"),
        Asst("", {Call("gen_call_1", "ReadFile")}), Tool("gen_call_1", "file text")},
       true,
       {User("one"), User("two"), Asst("", {Call("gen_call_1", "ReadFile")}),
        Tool("gen_call_1", "file text")}},
      {"CollidingIdsAreRenamedPerThread",
       {Sys(), Asst("", {Call("gen_call_1", "ReadFile")}), Tool("gen_call_1", "a"), Sys(),
        Asst("", {Call("gen_call_1", "Grep"), Call("gen_call_2", "Glob")}), Tool("gen_call_1", "b"),
        Tool("gen_call_2", "c"), Sys(), Asst("", {Call("gen_call_1", "ListDir")}),
        Tool("gen_call_1", "d")},
       true,
       {Asst("", {Call("gen_call_1", "ReadFile")}), Tool("gen_call_1", "a"),
        Asst("", {Call("gen_call_1_t1", "Grep"), Call("gen_call_2", "Glob")}),
        Tool("gen_call_1_t1", "b"), Tool("gen_call_2", "c"),
        Asst("", {Call("gen_call_1_t2", "ListDir")}), Tool("gen_call_1_t2", "d")}},
      {"RenameSkipsNamesAlreadyTaken",
       {Sys(), Asst("", {Call("x", "ReadFile"), Call("x_t1", "Grep")}), Tool("x", "a"),
        Tool("x_t1", "b"), Sys(), Asst("", {Call("x", "Glob")}), Tool("x", "c")},
       true,
       {Asst("", {Call("x", "ReadFile"), Call("x_t1", "Grep")}), Tool("x", "a"), Tool("x_t1", "b"),
        Asst("", {Call("x_t1_2", "Glob")}), Tool("x_t1_2", "c")}},
      {"EmptyLastThreadMakesThePreviousOneOldAndDropsItsTransitions",
       {Sys(), User("go"), Asst("", {Call("t1", "transition")}), Tool("t1", "ok"), Sys()},
       true,
       {User("go")}},
      {"SameIdReusedInsideOneThreadPairsInOrder",
       {Sys(), Asst("", {Call("c", "ReadFile")}), Tool("c", "a"), Asst("", {Call("c", "complete")}),
        Tool("c", "done")},
       true,
       {Asst("", {Call("c", "ReadFile")}), Tool("c", "a")}},
  };
}

INSTANTIATE_TEST_SUITE_P(Rules, ReplayRules, ::testing::ValuesIn(Rows()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(ReplayRules, RenamingIsDeterministic) {
  std::vector<Json> in = {
      Sys(), Asst("", {Call("gen_call_1", "ReadFile")}), Tool("gen_call_1", "a"),
      Sys(), Asst("", {Call("gen_call_1", "ReadFile")}), Tool("gen_call_1", "b")};
  EXPECT_EQ(Json(ReplayMessages(in, {}).messages).dump(),
            Json(ReplayMessages(in, {}).messages).dump());
  EXPECT_EQ(ReplayMessages(in, {}).stats.renamed_ids, 1);
}

// Rule 4b (issue 45 item 1): an answered ASK keeps its call and result, so
// the user turn after it answers a question the model can see.
TEST(ReplayRules, AnAnsweredAskKeepsItsQuestionAndDropsItsTransitions) {
  const std::string ask =
      R"({"status":"needs_user_input","result":"r","question":"Which colour?"})";
  std::vector<Json> in = {Sys(),
                          User("paint"),
                          Asst("", {Call("t1", "transition"), Call("c1", "complete", ask)}),
                          Tool("t1", "ok"),
                          Tool("c1", "Movement finished with status needs_user_input."),
                          Sys(),
                          User("blue"),
                          Asst("", {Call("c2", "complete", R"({"status":"success"})")}),
                          Tool("c2", "Movement finished with status success.")};
  ReplayResult r = ReplayMessages(in, {});
  std::vector<Json> want = {User("paint"), Asst("", {Call("c1", "complete", ask)}),
                            Tool("c1", "Movement finished with status needs_user_input."),
                            User("blue")};
  EXPECT_EQ(Json(r.messages).dump(1), Json(want).dump(1));
  EXPECT_EQ(r.stats.kept_asks, 1);
  EXPECT_EQ(r.stats.dropped_completes, 1);
  EXPECT_EQ(r.stats.dropped_transitions, 1);
  EXPECT_THAT(Json(r.messages).dump(), ::testing::HasSubstr("Which colour?"));
}

TEST(ReplayRules, AnUnansweredAskIsDroppedLikeAnyUnansweredCall) {
  const std::string ask = R"({"status":"needs_user_input","question":"Which colour?"})";
  std::vector<Json> in = {Sys(), User("paint"), Asst("", {Call("c1", "complete", ask)})};
  ReplayResult r = ReplayMessages(in, {});
  EXPECT_EQ(Json(r.messages).dump(), Json(std::vector<Json>{User("paint")}).dump());
  EXPECT_EQ(r.stats.kept_asks, 0);
}

TEST(ReplayRules, StatsCountWhatWasDropped) {
  std::vector<Json> in = {
      Sys(),
      Asst("x", {Call("t1", "transition"), Call("c1", "complete"), Call("r1", "ReadFile")}),
      Tool("t1", "ok"),
      Tool("c1", "done"),
      Tool("zz", "orphan"),
      Asst(""),
      Sys()};
  ReplayResult r = ReplayMessages(in, {});
  EXPECT_EQ(r.stats.threads, 2);
  EXPECT_EQ(r.stats.dropped_completes, 1);
  EXPECT_EQ(r.stats.dropped_transitions, 1);
  EXPECT_EQ(r.stats.dropped_unanswered, 1);
  EXPECT_EQ(r.stats.dropped_orphan_results, 1);
  EXPECT_EQ(r.stats.dropped_empty_assistants, 1);
}

TEST(ReplayFile, ReadsLineByLineAndSkipsATornLastLine) {
  testing::TempDir dir;
  {
    std::ofstream out(dir.File("transcript.jsonl"));
    out << Sys().dump() << "\n"
        << User("go").dump() << "\n\n"
        << Asst("hi").dump() << "\n"
        << R"({"role":"assistant","content":"tor)";
  }
  auto r = ReplayTranscriptFile(dir.File("transcript.jsonl"), {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Json(r->messages), Json({User("go"), Asst("hi")}));
  EXPECT_EQ(r->stats.skipped_lines, 1);
}

TEST(ReplayFile, MissingTranscriptReplaysNothing) {
  auto r = ReplayTranscriptFile("/nonexistent/transcript.jsonl", {});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->messages.empty());
}

}  // namespace
}  // namespace maestro::engine
