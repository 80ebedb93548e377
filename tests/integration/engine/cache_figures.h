// The fake's requests and its llama-like cache figures, for the engine tests
// that measure prefix reuse: GET /v1/_requests of a maestro-fakellm, and
// prompts tokenized the way its cache counts them (fakellm/prompt_cache.h).
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <string>

#include "core/json.h"
#include "fakellm/prompt_cache.h"
#include "fakellm_process.h"

namespace maestro::engine::test {

inline Json ServerRequests(const testing::FakeLlmProcess& f) {
  httplib::Client c("127.0.0.1", f.port());
  auto res = c.Get("/v1/_requests");
  return res && res->status == 200 ? Json::parse(res->body)["requests"] : Json::array();
}

inline void ClearRequests(const testing::FakeLlmProcess& f) {
  httplib::Client c("127.0.0.1", f.port());
  (void)c.Delete("/v1/_requests");
}

// Tokens of the request's prompt before its last (the dynamic user) message.
inline int64_t PrefixTokens(const Json& body) {
  Json head = body;
  head["messages"].erase(head["messages"].size() - 1);
  const std::string generation = "<|im_start|>assistant\n";
  std::string prompt = fakellm::RenderPrompt(head);
  EXPECT_EQ(prompt.substr(prompt.size() - generation.size()), generation);
  prompt.resize(prompt.size() - generation.size());
  return static_cast<int64_t>(fakellm::Tokenize(prompt + "<|im_start|>user\n").size());
}

// Tokens of the request's whole prompt (without the generation prompt).
inline int64_t PromptTokens(const Json& body) {
  const std::string generation = "<|im_start|>assistant\n";
  std::string prompt = fakellm::RenderPrompt(body);
  prompt.resize(prompt.size() - generation.size());
  return static_cast<int64_t>(fakellm::Tokenize(prompt).size());
}

// Prefix retention of request `i` of `reqs`: the share of what request
// `i - 1` sent that the server reused from its cache.
inline double Retention(const Json& reqs, size_t i) {
  const double sent = static_cast<double>(PromptTokens(reqs[i - 1]["body"]));
  return static_cast<double>(reqs[i]["cache"]["cache_n"].get<int64_t>()) / sent;
}

// The share of a task's first request's prefix (everything before its
// dynamic user message) that the server reused.
inline double FirstRequestReuse(const Json& req) {
  return static_cast<double>(req["cache"]["cache_n"].get<int64_t>()) /
         static_cast<double>(PrefixTokens(req["body"]));
}

}  // namespace maestro::engine::test
