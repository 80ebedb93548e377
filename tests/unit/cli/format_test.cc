// The CLI's terminal text: relative ages, aligned tables, task summaries
// and the exact commands printed for a question or a pending request.
#include "cli/format.h"

#include <gtest/gtest.h>

namespace maestro::cli {
namespace {

constexpr int64_t kNow = 1'700'000'000'000;

TEST(RelativeAge, CountsSecondsMinutesHoursDays) {
  EXPECT_EQ(RelativeAge(kNow, 0), "-");
  EXPECT_EQ(RelativeAge(kNow, kNow - 2'000), "just now");
  EXPECT_EQ(RelativeAge(kNow, kNow + 60'000), "just now") << "a clock ahead is not negative";
  EXPECT_EQ(RelativeAge(kNow, kNow - 42'000), "42s ago");
  EXPECT_EQ(RelativeAge(kNow, kNow - 3 * 60'000 - 59'000), "3m ago");
  EXPECT_EQ(RelativeAge(kNow, kNow - 5 * 3'600'000), "5h ago");
  EXPECT_EQ(RelativeAge(kNow, kNow - 2 * 86'400'000 - 1), "2d ago");
}

TEST(Table, PadsColumnsToTheWidestCellCountingCharacters) {
  std::string t = Table({{"ID", "TITLE"}, {"abc", "x"}, {"é", "long title"}});
  EXPECT_EQ(t, "ID   TITLE\nabc  x\né    long title\n");
}

TEST(TaskTitle, PrefersTheTitleElseTheFirstInstructionLineCut) {
  EXPECT_EQ(TaskTitle(Json{{"title", "mine"}, {"instruction", "other"}}), "mine");
  EXPECT_EQ(TaskTitle(Json{{"title", ""}, {"instruction", "first line\nsecond"}}), "first line");
  EXPECT_EQ(TaskTitle(Json{{"instruction", "abcdefghij"}}, 4), "abcd…");
}

TEST(TaskListText, OneAlignedRowPerTaskWithShortIds) {
  Json list = {{"tasks",
                {{{"id", "0123456789abcdef"},
                  {"status", "succeeded"},
                  {"piece", "chat"},
                  {"title", "say hi"},
                  {"created_at", kNow - 180'000}},
                 {{"id", "fedcba9876543210"},
                  {"status", "waiting_human"},
                  {"piece", "coding"},
                  {"title", ""},
                  {"instruction", "fix the bug\nin detail"},
                  {"created_at", kNow - 7'200'000}}}}};
  EXPECT_EQ(TaskListText(list, kNow),
            "ID        STATUS         PIECE   AGE     TITLE\n"
            "01234567  succeeded      chat    3m ago  say hi\n"
            "fedcba98  waiting_human  coding  2h ago  fix the bug\n");
  EXPECT_EQ(TaskListText(Json{{"tasks", Json::array()}}, kNow), "no tasks\n");
}

TEST(DecideCommands, NameTheTaskRequestAndKind) {
  std::string tool = DecideCommands("T1", Json{{"id", "R1"}, {"kind", "tool"}}, "  ");
  EXPECT_NE(tool.find("  approve: maestro task approve T1 R1 --kind tool\n"), std::string::npos);
  EXPECT_NE(tool.find("maestro task approve T1 R1 --kind tool --scope task"), std::string::npos);
  EXPECT_NE(tool.find("  deny:    maestro task deny T1 R1 --kind tool\n"), std::string::npos);
  std::string pkg = DecideCommands("T1", Json{{"id", "R2"}, {"kind", "package"}}, "");
  EXPECT_NE(pkg.find("maestro task approve T1 R2 --kind package\n"), std::string::npos);
  EXPECT_EQ(pkg.find("--scope"), std::string::npos) << "scope is for tool grants";
  EXPECT_EQ(AnswerCommand("T1"), "maestro task comment T1 \"<answer>\"");
}

TEST(TaskShowText, SummarisesJobsQuestionRequestsAndResult) {
  Json detail = {
      {"task",
       {{"id", "T-1"},
        {"title", "colours"},
        {"status", "waiting_human"},
        {"piece", "chat"},
        {"space", ""},
        {"created_at", kNow - 60'000}}},
      {"jobs",
       {{{"id", "job-one-xyz"},
         {"status", "failed"},
         {"attempt", 3},
         {"error_message", "model down"},
         {"created_at", kNow - 60'000}},
        {{"id", "job-two-xyz"},
         {"status", "waiting_human"},
         {"attempt", 1},
         {"wait_reason", "tool_request"},
         {"created_at", kNow - 10'000}}}},
      {"latest_job",
       {{"id", "job-two-xyz"}, {"status", "waiting_human"}, {"wait_reason", "tool_request"}}},
      {"pending_requests",
       {{{"id", "R-9"}, {"kind", "tool"}, {"name", "RunCommand"}, {"reason", "needs a shell"}}}}};
  std::string s = TaskShowText(detail, Json(), kNow);
  EXPECT_EQ(s.rfind("colours\n", 0), 0u) << s;
  EXPECT_NE(s.find("  status   waiting_human\n"), std::string::npos) << s;
  EXPECT_NE(s.find("  space    -\n"), std::string::npos) << s;
  EXPECT_NE(s.find("  created  1m ago\n"), std::string::npos) << s;
  EXPECT_NE(s.find("job-one-  failed"), std::string::npos) << s;
  EXPECT_NE(s.find("error: model down"), std::string::npos) << s;
  EXPECT_NE(s.find("waits for: tool_request"), std::string::npos) << s;
  EXPECT_NE(s.find("tool request R-9: RunCommand — needs a shell\n"), std::string::npos) << s;
  EXPECT_NE(s.find("approve: maestro task approve T-1 R-9 --kind tool\n"), std::string::npos) << s;

  detail["latest_job"] = {
      {"id", "job-two-xyz"}, {"status", "waiting_human"}, {"wait_reason", "ask"}};
  detail["pending_requests"] = Json::array();
  Json comments = {{{"kind", "question"}, {"job_id", "job-two-xyz"}, {"body", "which colour?"}}};
  s = TaskShowText(detail, comments, kNow);
  EXPECT_NE(s.find("question:\n  which colour?\n  answer: maestro task comment T-1 \"<answer>\"\n"),
            std::string::npos)
      << s;

  detail["latest_job"] = {{"id", "job-two-xyz"}, {"status", "succeeded"}, {"result", "blue\nsky"}};
  s = TaskShowText(detail, Json(), kNow);
  EXPECT_NE(s.find("result:\n  blue\n  sky\n"), std::string::npos) << s;
  EXPECT_EQ(s.find("question:"), std::string::npos) << s;
}

TEST(ToolCallLine, OneLineCutWithTheErrorMarked) {
  EXPECT_EQ(ToolCallLine("ListDir", "{\"path\":\".\"}", false), "[tool ListDir] {\"path\":\".\"}");
  EXPECT_EQ(ToolCallLine("ReadFile", "", true), "[tool ReadFile] (error)");
  std::string line =
      ToolCallLine("Write", "{\"text\":\"a\nb" + std::string(200, 'x') + "\"}", false);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_LT(line.size(), 120u);
  EXPECT_EQ(line.substr(line.size() - 3), "...");
}

}  // namespace
}  // namespace maestro::cli
