// MessageStore: the live files stay exactly the request messages, survive
// torn appends and crashes between appends, and stream as a request body.
#include "context/message_store.h"

#include <gtest/gtest.h>

#include <fstream>

#include "core/durable_file.h"
#include "llm/request_body.h"
#include "support/json_lines.h"
#include "support/temp_dir.h"

namespace maestro::context {
namespace {

using maestro::testing::JsonLines;
using maestro::testing::ReadWholeFile;
using maestro::testing::TempDir;

Json UserMessageFor(const std::string& text) { return {{"role", "user"}, {"content", text}}; }

class MessageStoreTest : public ::testing::Test {
 protected:
  MessageStore Open() {
    auto ms = MessageStore::Open(dir_.path(), &clock_);
    EXPECT_TRUE(ms.ok()) << ms.status().ToString();
    return std::move(ms).value();
  }
  void Fill(MessageStore& ms) {
    ASSERT_TRUE(ms.StartThread("job1", {{"role", "system"}, {"content", "You are maestro."}}).ok());
    ASSERT_TRUE(ms.AddMessage({{"role", "user"}, {"content", "Fix the bug"}}, "job1").ok());
    Json call = {{"role", "assistant"},
                 {"content", nullptr},
                 {"tool_calls",
                  {{{"id", "c1"},
                    {"type", "function"},
                    {"function", {{"name", "ReadFile"}, {"arguments", "{\"path\":\"a\"}"}}}}}}};
    ASSERT_TRUE(ms.AddMessage(call, "job1").ok());
    ASSERT_TRUE(ms.AddMessage({{"role", "tool"}, {"tool_call_id", "c1"}, {"content", "abc"}},
                              "job1", "ReadFile")
                    .ok());
  }
  TempDir dir_;
  FakeClock clock_;
};

TEST_F(MessageStoreTest, CurrentHoldsExactlyOpenAiMessagesAndArchiveHoldsMetadata) {
  MessageStore ms = Open();
  Fill(ms);
  auto cur = JsonLines(ms.current_path());
  ASSERT_EQ(cur.size(), 4u);
  EXPECT_EQ(cur[3], (Json{{"role", "tool"}, {"tool_call_id", "c1"}, {"content", "abc"}}));
  for (const auto& m : cur) {
    EXPECT_FALSE(m.contains("seq"));
    EXPECT_FALSE(m.contains("timestamp"));
    EXPECT_FALSE(m.contains("tool_name"));
  }
  auto arch = JsonLines(ms.messages_path());
  ASSERT_EQ(arch.size(), 4u);
  EXPECT_EQ(arch[3]["seq"], 4);
  EXPECT_EQ(arch[3]["tool_name"], "ReadFile");
  EXPECT_EQ(arch[3]["job_id"], "job1");
  EXPECT_TRUE(arch[3].contains("timestamp"));
  EXPECT_GT(arch[3]["tokens"].get<int64_t>(), 0);
  EXPECT_EQ(ReadWholeFile(ms.transcript_path()), ReadWholeFile(ms.current_path()));
  EXPECT_EQ(ms.current_lines(), 4);
}

TEST_F(MessageStoreTest, ANewSeedRewritesCurrentAndTheTranscriptToTheSeededConversation) {
  MessageStore ms = Open();
  Fill(ms);
  Json sys = {{"role", "system"}, {"content", "You are maestro."}};
  Json replayed = {{"role", "user"}, {"content", "hello"}};
  Json user = {{"role", "user"}, {"content", "continue"}};
  ASSERT_TRUE(ms.SeedThread("job2", {sys, replayed, user}, "implement").ok());
  EXPECT_EQ(JsonLines(ms.current_path()).size(), 3u);
  // The replayed turns are held once: the old thread is not kept beside them.
  EXPECT_EQ(ReadWholeFile(ms.transcript_path()), ReadWholeFile(ms.current_path()));
  EXPECT_EQ(ms.thread(), 2);
  EXPECT_EQ(ms.thread_job_id(), "job2");
  EXPECT_EQ(ms.movement(), "implement");
  ASSERT_TRUE(ms.AddMessage(UserMessageFor("guidance"), "job2", {}, "review").ok());
  EXPECT_EQ(ms.movement(), "review");
  // Reopened (a recovered job), the thread's owner and movement come back.
  MessageStore again = Open();
  EXPECT_EQ(again.thread_job_id(), "job2");
  EXPECT_EQ(again.movement(), "review");
  EXPECT_FALSE(again.seed_incomplete());
  EXPECT_EQ(ReadWholeFile(again.transcript_path()), ReadWholeFile(again.current_path()));
}

TEST_F(MessageStoreTest, ACrashMidSeedKeepsTheTranscriptOfBeforeTheSeed) {
  std::string before;
  {
    MessageStore ms = Open();
    Fill(ms);
    before = ReadWholeFile(ms.transcript_path());
  }
  // The archive has the new thread start (3 lines announced) and one message:
  // the process died before the rest, and before the live files were replaced.
  {
    std::ofstream a(dir_.File("messages.jsonl"), std::ios::app);
    a << R"({"seq":5,"kind":"thread_start","role":"system","content":"s","job_id":"job2",)"
      << R"("thread":2,"tokens":3,"seed_lines":3,"rewrites_transcript":true})"
      << "\n";
    a << R"({"seq":6,"kind":"message","role":"user","content":"u","job_id":"job2",)"
      << R"("thread":2,"tokens":3})"
      << "\n";
  }
  MessageStore ms = Open();
  EXPECT_TRUE(ms.seed_incomplete());
  EXPECT_EQ(ms.thread_job_id(), "job2");
  EXPECT_EQ(ReadWholeFile(ms.transcript_path()), before);         // replay loses nothing
  EXPECT_FALSE(ms.AddMessage(UserMessageFor("x"), "job2").ok());  // seed again first
  ASSERT_TRUE(ms.SeedThread("job2", {{{"role", "system"}, {"content", "s"}}}, "").ok());
  EXPECT_FALSE(ms.seed_incomplete());
  EXPECT_TRUE(ms.AddMessage(UserMessageFor("x"), "job2").ok());
}

TEST_F(MessageStoreTest, ReopenKeepsSeqCountsAndTokensWithoutRepairs) {
  int64_t tokens;
  {
    MessageStore ms = Open();
    Fill(ms);
    tokens = ms.current_raw_tokens();
  }
  MessageStore ms = Open();
  EXPECT_FALSE(ms.repairs().current_rebuilt);
  EXPECT_FALSE(ms.repairs().transcript_rebuilt);
  EXPECT_EQ(ms.current_raw_tokens(), tokens);
  EXPECT_EQ(ms.count_messages(), 4);
  auto seq = ms.AddMessage({{"role", "assistant"}, {"content", "done"}}, "job1");
  ASSERT_TRUE(seq.ok());
  EXPECT_EQ(*seq, 5);
}

TEST_F(MessageStoreTest, TornAppendIsCutFromEveryFileOnOpen) {
  std::string before;
  {
    MessageStore ms = Open();
    Fill(ms);
    before = ReadWholeFile(ms.current_path());
  }
  // Crash mid-append of message 5: a torn line in all three files.
  for (const char* f : {"/messages.jsonl", "/current.jsonl", "/transcript.jsonl"}) {
    std::ofstream(dir_.path() + f, std::ios::app) << "{\"role\":\"assistant\",\"cont";
  }
  MessageStore ms = Open();
  EXPECT_GT(ms.repairs().torn_bytes_cut, 0u);
  EXPECT_EQ(ReadWholeFile(ms.current_path()), before);
  EXPECT_EQ(ReadWholeFile(ms.transcript_path()), before);
  EXPECT_EQ(ms.count_messages(), 4);
}

TEST_F(MessageStoreTest, CrashBetweenArchiveAndLiveAppendIsRepairedFromArchive) {
  std::string full;
  {
    MessageStore ms = Open();
    Fill(ms);
    full = ReadWholeFile(ms.current_path());
  }
  // The archive got message 4 but the live files did not.
  std::string cur = ReadWholeFile(dir_.File("current.jsonl"));
  std::string without_last = cur.substr(0, cur.rfind('\n', cur.size() - 2) + 1);
  ASSERT_TRUE(ReplaceFileContent(*Env::Default(), dir_.File("current.jsonl"), without_last).ok());
  ASSERT_TRUE(
      ReplaceFileContent(*Env::Default(), dir_.File("transcript.jsonl"), without_last).ok());
  MessageStore ms = Open();
  EXPECT_TRUE(ms.repairs().current_rebuilt);
  EXPECT_TRUE(ms.repairs().transcript_rebuilt);
  EXPECT_EQ(ReadWholeFile(ms.current_path()), full);
  EXPECT_EQ(ReadWholeFile(ms.transcript_path()), full);
}

TEST_F(MessageStoreTest, CurrentStreamsAsTheRequestMessages) {
  MessageStore ms = Open();
  Fill(ms);
  llm::RequestBodySpec spec;
  spec.model = "m";
  spec.messages_path = ms.current_path();
  auto body = llm::RequestBody::Open(spec);
  ASSERT_TRUE(body.ok());
  auto text = (*body)->ReadAll();
  ASSERT_TRUE(text.ok());
  Json req = Json::parse(*text);
  EXPECT_EQ(req["messages"].size(), 4u);
  EXPECT_EQ(req["messages"][0]["role"], "system");
  EXPECT_EQ(req["messages"][2]["tool_calls"][0]["function"]["name"], "ReadFile");
}

// The byte count the request body trusts instead of a scan: the file's
// size while the store wrote every line, after a reopen too; unknown (0)
// once current.jsonl holds a blank line.
TEST_F(MessageStoreTest, KnownBytesAreTheFileWhileTheStoreWroteEveryLine) {
  auto body_of = [](const std::string& path, uint64_t known) {
    llm::RequestBodySpec spec;
    spec.model = "m";
    spec.messages_path = path;
    spec.messages_known_bytes = known;
    auto body = llm::RequestBody::Open(spec);
    EXPECT_TRUE(body.ok());
    return *(*body)->ReadAll();
  };
  {
    MessageStore ms = Open();
    EXPECT_EQ(ms.current_known_bytes(), 0u);  // no thread yet
    Fill(ms);
    EXPECT_EQ(ms.current_known_bytes(), ReadWholeFile(ms.current_path()).size());
    EXPECT_EQ(body_of(ms.current_path(), ms.current_known_bytes()), body_of(ms.current_path(), 0));
  }
  MessageStore ms = Open();
  std::string lines = ReadWholeFile(ms.current_path());
  EXPECT_EQ(ms.current_known_bytes(), lines.size());
  ASSERT_TRUE(ms.ReplaceCurrent([&](const ByteSink& sink) { return sink(lines + "\n"); }).ok());
  EXPECT_EQ(ms.current_known_bytes(), 0u);
  EXPECT_EQ(ms.current_lines(), 4);
}

TEST_F(MessageStoreTest, EstimateIsCalibratedByServerCount) {
  MessageStore ms = Open();
  Fill(ms);
  int64_t raw = ms.EstimatePromptTokens(50);
  ms.ObserveUsage(raw * 2, 50);
  EXPECT_EQ(ms.EstimatePromptTokens(50), raw * 2);
  EXPECT_FALSE(ms.AddMessage({{"content", "no role"}}, "job1").ok());
}

}  // namespace
}  // namespace maestro::context
