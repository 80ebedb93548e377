#include "fakellm/prompt_cache.h"

#include <gtest/gtest.h>

namespace maestro::fakellm {
namespace {

Json Tool(const std::string& name, const std::string& desc) {
  return {
      {"type", "function"},
      {"function", {{"name", name}, {"description", desc}, {"parameters", {{"type", "object"}}}}}};
}

Json Request(const std::string& system, const Json& tools, int turns) {
  Json msgs = Json::array({{{"role", "system"}, {"content", system}}});
  for (int i = 0; i < turns; ++i) {
    msgs.push_back({{"role", "user"}, {"content", "question number " + std::to_string(i)}});
    msgs.push_back({{"role", "assistant"}, {"content", "answer " + std::to_string(i)}});
  }
  msgs.push_back({{"role", "user"}, {"content", "final question"}});
  return {{"messages", msgs}, {"tools", tools}};
}

TEST(RenderPrompt, Qwen3OrderPutsToolsInsideTheSystemTurn) {
  Json req = Request("SYSTEM TEXT", Json::array({Tool("ReadFile", "reads")}), 0);
  std::string p = RenderPrompt(req);
  EXPECT_EQ(p.rfind("<|im_start|>system\nSYSTEM TEXT\n\n# Tools", 0), 0u);
  size_t tools = p.find("\"name\":\"ReadFile\"");
  size_t user = p.find("<|im_start|>user\nfinal question<|im_end|>");
  ASSERT_NE(tools, std::string::npos);
  ASSERT_NE(user, std::string::npos);
  EXPECT_LT(tools, user);
  EXPECT_TRUE(p.ends_with("<|im_start|>assistant\n"));
}

TEST(RenderPrompt, ToolCallsAndGroupedToolResults) {
  Json req = {{"messages",
               {{{"role", "user"}, {"content", "go"}},
                {{"role", "assistant"},
                 {"content", nullptr},
                 {"tool_calls",
                  {{{"id", "1"},
                    {"type", "function"},
                    {"function", {{"name", "A"}, {"arguments", "{\"x\":1}"}}}}}}},
                {{"role", "tool"}, {"tool_call_id", "1"}, {"content", "r1"}},
                {{"role", "tool"}, {"tool_call_id", "2"}, {"content", "r2"}}}}};
  std::string p = RenderPrompt(req);
  EXPECT_NE(
      p.find("<tool_call>\n{\"name\": \"A\", \"arguments\": {\"x\":1}}\n</tool_call><|im_end|>"),
      std::string::npos);
  EXPECT_NE(p.find("<|im_start|>user\n<tool_response>\nr1\n</tool_response>\n<tool_response>\nr2\n"
                   "</tool_response><|im_end|>"),
            std::string::npos);
}

TEST(Tokenize, DeterministicAndPrefixStable) {
  std::string a = "The quick brown fox jumps over 12345 lazy dogs.\n\n";
  EXPECT_EQ(Tokenize(a), Tokenize(a));
  EXPECT_EQ(Tokenize("<|im_start|>").size(), 1u);
  Tokens t1 = Tokenize(a + "tail one");
  Tokens t2 = Tokenize(a + "tail two");
  size_t lcp = CommonPrefix(t1, t2);
  EXPECT_GE(lcp, Tokenize(a).size());
  EXPECT_LT(lcp, t1.size());
  // About 4 characters per token on prose.
  std::string prose(4000, 'a');
  EXPECT_EQ(Tokenize(prose).size(), 1000u);
}

TEST(PromptCache, AppendReusesAlmostEverything) {
  Json tools = Json::array({Tool("ReadFile", "Reads a file."), Tool("Grep", "Searches.")});
  PromptCache cache(4, 0.5);
  Tokens p1 = Tokenize(RenderPrompt(Request("You are a coding agent.", tools, 5)));
  CacheFigures f1 = cache.Process(p1, {});
  EXPECT_EQ(f1.cache_n, 0);
  EXPECT_EQ(f1.prompt_n, f1.prompt_tokens);
  Json r2 = Request("You are a coding agent.", tools, 5);
  r2["messages"].push_back({{"role", "assistant"}, {"content", "more"}});
  r2["messages"].push_back({{"role", "user"}, {"content", "and again"}});
  Tokens p2 = Tokenize(RenderPrompt(r2));
  CacheFigures f2 = cache.Process(p2, {});
  EXPECT_EQ(f2.slot, f1.slot);
  // The common prefix is all of p1 but its trailing generation prompt.
  EXPECT_GE(f2.cache_n, static_cast<int64_t>(p1.size()) - 6);
  EXPECT_EQ(f2.cache_n + f2.prompt_n, f2.prompt_tokens);
}

TEST(PromptCache, IdenticalPromptReusesAllButOneToken) {
  PromptCache cache(1, 0.5);
  Tokens p = Tokenize(RenderPrompt(Request("S", Json::array(), 2)));
  (void)cache.Process(p, {});
  CacheFigures f = cache.Process(p, {});
  EXPECT_EQ(f.cache_n, static_cast<int64_t>(p.size()) - 1);
  EXPECT_EQ(f.prompt_n, 1);
}

TEST(PromptCache, ToolChangeKeepsOnlyTheSystemPrefix) {
  std::string system(3000, 'x');  // a big system text, so the slot is still similar
  for (size_t i = 0; i < system.size(); i += 7) system[i] = ' ';
  PromptCache cache(4, 0.5);
  Json t1 = Json::array({Tool("ReadFile", "Reads a file."), Tool("Grep", "Searches.")});
  Json t2 = Json::array({Tool("ReadFile", "Reads a file!"), Tool("Grep", "Searches.")});
  (void)cache.Process(Tokenize(RenderPrompt(Request(system, t1, 3))), {});
  CacheFigures f = cache.Process(Tokenize(RenderPrompt(Request(system, t2, 3))), {});
  int64_t system_tokens = static_cast<int64_t>(Tokenize("<|im_start|>system\n" + system).size());
  EXPECT_GE(f.cache_n, system_tokens);
  EXPECT_LT(f.cache_n,
            system_tokens + 120);  // + the ~95-token tools header and the first tool head
}

TEST(PromptCache, ChangedSystemTextGoesToAnotherSlotWithNothingReused) {
  PromptCache cache(4, 0.5);
  Json tools = Json::array({Tool("ReadFile", "Reads a file.")});
  (void)cache.Process(Tokenize(RenderPrompt(Request("Alpha rules.", tools, 3))), {});
  CacheFigures f = cache.Process(Tokenize(RenderPrompt(Request("Beta rules.", tools, 3))), {});
  EXPECT_EQ(f.cache_n, 0);
  EXPECT_NE(f.slot, 0);
}

TEST(PromptCache, SlotsAreChosenBySimilarityThenLru) {
  PromptCache cache(2, 0.5);
  Tokens a = Tokenize(RenderPrompt(Request("Conversation A system text.", Json::array(), 4)));
  Tokens b = Tokenize(RenderPrompt(Request("Other B system prompt here.", Json::array(), 4)));
  EXPECT_EQ(cache.Process(a, {}).slot, 0);
  EXPECT_EQ(cache.Process(b, {}).slot, 1);
  CacheFigures again = cache.Process(a, {});
  EXPECT_EQ(again.slot, 0);
  EXPECT_GT(again.similarity, 0.5);
  // A third unrelated prompt evicts the least recently used slot (B's).
  Tokens c = Tokenize(RenderPrompt(Request("Completely new third one.", Json::array(), 4)));
  EXPECT_EQ(cache.Process(c, {}).slot, 1);
}

TEST(PromptCache, GeneratedTokensExtendTheSlot) {
  PromptCache cache(1, 0.5);
  Json r = Request("S", Json::array(), 1);
  std::string prompt = RenderPrompt(r);
  std::string gen = RenderAssistantBody("the reply", Json::array()) + "<|im_end|>";
  (void)cache.Process(Tokenize(prompt), Tokenize(gen));
  r["messages"].push_back({{"role", "assistant"}, {"content", "the reply"}});
  r["messages"].push_back({{"role", "user"}, {"content", "next"}});
  Tokens p2 = Tokenize(RenderPrompt(r));
  CacheFigures f = cache.Process(p2, {});
  EXPECT_GE(f.cache_n, static_cast<int64_t>(Tokenize(prompt + gen).size()) - 1);
}

}  // namespace
}  // namespace maestro::fakellm
