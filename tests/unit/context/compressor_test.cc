// ContextCompressor: keeps the system message first and every tool
// call/result pair whole, asks for the summary in a separate call built from
// files, never stores a failed summary, and ends below the threshold.
#include "context/compressor.h"

#include <gtest/gtest.h>

#include <set>

#include "core/durable_file.h"
#include "support/json_lines.h"
#include "support/scripted_llm.h"
#include "support/temp_dir.h"

namespace maestro::context {
namespace {

using maestro::testing::JsonLines;
using maestro::testing::ReadWholeFile;
using maestro::testing::ScriptedLlm;
using maestro::testing::TempDir;

// Every tool result follows an assistant message that called it, and every
// call before the last assistant turn has its result.
void ExpectPairsIntact(const std::vector<Json>& msgs) {
  std::set<std::string> open;
  for (size_t i = 0; i < msgs.size(); ++i) {
    const Json& m = msgs[i];
    if (m["role"] == "assistant" && m.contains("tool_calls")) {
      EXPECT_TRUE(open.empty()) << "calls left unanswered before line " << i;
      open.clear();
      for (const auto& c : m["tool_calls"]) open.insert(c["id"].get<std::string>());
    } else if (m["role"] == "tool") {
      std::string id = m["tool_call_id"];
      EXPECT_TRUE(open.count(id)) << "orphan tool result " << id << " at line " << i;
      open.erase(id);
    }
  }
}

class CompressorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    llm_.usage = {100, 0, 20, true};
    auto ms = MessageStore::Open(dir_.path(), &clock_);
    ASSERT_TRUE(ms.ok());
    messages_ = std::move(ms).value();
    auto ss = SummaryStore::Open(dir_.path(), &clock_);
    ASSERT_TRUE(ss.ok());
    summaries_ = std::move(ss).value();
    config_.context_length = 4000;
    config_.keep_recent_messages = 5;
    config_.summary_prompt = "SUMMARIZE-FACTS-PROMPT";
    ASSERT_TRUE(
        messages_.StartThread("j1", {{"role", "system"}, {"content", "You are maestro."}}).ok());
    ASSERT_TRUE(
        messages_.AddMessage({{"role", "user"}, {"content", "Refactor the parser"}}, "j1").ok());
  }

  // One turn: an assistant calling `calls` tools, their results (~150 tokens each).
  void AddTurn(int calls) {
    Json tc = Json::array();
    for (int k = 0; k < calls; ++k) {
      std::string id = "call_" + std::to_string(next_id_++);
      tc.push_back(
          {{"id", id},
           {"type", "function"},
           {"function", {{"name", "ReadFile"}, {"arguments", "{\"path\":\"f" + id + "\"}"}}}});
    }
    ASSERT_TRUE(
        messages_
            .AddMessage({{"role", "assistant"}, {"content", "reading"}, {"tool_calls", tc}}, "j1")
            .ok());
    for (const auto& c : tc) {
      Json r = {{"role", "tool"},
                {"tool_call_id", c["id"]},
                {"content", "content of " + std::string(c["id"]) + std::string(600, 'x')}};
      ASSERT_TRUE(messages_.AddMessage(r, "j1", "ReadFile").ok());
    }
  }

  TempDir dir_;
  FakeClock clock_;
  MessageStore messages_;
  SummaryStore summaries_;
  ContextConfig config_;
  ScriptedLlm llm_;
  int next_id_ = 1;
};

TEST(ChooseTailStartTest, MovesTheCutBackToTheCallingAssistant) {
  std::vector<std::string> roles = {"system", "user", "assistant", "tool",
                                    "tool",   "tool", "assistant", "tool"};
  EXPECT_EQ(ChooseTailStart(roles, 3), 2u);
  EXPECT_EQ(ChooseTailStart(roles, 2), 6u);
  EXPECT_EQ(ChooseTailStart({"system", "user"}, 5), 0u);
  // Only tool results between the head and the cut: nothing can be summarized.
  EXPECT_EQ(ChooseTailStart({"system", "assistant", "tool", "tool"}, 1), 0u);
}

