// ScriptedToolLlm: an LlmClient for agent-loop tests. Each Chat() consumes the
// next scripted reply (text and/or tool calls, or an error), records the
// request's messages as they were at call time, and may run a hook while the
// call is "in flight" (to post an interjection mid-call).
#pragma once

#include <deque>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "core/json.h"
#include "llm/llm_client.h"

namespace maestro::engine::test {

class ScriptedToolLlm : public llm::LlmClient {
 public:
  struct Reply {
    std::string text;
    std::vector<llm::ToolCall> calls;
    llm::LlmErrorKind error = llm::LlmErrorKind::kNone;
    std::function<void()> during;  // runs inside Chat()
  };

  ScriptedToolLlm() { profile_.context_length = 100'000; }

  void Text(std::string text) { replies_.push_back({std::move(text), {}, {}, {}}); }
  void Call(const std::string& name, const Json& args, std::function<void()> during = {}) {
    Reply r;
    r.calls.push_back({0, "call_" + std::to_string(++ids_), name, args.dump()});
    r.during = std::move(during);
    replies_.push_back(std::move(r));
  }
  void Calls(std::vector<std::pair<std::string, Json>> calls) {
    Reply r;
    for (auto& [name, args] : calls) {
      r.calls.push_back(
          {static_cast<int>(r.calls.size()), "call_" + std::to_string(++ids_), name, args.dump()});
    }
    replies_.push_back(std::move(r));
  }
  void Fail(llm::LlmErrorKind kind) { replies_.push_back({{}, {}, kind, {}}); }

  llm::LlmCallResult Chat(const llm::ChatRequest& req, const llm::LlmEventFn& on_event,
                          CancelToken*) override {
    std::vector<Json> messages;
    std::ifstream in(req.messages_path);
    for (std::string line; std::getline(in, line);) {
      if (!line.empty()) messages.push_back(Json::parse(line));
    }
    requests.push_back(std::move(messages));
    std::ifstream t(req.tools_path, std::ios::binary);
    tools_bytes.emplace_back(std::istreambuf_iterator<char>(t), std::istreambuf_iterator<char>());
    llm::LlmCallResult r;
    r.attempts = 1;
    if (replies_.empty()) {
      r.status = InvalidArgument("script exhausted");
      r.error_kind = llm::LlmErrorKind::kTerminal;
      return r;
    }
    Reply reply = std::move(replies_.front());
    replies_.pop_front();
    if (reply.during) reply.during();
    if (reply.error != llm::LlmErrorKind::kNone) {
      r.status = Unavailable("scripted failure");
      r.error_kind = reply.error;
      return r;
    }
    if (on_event && !reply.text.empty()) {
      llm::LlmEvent e;
      e.text = reply.text;
      on_event(e);
    }
    r.response.content = reply.text;
    r.response.tool_calls = reply.calls;
    r.response.finish_reason = reply.calls.empty() ? "stop" : "tool_calls";
    r.response.usage.prompt_tokens = 1000;
    r.response.usage.cached_tokens = 900;
    r.response.usage.completion_tokens = 10;
    r.response.usage.reported = report_usage;
    return r;
  }
  const llm::ModelProfile& profile() const override { return profile_; }

  size_t remaining() const { return replies_.size(); }
  bool report_usage = true;                 // false: the estimate's calibration stays 1.0
  std::vector<std::vector<Json>> requests;  // messages per call
  std::vector<std::string> tools_bytes;     // tools file per call

 private:
  std::deque<Reply> replies_;
  llm::ModelProfile profile_;
  int ids_ = 0;
};

}  // namespace maestro::engine::test
