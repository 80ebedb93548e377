#include "fakellm/script.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace maestro::fakellm {

const char kScriptHelp[] = R"(SCRIPT FORMAT (--script FILE, JSON or YAML)
  {
    "replies": [ REPLY, ... ],   # consumed in order, each `repeat` times
    "default": REPLY             # optional: used when no reply is left/matches
  }
  A request takes the first reply that has uses left and whose `match` (all
  given conditions) accepts it. Without a script every request gets "ok".
  REPLY fields:
    match:              {last_message_contains: STR, any_message_contains: STR|[STR,...],
                         tool_offered: TOOL_NAME, system_contains: STR}
                        any_message_contains with a list: each STR is in some
                        message (e.g. [a task's tag, a marker of its step])
    text:               assistant content
    reasoning:          reasoning_content (streamed before the text)
    tool_calls:         [{name: STR, arguments: OBJECT|STRING, id?: STR}, ...]
    finish_reason:      default "tool_calls" when tool_calls are given, else "stop"
    status:             HTTP status; not 200 = error reply (e.g. 429, 500, 400)
    error_message:      message of the error reply
    retry_after:        seconds, sent as Retry-After
    retry_after_ms:     sent as retry-after-ms
    cut_after:          streaming: close the connection after N data events
    delay_ms:           wait before the first byte
    token_delay_ms:     wait between streamed events
    chunk_chars:        content bytes per delta (default 8)
    keepalive:          true = ": keep-alive" comments between events
    repeat:             uses of this reply (default 1, 0 = unlimited)
  Example (YAML):
    replies:
      - status: 429
        retry_after_ms: 50
      - tool_calls: [{name: ReadFile, arguments: {path: README.md}}]
      - match: {last_message_contains: "README"}
        text: "Done."
)";

namespace {

Result<ScriptReply> ParseReply(const Json& j, int index) {
  if (!j.is_object()) return InvalidArgument(fmt::format("replies[{}] is not an object", index));
  ScriptReply r;
  r.index = index;
  static const std::vector<std::string> kKeys = {
      "match",    "text",           "reasoning",   "tool_calls",     "finish_reason",
      "status",   "error_message",  "retry_after", "retry_after_ms", "cut_after",
      "delay_ms", "token_delay_ms", "chunk_chars", "keepalive",      "repeat"};
  try {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (std::find(kKeys.begin(), kKeys.end(), it.key()) == kKeys.end()) {
        return InvalidArgument(fmt::format("replies[{}]: unknown key '{}'", index, it.key()));
      }
    }
    if (j.contains("match")) {
      const Json& m = j["match"];
      r.match_last_message_contains = m.value("last_message_contains", "");
      if (m.contains("any_message_contains")) {
        const Json& any = m["any_message_contains"];
        if (any.is_string()) {
          r.match_any_message_contains.push_back(any.get<std::string>());
        } else if (any.is_array()) {
          for (const Json& one : any) {
            r.match_any_message_contains.push_back(one.get<std::string>());
          }
        } else {
          return InvalidArgument(fmt::format(
              "replies[{}]: match.any_message_contains must be a string or a list of strings",
              index));
        }
      }
      r.match_tool_offered = m.value("tool_offered", "");
      r.match_system_contains = m.value("system_contains", "");
    }
    r.text = j.value("text", "");
    r.reasoning = j.value("reasoning", "");
    if (j.contains("tool_calls")) {
      int n = 0;
      for (const Json& tc : j["tool_calls"]) {
        ScriptToolCall c;
        c.name = tc.at("name").get<std::string>();
        c.id = tc.value("id", fmt::format("call_{}_{}", index, n++));
        const Json args = tc.value("arguments", Json::object());
        c.arguments = args.is_string() ? args.get<std::string>() : args.dump();
        r.tool_calls.push_back(std::move(c));
      }
    }
    r.finish_reason = j.value("finish_reason", r.tool_calls.empty() ? "stop" : "tool_calls");
    r.status = j.value("status", 200);
    r.error_message = j.value("error_message", fmt::format("scripted error {}", r.status));
    r.retry_after_s = j.value("retry_after", int64_t{-1});
    r.retry_after_ms = j.value("retry_after_ms", int64_t{-1});
    r.cut_after = j.value("cut_after", -1);
    r.delay_ms = j.value("delay_ms", int64_t{0});
    r.token_delay_ms = j.value("token_delay_ms", int64_t{0});
    r.chunk_chars = std::max(1, j.value("chunk_chars", 8));
    r.keepalive = j.value("keepalive", false);
    r.repeat = j.value("repeat", 1);
  } catch (const Json::exception& e) {
    return InvalidArgument(fmt::format("replies[{}]: {}", index, e.what()));
  }
  return r;
}

bool MessageContains(const Json& msg, const std::string& needle) {
  if (!msg.is_object() || !msg.contains("content")) return false;
  const Json& c = msg["content"];
  std::string text = c.is_string() ? c.get<std::string>() : c.dump();
  return text.find(needle) != std::string::npos;
}

bool Matches(const ScriptReply& r, const Json& req) {
  static const Json kEmpty = Json::array();
  const Json& msgs =
      req.contains("messages") && req["messages"].is_array() ? req["messages"] : kEmpty;
  if (!r.match_last_message_contains.empty() &&
      (msgs.empty() || !MessageContains(msgs.back(), r.match_last_message_contains))) {
    return false;
  }
  for (const std::string& needle : r.match_any_message_contains) {
    bool any = false;
    for (const Json& m : msgs) any = any || MessageContains(m, needle);
    if (!any) return false;
  }
  if (!r.match_system_contains.empty() && (msgs.empty() || msgs[0].value("role", "") != "system" ||
                                           !MessageContains(msgs[0], r.match_system_contains))) {
    return false;
  }
  if (!r.match_tool_offered.empty()) {
    bool found = false;
    if (req.contains("tools") && req["tools"].is_array()) {
      for (const Json& t : req["tools"]) {
        const Json& fn = t.contains("function") ? t["function"] : t;
        if (fn.is_object() && fn.value("name", "") == r.match_tool_offered) found = true;
      }
    }
    if (!found) return false;
  }
  return true;
}

}  // namespace

