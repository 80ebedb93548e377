// The OpenAI chat-completions wire format (wire.h): the body streamed by
// RequestBody, the reply read by StreamAssembler.
#include <string>

#include "llm/request_body.h"
#include "llm/stream_assembler.h"
#include "llm/wire.h"

namespace maestro::llm {
namespace {

class OpenAiReader final : public ReplyReader {
 public:
  explicit OpenAiReader(LlmEventFn on_delta) : assembler_(std::move(on_delta)) {}
  Status OnEvent(const SseEvent& ev) override { return assembler_.OnData(ev.data); }
  Status OnJson(const Json& body) override { return assembler_.ApplyCompletion(body); }
  bool complete() const override { return assembler_.has_finish(); }
  ChatResponse Take() override { return assembler_.Take(); }

 private:
  StreamAssembler assembler_;
};

class OpenAiWire final : public WireFormat {
 public:
  std::string_view provider_name() const override { return "openai"; }
  std::string Url(const ModelProfile& p, bool) const override {
    std::string url = p.base_url;
    while (!url.empty() && url.back() == '/') url.pop_back();
    return url + "/chat/completions";
  }
  void AddHeaders(const ModelProfile& p, HttpHeaders* out) const override {
    if (!p.api_key.empty()) out->emplace_back("Authorization", "Bearer " + p.api_key);
  }
  Result<std::unique_ptr<LlmBody>> OpenBody(const ModelProfile&,
                                            const RequestBodySpec& spec) const override {
    MAESTRO_ASSIGN_OR_RETURN(auto body, RequestBody::Open(spec));
    return std::unique_ptr<LlmBody>(std::move(body));
  }
  std::unique_ptr<ReplyReader> NewReader(LlmEventFn on_delta) const override {
    return std::make_unique<OpenAiReader>(std::move(on_delta));
  }
};

}  // namespace

std::unique_ptr<WireFormat> NewOpenAiWire() { return std::make_unique<OpenAiWire>(); }

}  // namespace maestro::llm
