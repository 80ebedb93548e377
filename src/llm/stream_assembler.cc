#include "llm/stream_assembler.h"

#include <fmt/format.h>

#include "core/utf8.h"

namespace maestro::llm {
namespace {

int64_t IntOr(const Json& obj, const char* key, int64_t dflt) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return dflt;
  return it->get<int64_t>();
}

const std::string* StringField(const Json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return nullptr;
  return it->get_ptr<const std::string*>();
}

LlmEvent TextEvent(LlmEvent::Kind kind, const std::string& text) {
  LlmEvent ev;
  ev.kind = kind;
  ev.text = text;
  return ev;
}

}  // namespace

std::string_view LlmErrorKindName(LlmErrorKind k) {
  switch (k) {
    case LlmErrorKind::kNone:
      return "none";
    case LlmErrorKind::kRetryable:
      return "retryable";
    case LlmErrorKind::kTerminal:
      return "terminal";
    case LlmErrorKind::kContextLengthExceeded:
      return "context_length_exceeded";
    case LlmErrorKind::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

void StreamAssembler::Emit(LlmEvent ev) {
  if (on_event_) on_event_(ev);
}

Status StreamAssembler::OnData(std::string_view data) {
  // Tolerate surrounding whitespace around the [DONE] sentinel.
  std::string_view trimmed = data;
  while (!trimmed.empty() && (trimmed.back() == ' ' || trimmed.back() == '\n')) {
    trimmed.remove_suffix(1);
  }
  if (trimmed == "[DONE]") {
    done_ = true;
    return Status::Ok();
  }
  Json chunk = Json::parse(data.begin(), data.end(), nullptr, /*allow_exceptions=*/false);
  if (chunk.is_discarded() || !chunk.is_object()) {
    return Unavailable(fmt::format("malformed stream chunk: {}", ValidUtf8(Utf8Prefix(data, 200))));
  }
  if (auto it = chunk.find("error"); it != chunk.end() && !it->is_null()) {
    std::string msg = it->is_object() && it->contains("message") && (*it)["message"].is_string()
                          ? (*it)["message"].get<std::string>()
                          : it->dump();
    return Unavailable("server error in stream: " + msg);
  }
  if (const std::string* id = StringField(chunk, "id"); id && resp_.id.empty()) resp_.id = *id;
  if (const std::string* m = StringField(chunk, "model"); m && resp_.model.empty()) {
    resp_.model = *m;
  }
  if (auto it = chunk.find("choices"); it != chunk.end() && it->is_array()) {
    for (const Json& choice : *it) ApplyChoice(choice, /*streamed=*/true);
  }
  if (auto it = chunk.find("usage"); it != chunk.end() && it->is_object()) ApplyUsage(*it);
  if (auto it = chunk.find("timings"); it != chunk.end() && it->is_object()) ApplyTimings(*it);
  return Status::Ok();
}

Status StreamAssembler::ApplyCompletion(const Json& completion) {
  if (!completion.is_object()) return Unavailable("response is not a JSON object");
  if (auto it = completion.find("error"); it != completion.end() && !it->is_null()) {
    return Unavailable("server error: " + it->dump());
  }
  if (const std::string* id = StringField(completion, "id")) resp_.id = *id;
  if (const std::string* m = StringField(completion, "model")) resp_.model = *m;
  auto choices = completion.find("choices");
  if (choices == completion.end() || !choices->is_array() || choices->empty()) {
    return Unavailable("response has no choices");
  }
  for (const Json& choice : *choices) ApplyChoice(choice, /*streamed=*/false);
  if (auto it = completion.find("usage"); it != completion.end() && it->is_object()) {
    ApplyUsage(*it);
  }
  if (auto it = completion.find("timings"); it != completion.end() && it->is_object()) {
    ApplyTimings(*it);
  }
  done_ = true;
  return Status::Ok();
}

void StreamAssembler::ApplyChoice(const Json& choice, bool streamed) {
  if (!choice.is_object()) return;
  // Only the first choice (n=1); others are ignored.
  if (IntOr(choice, "index", 0) != 0) return;
  const Json* delta = nullptr;
  if (auto it = choice.find(streamed ? "delta" : "message");
      it != choice.end() && it->is_object()) {
    delta = &*it;
  }
  if (delta) {
    if (const std::string* s = StringField(*delta, "content"); s && !s->empty()) {
      resp_.content += *s;
      any_delta_ = true;
      Emit(TextEvent(LlmEvent::Kind::kText, *s));
    }
    for (const char* key : {"reasoning_content", "reasoning"}) {
      if (const std::string* s = StringField(*delta, key); s && !s->empty()) {
        resp_.reasoning += *s;
        any_delta_ = true;
        Emit(TextEvent(LlmEvent::Kind::kReasoning, *s));
        break;
      }
    }
    if (auto it = delta->find("tool_calls"); it != delta->end() && it->is_array()) {
      int pos = 0;
      for (const Json& tc : *it) ApplyToolCallDelta(tc, pos++);
    }
  }
  if (const std::string* fr = StringField(choice, "finish_reason"); fr && !fr->empty()) {
    finish_reason_ = *fr;
  }
}

void StreamAssembler::ApplyToolCallDelta(const Json& tc, int fallback_index) {
  if (!tc.is_object()) return;
  // Some servers omit `index` when there is a single call.
  int index = static_cast<int>(IntOr(tc, "index", fallback_index));
  ToolCall& call = tools_[index];
  call.index = index;
  LlmEvent ev;
  ev.kind = LlmEvent::Kind::kToolCall;
  ev.index = index;
  if (const std::string* id = StringField(tc, "id"); id && !id->empty()) {
    if (call.id.empty()) call.id = *id;  // servers may repeat the id; it never grows
    ev.tool_id = *id;
  }
  if (auto fn = tc.find("function"); fn != tc.end() && fn->is_object()) {
    if (const std::string* name = StringField(*fn, "name"); name && !name->empty()) {
      // OpenAI sends the name once; some servers repeat it whole in later
      // chunks. Append only genuine fragments.
      if (call.name != *name) call.name += *name;
      ev.tool_name = *name;
    }
    if (auto a = fn->find("arguments"); a != fn->end()) {
      if (a->is_string()) {
        call.arguments += a->get<std::string>();
        ev.text = a->get<std::string>();
      } else if (a->is_object()) {  // non-streamed responses of some servers
        call.arguments += a->dump();
        ev.text = a->dump();
      }
    }
  }
  any_delta_ = true;
  Emit(std::move(ev));
}

void StreamAssembler::ApplyUsage(const Json& usage) {
  resp_.usage.reported = true;
  resp_.usage.prompt_tokens = IntOr(usage, "prompt_tokens", resp_.usage.prompt_tokens);
  resp_.usage.completion_tokens = IntOr(usage, "completion_tokens", resp_.usage.completion_tokens);
  if (auto d = usage.find("prompt_tokens_details"); d != usage.end() && d->is_object()) {
    if (d->contains("cached_tokens")) {
      resp_.usage.cached_tokens = IntOr(*d, "cached_tokens", 0);
      has_cached_detail_ = true;
    }
  }
}

void StreamAssembler::ApplyTimings(const Json& timings) {
  has_timings_ = true;
  timings_cache_n_ = IntOr(timings, "cache_n", timings_cache_n_);
  timings_prompt_n_ = IntOr(timings, "prompt_n", timings_prompt_n_);
}

ChatResponse StreamAssembler::Take() {
  resp_.finish_reason = finish_reason_;
  resp_.tool_calls.clear();
  for (auto& [index, call] : tools_) resp_.tool_calls.push_back(call);
  if (has_timings_) {
    resp_.usage.reported = true;
    // llama.cpp: cache_n tokens came from the cache, prompt_n were evaluated.
    if (!has_cached_detail_) resp_.usage.cached_tokens = timings_cache_n_;
    // Older llama.cpp reports only the evaluated tokens as prompt_tokens.
    resp_.usage.prompt_tokens =
        std::max(resp_.usage.prompt_tokens, timings_cache_n_ + timings_prompt_n_);
  }
  return std::move(resp_);
}

}  // namespace maestro::llm
