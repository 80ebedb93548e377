// OpenAI chat messages as the engine writes them to current.jsonl, for the
// tests that build a conversation by hand.
#pragma once

#include <string>
#include <vector>

#include "core/json.h"

namespace maestro::engine::test {

inline Json Sys(const std::string& text = "static") {
  return {{"role", "system"}, {"content", text}};
}
inline Json User(const std::string& text) { return {{"role", "user"}, {"content", text}}; }
// One entry of an assistant message's tool_calls.
inline Json Call(const std::string& id, const std::string& name, const std::string& args = "{}") {
  return {{"id", id}, {"type", "function"}, {"function", {{"name", name}, {"arguments", args}}}};
}
// An assistant message; tool_calls only when it makes calls.
inline Json Asst(const std::string& text, std::vector<Json> calls = {}) {
  Json m = {{"role", "assistant"}, {"content", text}};
  if (!calls.empty()) m["tool_calls"] = std::move(calls);
  return m;
}
inline Json Tool(const std::string& id, const std::string& content) {
  return {{"role", "tool"}, {"tool_call_id", id}, {"content", content}};
}

}  // namespace maestro::engine::test
