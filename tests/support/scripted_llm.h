// ScriptedLlm: the one LlmClient test double. Each Chat() answers with the
// next scripted reply (text and/or tool calls, or a classified error); when
// the script is empty, a Responder (if set) computes the reply from the
// conversation sent, as a model would — so a resumed or follow-up job, which
// replays its transcript, gets the answer a model would give.
//
// Every call records what was sent: the messages file parsed and as bytes,
// and the tools file. A hook may run while a call is "in flight" (to post an
// interjection mid-call). An exhausted script without a responder answers
// with a terminal error ("script exhausted"), which ends the movement.
//
// Thread safety: Chat() may run from many worker threads at once (one
// ScriptedLlm shared by every job through Handle()); the recorders below are
// for reading once the calls are done, CallsFor/LastRequest at any time.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/json.h"
#include "core/mutex.h"
#include "llm/llm_client.h"

namespace maestro::testing {

class ScriptedLlm : public llm::LlmClient {
 public:
  using ToolCalls = std::vector<std::pair<std::string, Json>>;  // (name, arguments)
  struct Reply {
    std::string text;
    ToolCalls calls;
    llm::LlmErrorKind error = llm::LlmErrorKind::kNone;
    std::function<void()> during;  // runs inside Chat(), before it returns
  };
  // Decides the reply from the task id (the name of the folder holding the
  // messages file) and the messages sent.
  using Responder = std::function<Reply(const std::string& task_id, const std::vector<Json>&)>;
  // What a successful reply reports as its usage.
  struct Usage {
    int64_t prompt_tokens = 1000;
    int64_t cached_tokens = 900;
    int64_t completion_tokens = 10;
    bool reported = true;  // false: the token estimate's calibration stays 1.0
  };

  ScriptedLlm();

  // The script, answered in order.
  void Text(std::string text);
  void Call(const std::string& name, const Json& args, std::function<void()> during = {});
  void Calls(ToolCalls calls);
  // A failed call: retryable errors carry HTTP 503, terminal ones 400.
  void Fail(llm::LlmErrorKind kind = llm::LlmErrorKind::kRetryable);
  // Answers every call made once the script is exhausted.
  void Respond(Responder responder);
  // Any call is a test failure (for paths that must end before the LLM).
  void ForbidCalls();

  // A client for an llm_factory that owns what it returns: it forwards to
  // this ScriptedLlm, which must outlive it.
  std::unique_ptr<llm::LlmClient> Handle();

  llm::LlmCallResult Chat(const llm::ChatRequest& req, const llm::LlmEventFn& on_event,
                          CancelToken* cancel) override;
  const llm::ModelProfile& profile() const override { return profile_; }
  llm::ModelProfile& mutable_profile() { return profile_; }

  size_t remaining() const;
  int CallsFor(const std::string& task_id) const;
  std::vector<Json> LastRequest(const std::string& task_id) const;

  Usage usage;                              // set before the calls
  std::vector<std::vector<Json>> requests;  // messages per call
  std::vector<std::string> request_files;   // the messages file's bytes per call
  std::vector<std::string> tools_bytes;     // the tools file's bytes per call

 private:
  llm::ModelProfile profile_;
  mutable Mutex mu_;
  std::deque<Reply> replies_ GUARDED_BY(mu_);
  Responder responder_ GUARDED_BY(mu_);
  bool forbidden_ GUARDED_BY(mu_) = false;
  std::map<std::string, int> calls_for_ GUARDED_BY(mu_);
  std::map<std::string, std::vector<Json>> last_for_ GUARDED_BY(mu_);
  int ids_ GUARDED_BY(mu_) = 0;
};

}  // namespace maestro::testing
