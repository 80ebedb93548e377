// Pure parts of the client; the HTTP behaviour is covered by the
// integration tests against maestro-fakellm.
#include "llm/llm_client.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

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
  auto cfg = LoadConfig(std::nullopt, {{"MAESTRO_LLM_BASE_URL", "http://127.0.0.1:1/v1"},
                                       {"MAESTRO_LLM_MODEL", "qwen3"},
                                       {"MAESTRO_LLM_CONTEXT_LENGTH", "4096"}});
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  ModelProfile p = ProfilesFromConfig(*cfg).at("default");
  EXPECT_EQ(p.name, "default");
  EXPECT_EQ(p.model, "qwen3");
  EXPECT_EQ(p.context_length, 4096);
  p.api_key_env = "MAESTRO_TEST_LLM_KEY";
  ::setenv("MAESTRO_TEST_LLM_KEY", "sk-test", 1);
  HttpLlmClient c(p);
  EXPECT_EQ(c.profile().api_key, "sk-test");
}

TEST(LlmClient, EveryConfiguredProfileBecomesAModelProfile) {
  Config cfg;
  cfg.llm.base_url = "http://127.0.0.1:8081/v1";
  cfg.llm.extra_headers = {{"X-Team", "agents"}};
  ModelProfile other;
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

// The config's profiles are the client's: every key of an `llm_profiles:`
// entry, its price included, reaches the profile a client is built from
// (the field-by-field copy this replaced had no price and could forget a new
// key).
TEST(LlmClient, EveryKeyOfAConfiguredProfileReachesTheClient) {
  const std::string path =
      ::testing::TempDir() + "llm_profile_test_" + std::to_string(::getpid()) + ".yaml";
  std::ofstream(path) << "llm:\n"
                         "  base_url: http://127.0.0.1:8081/v1\n"
                         "llm_profiles:\n"
                         "  fast:\n"
                         "    base_url: http://127.0.0.1:9/v1\n"
                         "    api_key: sk-file\n"
                         "    api_key_env: MAESTRO_TEST_FAST_KEY\n"
                         "    model: small\n"
                         "    context_length: 8192\n"
                         "    stream: false\n"
                         "    vision: true\n"
                         "    headers: {X-Team: agents}\n"
                         "    connect_timeout_ms: 11\n"
                         "    idle_timeout_ms: 12\n"
                         "    total_timeout_ms: 13\n"
                         "    max_attempts: 3\n"
                         "    price: {input: 1.5, output: 6}\n";
  auto cfg = LoadConfig(path, {});
  std::remove(path.c_str());
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->llm_profiles.at("fast").name, "fast") << "the config names it by its key";
  auto profiles = ProfilesFromConfig(*cfg);
  ASSERT_EQ(profiles.size(), 2u);
  EXPECT_EQ(profiles.at("default").name, "default");
  EXPECT_FALSE(profiles.at("default").price.has_value());
  HttpLlmClient client(profiles.at("fast"));
  const ModelProfile& f = client.profile();
  EXPECT_EQ(f.name, "fast");
  EXPECT_EQ(f.base_url, "http://127.0.0.1:9/v1");
  EXPECT_EQ(f.api_key, "sk-file") << "a key in the file wins over api_key_env";
  EXPECT_EQ(f.api_key_env, "MAESTRO_TEST_FAST_KEY");
  EXPECT_EQ(f.model, "small");
  EXPECT_EQ(f.context_length, 8192);
  EXPECT_FALSE(f.stream);
  EXPECT_TRUE(f.vision);
  EXPECT_EQ(f.extra_headers, (std::map<std::string, std::string>{{"X-Team", "agents"}}));
  EXPECT_EQ(f.connect_timeout_ms, 11);
  EXPECT_EQ(f.idle_timeout_ms, 12);
  EXPECT_EQ(f.total_timeout_ms, 13);
  EXPECT_EQ(f.max_attempts, 3);
  ASSERT_TRUE(f.price.has_value());
  EXPECT_DOUBLE_EQ(f.price->input, 1.5);
  EXPECT_DOUBLE_EQ(f.price->cached_input, 1.5);
  EXPECT_DOUBLE_EQ(f.price->output, 6);
}

TEST(LlmClient, ConnectionRefusedIsRetryableThenReported) {
  ModelProfile p;
  p.base_url = "http://127.0.0.1:1/v1";  // nothing listens on port 1
  p.max_attempts = 2;
  p.backoff_base_ms = 1;
  HttpLlmClient c(p);
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