Script::Script(std::vector<ScriptReply> replies, ScriptReply default_reply)
    : replies_(std::move(replies)), default_(std::move(default_reply)) {
  for (const ScriptReply& r : replies_) uses_.push_back(r.repeat);
}

Result<Script> Script::FromJson(const Json& doc) {
  std::vector<ScriptReply> replies;
  ScriptReply default_reply;
  default_reply.text = "ok";
  default_reply.finish_reason = "stop";
  if (!doc.is_object()) return InvalidArgument("script must be an object with 'replies'");
  if (doc.contains("replies")) {
    if (!doc["replies"].is_array()) return InvalidArgument("'replies' must be a list");
    int i = 0;
    for (const Json& r : doc["replies"]) {
      MAESTRO_ASSIGN_OR_RETURN(ScriptReply reply, ParseReply(r, i++));
      replies.push_back(std::move(reply));
    }
  }
  if (doc.contains("default")) {
    MAESTRO_ASSIGN_OR_RETURN(default_reply, ParseReply(doc["default"], -1));
  }
  return Script(std::move(replies), std::move(default_reply));
}

Result<Script> Script::Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot read script " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  Json doc = Json::parse(text, nullptr, false);
  if (doc.is_discarded()) {
    MAESTRO_ASSIGN_OR_RETURN(YAML::Node node, ParseYaml(text, path));
    doc = YamlToJson(node);
  }
  auto s = FromJson(doc);
  if (!s.ok()) return InvalidArgument(path + ": " + s.status().message());
  return s;
}

ScriptReply Script::Next(const Json& request) {
  MutexLock lock(&mu_);
  for (size_t i = 0; i < replies_.size(); ++i) {
    if (uses_[i] == 0 && replies_[i].repeat != 0) continue;
    if (!Matches(replies_[i], request)) continue;
    if (replies_[i].repeat != 0) --uses_[i];
    return replies_[i];
  }
  return default_;
}

}  // namespace maestro::fakellm
