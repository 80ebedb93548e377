// Script: the scripted replies of maestro-fakellm.
//
// A script file (JSON, or YAML with the same shape) lists replies; each
// request consumes the first reply, in file order, that still has uses left
// and whose optional `match` accepts the request. That makes multi-step agent
// runs deterministic: replies without `match` play in sequence, replies with
// `match` wait for the request they are meant for, so concurrent agent runs
// each get their own replies when every match names a tag of its run. kScriptHelp (shown by
// --help) is the format reference.
//
// Thread safety: Script is internally synchronised (Next() may be called from
// the server's worker threads).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/mutex.h"
#include "core/status.h"

namespace maestro::fakellm {

extern const char kScriptHelp[];

struct ScriptToolCall {
  std::string id;  // default "call_<n>"
  std::string name;
  std::string arguments;  // compact JSON text
};

struct ScriptReply {
  // Match (all given conditions must hold).
  std::string match_last_message_contains;
  // Each string is in some message (not necessarily the same one): a reply
  // for one step of one task among many running at once, e.g. {task tag,
  // the previous tool's result}.
  std::vector<std::string> match_any_message_contains;
  std::string match_tool_offered;
  std::string match_system_contains;
  // Answer.
  std::string text;
  std::string reasoning;
  std::vector<ScriptToolCall> tool_calls;
  std::string finish_reason;  // default: "tool_calls" if any, else "stop"
  // Faults and pacing.
  int status = 200;  // non-200: an error reply with this status
  std::string error_message;
  int64_t retry_after_s = -1;   // Retry-After header
  int64_t retry_after_ms = -1;  // retry-after-ms header
  int cut_after = -1;           // close the stream after this many data events
  int64_t delay_ms = 0;         // before the first byte of the body
  int64_t token_delay_ms = 0;   // between stream events
  int chunk_chars = 8;          // text bytes per content delta
  bool keepalive = false;       // a ": keep-alive" comment between events
  int repeat = 1;               // uses; 0 = unlimited

  int index = -1;  // position in the file
};

class Script {
 public:
  Script() { default_.text = "ok"; }
  // Parses a JSON or YAML document of the documented shape.
  static Result<Script> FromJson(const Json& doc);
  static Result<Script> Load(const std::string& path);

  // The reply for `request` (and consumes one use), or the default reply.
  ScriptReply Next(const Json& request);

 private:
  // Each reply starts with its `repeat` uses.
  Script(std::vector<ScriptReply> replies, ScriptReply default_reply);

  Mutex mu_;
  std::vector<ScriptReply> replies_;
  std::vector<int> uses_ GUARDED_BY(mu_);
  ScriptReply default_;

 public:
  // Movable (the mutex is not moved); not copyable.
  Script(Script&& o) noexcept
      : replies_(std::move(o.replies_)),
        uses_(std::move(o.uses_)),
        default_(std::move(o.default_)) {}
  Script& operator=(Script&& o) noexcept {
    MutexLock self(&mu_);
    MutexLock other(&o.mu_);
    replies_ = std::move(o.replies_);
    uses_ = std::move(o.uses_);
    default_ = std::move(o.default_);
    return *this;
  }
};

}  // namespace maestro::fakellm
