// Integration: a scripted conversation through the real HttpLlmClient and
// maestro-fakellm. The live requests stream current.jsonl; compression asks
// for its summary in a separate request built from files (the server's first
// attempt fails and the client retries); the conversation after compression
// still starts with the system message and is accepted by the server; a
// WriteHandoff with next_steps is rejected and a valid one parsed.
#include <gtest/gtest.h>
#include <httplib.h>

#include <fstream>

#include "context/compressor.h"
#include "context/message_store.h"
#include "context/record_stores.h"
#include "engine/handoff/document.h"
#include "fakellm_process.h"
#include "llm/llm_client.h"
#include "support/temp_dir.h"

namespace maestro::context {
namespace {

using engine::ParseHandoff;
using maestro::testing::FakeLlmProcess;
using maestro::testing::TempDir;

Json ServerRequests(const FakeLlmProcess& f) {
  httplib::Client c("127.0.0.1", f.port());
  auto res = c.Get("/v1/_requests");
  return res && res->status == 200 ? Json::parse(res->body)["requests"] : Json::array();
}

TEST(ContextFakeLlmTest, ScriptedConversationCompressesAndHandsOff) {
  TempDir dir;
  std::ofstream(dir.File("script.json")) << R"({"replies":[
    {"match":{"system_contains":"SUMMARIZE-FACTS"},"status":500,"error_message":"busy"},
    {"match":{"system_contains":"SUMMARIZE-FACTS"},"text":"Files a.cc..k.cc were read; no edits yet."},
    {"match":{"last_message_contains":"WriteHandoff"},
     "tool_calls":[{"name":"WriteHandoff","arguments":{"spec_ref":"spec.md",
       "status":{"completed":[],"in_progress":[],"pending":["all"]},"decisions":[],"blockers":[],
       "files_changed":[],"next_steps":["edit a.cc"]}}]},
    {"match":{"last_message_contains":"not allowed"},
     "tool_calls":[{"name":"WriteHandoff","arguments":{"spec_ref":"spec.md",
       "status":{"completed":["read a.cc..k.cc"],"in_progress":[],"pending":["all edits"]},
       "decisions":[],"blockers":[],"files_changed":[]}}]}
  ],"default":{"text":"ok"}})";
  FakeLlmProcess f({"--script", dir.File("script.json")});
  llm::ModelProfile p;
  p.base_url = f.base_url();
  p.model = "fake";
  p.backoff_base_ms = 10;
  p.backoff_max_ms = 20;
  llm::HttpLlmClient client(p);

  FakeClock clock;
  auto ms = MessageStore::Open(dir.path(), &clock);
  auto ss = SummaryStore::Open(dir.path(), &clock);
  ASSERT_TRUE(ms.ok() && ss.ok());
  ASSERT_TRUE(ms->StartThread("j1", {{"role", "system"}, {"content", "You are maestro."}}).ok());
  ASSERT_TRUE(ms->AddMessage({{"role", "user"}, {"content", "Document the code."}}, "j1").ok());
  for (int i = 0; i < 11; ++i) {
    std::string id = "call_" + std::to_string(i);
    ASSERT_TRUE(ms->AddMessage({{"role", "assistant"},
                                {"content", "reading"},
                                {"tool_calls",
                                 {{{"id", id},
                                   {"type", "function"},
                                   {"function", {{"name", "ReadFile"}, {"arguments", "{}"}}}}}}},
                               "j1")
                    .ok());
    ASSERT_TRUE(
        ms->AddMessage(
              {{"role", "tool"}, {"tool_call_id", id}, {"content", std::string(2000, 'a' + i)}},
              "j1", "ReadFile")
            .ok());
  }
  // A live call streams current.jsonl and calibrates the estimate.
  llm::ChatRequest live;
  live.messages_path = ms->current_path();
  auto r1 = client.Chat(live, nullptr, nullptr);
  ASSERT_TRUE(r1.ok()) << r1.status.ToString();
  ASSERT_TRUE(ms->AddMessage({{"role", "assistant"}, {"content", r1.response.content}}, "j1").ok());

  ContextConfig cfg;
  cfg.context_length = 8000;
  cfg.summary_prompt = "SUMMARIZE-FACTS only.";
  ContextCompressor comp(&client, cfg);
  ASSERT_TRUE(comp.ShouldCompress(ms->EstimatePromptTokens(0)));
  auto out = comp.Compress(*ms, *ss, "j1", dir.File("compress"), 0);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_FALSE(comp.ShouldCompress(ms->EstimatePromptTokens(0)));

  // Handoff request -> rejected document -> valid document.
  ASSERT_TRUE(ms->AddMessage({{"role", "user"}, {"content", "Call WriteHandoff now."}}, "j1").ok());
  auto r2 = client.Chat(live, nullptr, nullptr);
  ASSERT_TRUE(r2.ok());
  ASSERT_EQ(r2.response.tool_calls.size(), 1u);
  auto bad = ParseHandoff(Json(r2.response.tool_calls[0].arguments));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "next_steps");
  std::string call_id = r2.response.tool_calls[0].id;
  ASSERT_TRUE(ms->AddMessage({{"role", "assistant"},
                              {"content", nullptr},
                              {"tool_calls",
                               {{{"id", call_id},
                                 {"type", "function"},
                                 {"function",
                                  {{"name", "WriteHandoff"},
                                   {"arguments", r2.response.tool_calls[0].arguments}}}}}}},
                             "j1")
                  .ok());
  ASSERT_TRUE(ms->AddMessage({{"role", "tool"},
                              {"tool_call_id", call_id},
                              {"content", "Error: " + bad.status().message()}},
                             "j1", "WriteHandoff")
                  .ok());
  auto r3 = client.Chat(live, nullptr, nullptr);
  ASSERT_TRUE(r3.ok());
  ASSERT_EQ(r3.response.tool_calls.size(), 1u);
  auto good = ParseHandoff(Json(r3.response.tool_calls[0].arguments));
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  EXPECT_EQ(good->pending, std::vector<std::string>{"all edits"});

  // What the server saw.
  Json reqs = ServerRequests(f);
  ASSERT_EQ(reqs.size(), 5u);  // live, summary x2 (500 then ok), handoff x2
  const Json& summary_req = reqs[2]["body"];
  ASSERT_EQ(summary_req["messages"].size(), 2u);
  EXPECT_EQ(summary_req["messages"][0]["content"], "SUMMARIZE-FACTS only.");
  EXPECT_NE(summary_req["messages"][1]["content"].get<std::string>().find("Document the code."),
            std::string::npos);
  EXPECT_FALSE(summary_req.contains("tools"));
  const Json& after = reqs[3]["body"]["messages"];
  EXPECT_EQ(after[0], (Json{{"role", "system"}, {"content", "You are maestro."}}));
  EXPECT_NE(after[1]["content"].get<std::string>().find("a.cc..k.cc were read"), std::string::npos);
  EXPECT_LT(after.size(), reqs[0]["body"]["messages"].size());
}

}  // namespace
}  // namespace maestro::context
