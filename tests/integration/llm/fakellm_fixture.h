// FakeLlmTest: the gtest fixture of the LLM integration tests that drive
// maestro's HttpLlmClient against a started maestro-fakellm (one provider
// each): a scratch directory per test, the script and conversation files
// written into it, the fake started on that script, and the requests it
// recorded. Kept apart from fakellm_process.h, which the benchmarks include
// without gtest or httplib; the scratch files are the llm unit tests' own
// fixture (tests/unit/llm/llm_test_files.h).
//
// Thread safety: one test thread.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <memory>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/model_profile.h"
#include "fakellm_process.h"
#include "llm/llm_client.h"
#include "llm/llm_types.h"
#include "unit/llm/llm_test_files.h"

namespace maestro::testing {

// The scratch directory, Write and Slurp are the llm unit tests' fixture's.
class FakeLlmTest : public llm::test_files::LlmFileTest {
 protected:
  // `prefix` names the test's directory in /tmp (e.g. "maestro_anthit_").
  explicit FakeLlmTest(std::string prefix) : LlmFileTest(std::move(prefix)) {}

  // One line of current.jsonl: the message, then '\n'.
  static std::string Line(const Json& message) { return message.dump() + "\n"; }
  static std::string Line(const std::string& role, const std::string& content) {
    return Line(Json{{"role", role}, {"content", content}});
  }

  // The assistant line that carries `calls` as the engine writes it (OpenAI
  // tool_calls, no text), and a tool line answering one call.
  static std::string ToolCallsLine(const std::vector<llm::ToolCall>& calls) {
    Json j = Json::array();
    for (const llm::ToolCall& c : calls) {
      j.push_back({{"id", c.id},
                   {"type", "function"},
                   {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
    }
    return Line(Json{{"role", "assistant"}, {"content", nullptr}, {"tool_calls", j}});
  }
  static std::string ToolLine(const std::string& call_id, const std::string& content) {
    return Line(Json{{"role", "tool"}, {"tool_call_id", call_id}, {"content", content}});
  }

  // The prompt-cache tests' conversation: a long byte-stable system text of
  // `rules` rules (RulesSystem), then `turns` user/assistant pairs with kAck
  // as every answer (History).
  static constexpr const char* kAck = "Understood, continuing with the task.";
  static std::string RulesSystem(int rules) {
    std::string s;
    for (int i = 0; i < rules; ++i)
      s += "Rule " + std::to_string(i) + ": keep the prefix byte-stable. ";
    return s;
  }
  static std::string History(const std::string& system, int turns) {
    std::string h = Line("system", system);
    for (int i = 0; i < turns; ++i) {
      h += Line("user", "step " + std::to_string(i) + " of the work, with some detail");
      h += Line("assistant", kAck);
    }
    return h;
  }
  // `history` and "next", then one turn later: the answer and "and one more".
  static std::string AskNext(const std::string& history) { return history + Line("user", "next"); }
  static std::string OneTurnLater(const std::string& history) {
    return AskNext(history) + Line("assistant", kAck) + Line("user", "and one more");
  }

  // The fake on `script` (written to script.json), with `extra` flags first.
  std::unique_ptr<FakeLlmProcess> Start(const std::string& script,
                                        std::vector<std::string> extra = {}) {
    extra.push_back("--script");
    extra.push_back(Write("script.json", script));
    return std::make_unique<FakeLlmProcess>(extra);
  }
  // A profile at `base_url` that retries fast (4 attempts, 10-50 ms backoff):
  // the tests set the provider and model.
  static ModelProfile FastRetryProfile(const std::string& base_url) {
    ModelProfile p;
    p.base_url = base_url;
    p.backoff_base_ms = 10;
    p.backoff_max_ms = 50;
    p.max_attempts = 4;
    return p;
  }
  // A system line and one user line in current.jsonl.
  llm::ChatRequest Conversation(const std::string& user = "hello") {
    llm::ChatRequest r;
    r.messages_path = Write("current.jsonl", Line("system", "You are terse.") + Line("user", user));
    return r;
  }
  // The usual conversation through `client`, keeping its retry events.
  llm::LlmCallResult ChatKeepingRetries(llm::LlmClient& client,
                                        std::vector<llm::LlmEvent>* retries) {
    return client.Chat(
        Conversation(),
        [retries](const llm::LlmEvent& e) {
          if (e.kind == llm::LlmEvent::Kind::kRetry) retries->push_back(e);
        },
        nullptr);
  }
  // The requests the fake recorded (GET /v1/_requests), oldest first.
  static Json Requests(const FakeLlmProcess& f) {
    httplib::Client c("127.0.0.1", f.port());
    auto res = c.Get("/v1/_requests");
    return res && res->status == 200 ? Json::parse(res->body)["requests"] : Json::array();
  }
};

}  // namespace maestro::testing