TEST_F(CompressorTest, KeepsSystemFirstAndPairsWholeAndEndsBelowThreshold) {
  for (int i = 0; i < 12; ++i) AddTurn(i % 3 + 1);  // 1..3 parallel calls per turn
  ContextCompressor comp(&llm_, config_);
  int64_t before = messages_.EstimatePromptTokens(0);
  ASSERT_TRUE(comp.ShouldCompress(before)) << before;
  std::string system_line = ReadWholeFile(messages_.current_path())
                                .substr(0, ReadWholeFile(messages_.current_path()).find('\n') + 1);

  llm_.Text("The user asked to refactor the parser; files f1..f20 were read.");
  auto out = comp.Compress(messages_, summaries_, "j1", dir_.File("compress"), 0);
  ASSERT_TRUE(out.ok()) << out.status().ToString();

  std::string cur = ReadWholeFile(messages_.current_path());
  EXPECT_EQ(cur.substr(0, system_line.size()), system_line);
  auto msgs = JsonLines(messages_.current_path());
  EXPECT_EQ(msgs[0]["role"], "system");
  EXPECT_EQ(msgs[1]["role"], "user");
  EXPECT_NE(msgs[1]["content"].get<std::string>().find("files f1..f20 were read"),
            std::string::npos);
  for (size_t i = 1; i < msgs.size(); ++i) EXPECT_NE(msgs[i]["role"], "system");
  ExpectPairsIntact(msgs);
  EXPECT_NE(msgs[2]["role"], "tool");  // the tail starts at a turn boundary

  // Recomputed, so the next check does not fire again.
  EXPECT_EQ(out->tokens_after, messages_.EstimatePromptTokens(0));
  EXPECT_LT(out->tokens_after, out->tokens_before);
  EXPECT_FALSE(comp.ShouldCompress(messages_.EstimatePromptTokens(0)));
  EXPECT_FALSE(out->still_over_threshold);

  // The summary call was a separate request built from files.
  ASSERT_EQ(llm_.requests.size(), 1u);
  auto req = Json::parse(llm_.request_files[0].substr(0, llm_.request_files[0].find('\n')));
  EXPECT_EQ(req["role"], "system");
  EXPECT_EQ(req["content"], "SUMMARIZE-FACTS-PROMPT");
  EXPECT_NE(llm_.request_files[0].find("Refactor the parser"), std::string::npos);
  EXPECT_NE(llm_.request_files[0].find("call_1"), std::string::npos);
  EXPECT_EQ(cur.find("SUMMARIZE-FACTS-PROMPT"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir_.File("compress")));

  auto rec = summaries_.Latest();
  ASSERT_TRUE(rec.ok() && rec->has_value());
  const SummaryRecord& r = **rec;
  EXPECT_EQ(r.id, 1);
  EXPECT_EQ(r.start_seq, 2);  // the user instruction (seq 1 is the system line)
  EXPECT_EQ(r.end_seq, out->end_seq);
  EXPECT_GT(r.end_seq, r.start_seq);
  EXPECT_EQ(r.tokens_before, before);
  EXPECT_EQ(r.tokens_after, out->tokens_after);
  EXPECT_NEAR(r.ratio, static_cast<double>(r.summary_tokens) / r.original_tokens, 1e-9);
  EXPECT_EQ(ReadWholeFile(messages_.transcript_path()), cur);
}

TEST_F(CompressorTest, FailedSummaryIsRetriedThenReportedAndNothingChanges) {
  for (int i = 0; i < 12; ++i) AddTurn(1);
  std::string cur = ReadWholeFile(messages_.current_path());
  int64_t archived = messages_.count_messages();
  ContextCompressor comp(&llm_, config_);
  for (int i = 0; i < 3; ++i) llm_.Fail();
  auto out = comp.Compress(messages_, summaries_, "j1", dir_.File("compress"), 0);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(out.status().message().find("3 attempts"), std::string::npos);
  EXPECT_EQ(llm_.requests.size(), 3u);
  EXPECT_EQ(ReadWholeFile(messages_.current_path()), cur);
  EXPECT_EQ(summaries_.count(), 0);
  EXPECT_EQ(messages_.count_messages(), archived);

  llm_.Fail();
  llm_.Text("facts");
  auto ok = comp.Compress(messages_, summaries_, "j1", dir_.File("compress"), 0);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->attempts, 2);
}

TEST_F(CompressorTest, EmptySummaryIsNotStored) {
  for (int i = 0; i < 12; ++i) AddTurn(1);
  config_.summary_max_attempts = 2;
  ContextCompressor comp(&llm_, config_);
  llm_.Text("   ");
  llm_.Text("");
  auto out = comp.Compress(messages_, summaries_, "j1", dir_.File("compress"), 0);
  EXPECT_FALSE(out.ok());
  EXPECT_EQ(summaries_.count(), 0);
}

TEST_F(CompressorTest, RepeatedCompressionSurvivesReopen) {
  ContextCompressor comp(&llm_, config_);
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 10; ++i) AddTurn(2);
    llm_.Text("summary round " + std::to_string(round));
    auto out = comp.Compress(messages_, summaries_, "j1", dir_.File("compress"), 0);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(out->start_seq, 2);  // a later summary still covers from the start
  }
  std::string cur = ReadWholeFile(messages_.current_path());
  auto entries = messages_.CurrentEntries();
  ASSERT_TRUE(entries.ok());
  EXPECT_EQ(static_cast<int64_t>(entries->size()), messages_.current_lines());
  EXPECT_TRUE((*entries)[1].is_summary);
  ExpectPairsIntact(JsonLines(messages_.current_path()));

  auto reopened = MessageStore::Open(dir_.path(), &clock_);
  ASSERT_TRUE(reopened.ok());
  EXPECT_FALSE(reopened->repairs().current_rebuilt);
  EXPECT_FALSE(reopened->repairs().transcript_rebuilt);
  EXPECT_EQ(ReadWholeFile(reopened->current_path()), cur);
  EXPECT_EQ(summaries_.count(), 3);
}

TEST_F(CompressorTest, CrashAfterArchivingSummaryRebuildsCurrentFromArchive) {
  for (int i = 0; i < 12; ++i) AddTurn(1);
  ContextCompressor comp(&llm_, config_);
  llm_.Text("the facts");
  std::string old_cur = ReadWholeFile(messages_.current_path());
  ASSERT_TRUE(comp.Compress(messages_, summaries_, "j1", dir_.File("compress"), 0).ok());
  std::string new_cur = ReadWholeFile(messages_.current_path());
  // Simulate the crash window: the summary is archived, current.jsonl and the
  // transcript still hold the old conversation.
  ASSERT_TRUE(ReplaceFileContent(*Env::Default(), messages_.current_path(), old_cur).ok());
  ASSERT_TRUE(ReplaceFileContent(*Env::Default(), messages_.transcript_path(), old_cur).ok());
  auto reopened = MessageStore::Open(dir_.path(), &clock_);
  ASSERT_TRUE(reopened.ok());
  EXPECT_TRUE(reopened->repairs().current_rebuilt);
  EXPECT_EQ(ReadWholeFile(reopened->current_path()), new_cur);
  EXPECT_EQ(ReadWholeFile(reopened->transcript_path()), new_cur);
}

}  // namespace
}  // namespace maestro::context
