#include "support/scripted_llm.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace maestro::testing {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<Json> ParseLines(const std::string& jsonl) {
  std::vector<Json> out;
  std::istringstream in(jsonl);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(Json::parse(line));
  }
  return out;
}

// Forwards to a ScriptedLlm owned by the test.
class Forwarder : public llm::LlmClient {
 public:
  explicit Forwarder(ScriptedLlm* to) : to_(to) {}
  llm::LlmCallResult Chat(const llm::ChatRequest& req, const llm::LlmEventFn& on_event,
                          CancelToken* cancel) override {
    return to_->Chat(req, on_event, cancel);
  }
  const llm::ModelProfile& profile() const override { return to_->profile(); }

 private:
  ScriptedLlm* to_;
};

}  // namespace

ScriptedLlm::ScriptedLlm() { profile_.context_length = 100'000; }

void ScriptedLlm::Text(std::string text) {
  MutexLock l(&mu_);
  replies_.push_back({std::move(text), {}, {}, {}});
}

void ScriptedLlm::Call(const std::string& name, const Json& args, std::function<void()> during) {
  MutexLock l(&mu_);
  replies_.push_back({{}, {{name, args}}, {}, std::move(during)});
}

void ScriptedLlm::Calls(ToolCalls calls) {
  MutexLock l(&mu_);
  replies_.push_back({{}, std::move(calls), {}, {}});
}

void ScriptedLlm::Fail(llm::LlmErrorKind kind) {
  MutexLock l(&mu_);
  replies_.push_back({{}, {}, kind, {}});
}

void ScriptedLlm::Respond(Responder responder) {
  MutexLock l(&mu_);
  responder_ = std::move(responder);
}

void ScriptedLlm::ForbidCalls() {
  MutexLock l(&mu_);
  forbidden_ = true;
}

std::unique_ptr<llm::LlmClient> ScriptedLlm::Handle() { return std::make_unique<Forwarder>(this); }

size_t ScriptedLlm::remaining() const {
  MutexLock l(&mu_);
  return replies_.size();
}

int ScriptedLlm::CallsFor(const std::string& task_id) const {
  MutexLock l(&mu_);
  auto it = calls_for_.find(task_id);
  return it == calls_for_.end() ? 0 : it->second;
}

std::vector<Json> ScriptedLlm::LastRequest(const std::string& task_id) const {
  MutexLock l(&mu_);
  auto it = last_for_.find(task_id);
  return it == last_for_.end() ? std::vector<Json>{} : it->second;
}

llm::LlmCallResult ScriptedLlm::Chat(const llm::ChatRequest& req, const llm::LlmEventFn& on_event,
                                     CancelToken*) {
  std::string file = ReadAll(req.messages_path);
  std::vector<Json> messages = ParseLines(file);
  std::string task_id = std::filesystem::path(req.messages_path).parent_path().filename();
  llm::LlmCallResult r;
  r.attempts = 1;
  Reply reply;
  Responder responder;
  std::vector<llm::ToolCall> calls;
  {
    MutexLock l(&mu_);
    requests.push_back(messages);
    request_files.push_back(file);
    tools_bytes.push_back(ReadAll(req.tools_path));
    ++calls_for_[task_id];
    last_for_[task_id] = messages;
    if (forbidden_) {
      ADD_FAILURE() << "no LLM call expected";
      r.status = Internal("unexpected LLM call");
      r.error_kind = llm::LlmErrorKind::kTerminal;
      return r;
    }
    if (!replies_.empty()) {
      reply = std::move(replies_.front());
      replies_.pop_front();
    } else if (responder_) {
      responder = responder_;
    } else {
      r.status = InvalidArgument("script exhausted");
      r.error_kind = llm::LlmErrorKind::kTerminal;
      return r;
    }
  }
  // The responder and the hook run unlocked: they may read the store, post
  // comments, or take as long as a model would.
  if (responder) reply = responder(task_id, messages);
  {
    MutexLock l(&mu_);
    for (auto& [name, args] : reply.calls) {
      calls.push_back(
          {static_cast<int>(calls.size()), "call_" + std::to_string(++ids_), name, args.dump()});
    }
  }
  if (reply.during) reply.during();
  if (reply.error != llm::LlmErrorKind::kNone) {
    r.status = Unavailable("scripted failure");
    r.error_kind = reply.error;
    r.http_status = reply.error == llm::LlmErrorKind::kRetryable  ? 503
                    : reply.error == llm::LlmErrorKind::kTerminal ? 400
                                                                  : 0;
    return r;
  }
  if (on_event && !reply.text.empty()) {
    llm::LlmEvent e;
    e.text = reply.text;
    on_event(e);
  }
  r.response.content = reply.text;
  r.response.tool_calls = std::move(calls);
  r.response.finish_reason = r.response.tool_calls.empty() ? "stop" : "tool_calls";
  r.response.usage.prompt_tokens = usage.prompt_tokens;
  r.response.usage.cached_tokens = usage.cached_tokens;
  r.response.usage.completion_tokens = usage.completion_tokens;
  r.response.usage.reported = usage.reported;
  return r;
}

}  // namespace maestro::testing
