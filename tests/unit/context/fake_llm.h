// ScriptedLlm: an LlmClient for context tests. Each Chat() consumes the next
// scripted reply (text, or an error) and records the request file's content
// as it was at call time, so tests can assert what a request was built from.
#pragma once

#include <deque>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "llm/llm_client.h"

namespace maestro::testing {

class ScriptedLlm : public llm::LlmClient {
 public:
  struct Reply {
    bool ok = true;
    std::string text;
    int64_t prompt_tokens = 100;
  };
  void Push(Reply r) { replies_.push_back(std::move(r)); }
  void PushText(std::string text) { Push({true, std::move(text), 100}); }
  void PushError() { Push({false, "", 0}); }

  llm::LlmCallResult Chat(const llm::ChatRequest& req, const llm::LlmEventFn&,
                          CancelToken*) override {
    std::ifstream in(req.messages_path);
    std::stringstream ss;
    ss << in.rdbuf();
    requests.push_back(ss.str());
    llm::LlmCallResult r;
    r.attempts = 1;
    if (replies_.empty() || !replies_.front().ok) {
      if (!replies_.empty()) replies_.pop_front();
      r.status = Unavailable("scripted 503");
      r.error_kind = llm::LlmErrorKind::kRetryable;
      r.http_status = 503;
      return r;
    }
    r.response.content = replies_.front().text;
    r.response.finish_reason = "stop";
    r.response.usage.prompt_tokens = replies_.front().prompt_tokens;
    r.response.usage.completion_tokens = 20;
    r.response.usage.reported = true;
    replies_.pop_front();
    return r;
  }
  const llm::ModelProfile& profile() const override { return profile_; }

  std::vector<std::string> requests;  // messages file content per call

 private:
  std::deque<Reply> replies_;
  llm::ModelProfile profile_;
};

}  // namespace maestro::testing
