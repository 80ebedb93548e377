// Pure parts of the client; the HTTP behaviour is covered by the
// integration tests against maestro-fakellm.
#include "llm/llm_client.h"

#include <gtest/gtest.h>

namespace maestro::llm {
namespace {

TEST(LlmClient, ContextLengthErrorsOfEachServerAreRecognised) {
  EXPECT_TRUE(IsContextLengthError(400, R"({"error":{"code":"context_length_exceeded"}})"));
  EXPECT_TRUE(IsContextLengthError(
      400,
      R"({"object":"error","message":"This model's maximum context length is 32768 tokens."})"));
  EXPECT_TRUE(IsContextLengthError(
      400,
      R"({"error":{"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}})"));
  EXPECT_FALSE(IsContextLengthError(400, R"({"error":{"message":"bad tool schema"}})"));
  EXPECT_FALSE(IsContextLengthError(200, "maximum context length"));
}

TEST(LlmClient, BackoffDoublesAndIsCappedWithJitter) {
  ModelProfile p;
  p.backoff_base_ms = 100;
  p.backoff_max_ms = 1000;
  p.backoff_jitter = 0.2;
  EXPECT_EQ(BackoffDelayMs(p, 1, 0.5), 100);
  EXPECT_EQ(BackoffDelayMs(p, 2, 0.5), 200);
  EXPECT_EQ(BackoffDelayMs(p, 3, 0.5), 400);
  EXPECT_EQ(BackoffDelayMs(p, 10, 0.5), 1000);
  EXPECT_EQ(BackoffDelayMs(p, 1, 0.0), 80);
  EXPECT_EQ(BackoffDelayMs(p, 1, 1.0), 120);
}

TEST(LlmClient, ProfileFromConfigAndApiKeyFromEnv) {
  LlmConfig cfg;
  cfg.base_url = "http://127.0.0.1:1/v1";
  cfg.model = "qwen3";
  cfg.context_length = 4096;
  ModelProfile p = ProfileFromConfig(cfg);
  EXPECT_EQ(p.model, "qwen3");
  EXPECT_EQ(p.context_length, 4096);
  p.api_key_env = "MAESTRO_TEST_LLM_KEY";
  ::setenv("MAESTRO_TEST_LLM_KEY", "sk-test", 1);
  OpenAiClient c(p);
  EXPECT_EQ(c.profile().api_key, "sk-test");
}

TEST(LlmClient, EveryConfiguredProfileBecomesAModelProfile) {
  Config cfg;
  cfg.llm.base_url = "http://127.0.0.1:8081/v1";
  cfg.llm.headers = {{"X-Team", "agents"}};
  LlmConfig other;
  other.base_url = "https://api.example/v1";
  other.stream = false;
  other.idle_timeout_ms = 5000;
  other.max_attempts = 2;
  cfg.llm_profiles["openai"] = other;
  auto profiles = ProfilesFromConfig(cfg);
  ASSERT_EQ(profiles.size(), 2u);
  EXPECT_EQ(profiles.at("default").extra_headers.at("X-Team"), "agents");
  const ModelProfile& o = profiles.at("openai");
  EXPECT_EQ(o.name, "openai");
  EXPECT_FALSE(o.stream);
  EXPECT_EQ(o.idle_timeout_ms, 5000);
  EXPECT_EQ(o.max_attempts, 2);
}

TEST(LlmClient, ConnectionRefusedIsRetryableThenReported) {
  ModelProfile p;
  p.base_url = "http://127.0.0.1:1/v1";  // nothing listens on port 1
  p.max_attempts = 2;
  p.backoff_base_ms = 1;
  OpenAiClient c(p);
  ChatRequest req;
  req.messages_path = "/dev/null";
  int retries = 0;
  LlmCallResult r = c.Chat(
      req, [&](const LlmEvent& e) { retries += e.kind == LlmEvent::Kind::kRetry; }, nullptr);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error_kind, LlmErrorKind::kRetryable);
  EXPECT_EQ(r.status.code(), StatusCode::kUnavailable);
  EXPECT_EQ(r.attempts, 2);
  EXPECT_EQ(retries, 1);
}

}  // namespace
}  // namespace maestro::llm
