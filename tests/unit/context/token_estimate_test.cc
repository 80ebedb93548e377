#include "context/token_estimate.h"

#include <gtest/gtest.h>

namespace maestro::context {
namespace {

TEST(TokenEstimateTest, AsciiIsAboutFourCharsPerToken) {
  EXPECT_EQ(EstimateTextTokens(std::string(400, 'a')), 100);
  EXPECT_EQ(EstimateTextTokens("abcde"), 2);
  EXPECT_EQ(EstimateTextTokens(""), 0);
}

TEST(TokenEstimateTest, CjkIsAboutOneTokenPerCharacter) {
  // 8 characters: kanji, hiragana, katakana.
  EXPECT_EQ(EstimateTextTokens("日本語のテキスト"), 8);
  // Hangul and fullwidth forms too.
  EXPECT_EQ(EstimateTextTokens("한국어ＡＢ"), 5);
  // Mixed: 4 CJK + 8 ASCII (2 tokens).
  EXPECT_EQ(EstimateTextTokens("設計方針 is good"), 4 + 2);
  // A CJK text is estimated far above its byte length / 4.
  std::string ja = "コンテキストをファイルで管理する";
  EXPECT_GT(EstimateTextTokens(ja), static_cast<int64_t>(ja.size() / 4));
}

TEST(TokenEstimateTest, MessageCountsFramingToolCallsAndIds) {
  Json plain = {{"role", "user"}, {"content", std::string(40, 'x')}};
  EXPECT_EQ(EstimateMessageTokens(plain), kMessageFramingTokens + 1 + 10);
  Json call = {{"role", "assistant"},
               {"content", nullptr},
               {"tool_calls",
                {{{"id", "call_1"},
                  {"type", "function"},
                  {"function", {{"name", "ReadFile"}, {"arguments", "{\"path\":\"a.txt\"}"}}}}}}};
  int64_t t = EstimateMessageTokens(call);
  EXPECT_GE(t, kMessageFramingTokens + kToolCallFramingTokens + 2 + 4);
  Json result = {{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", "hello"}};
  EXPECT_EQ(EstimateMessageTokens(result), kMessageFramingTokens + 1 + 2 + 2);
}

TEST(TokenEstimateTest, ToolsArrayIsCounted) {
  std::string tools = R"([{"type":"function","function":{"name":"ReadFile","parameters":{}}}])";
  EXPECT_GT(EstimateToolsTokens(tools), static_cast<int64_t>(tools.size() / 4));
  EXPECT_EQ(EstimateToolsTokens(""), 0);
}

TEST(TokenEstimateTest, CalibrationFollowsServerCount) {
  TokenCalibration c;
  EXPECT_EQ(c.Apply(1000), 1000);
  c.Observe(1000, 1300);  // the server's tokenizer counts 30% more
  EXPECT_EQ(c.Apply(2000), 2600);
  c.Observe(1000, 100000);  // absurd report: clamped
  EXPECT_EQ(c.Apply(1000), 4000);
  c.Observe(0, 500);  // ignored
  EXPECT_EQ(c.Apply(1000), 4000);
}

}  // namespace
}  // namespace maestro::context
