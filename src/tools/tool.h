// Tool: the contract between the agent loop and one tool the model can call.
//
// Where it sits: the agent loop receives tool calls from the LLM stream and
// hands them, as a batch, to the Dispatcher (dispatcher.h). The dispatcher
// looks each name up in the ToolRegistry, validates the arguments against the
// tool's JSON schema, asks the ToolAuthorizer (policy ∪ grants), records the
// call in the ToolLedger and finally calls the tool's handler with a
// ToolContext. Whatever happens, the model gets a ToolResult string back; an
// expected failure is a result that starts with "Error:", never an exception.
//
// Thread safety: ToolSpec/ToolCall/ToolResult are values. A handler may be
// called concurrently from several threads when its spec is read_only.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "core/cancel.h"
#include "core/env.h"
#include "core/json.h"
#include "core/status.h"

namespace maestro::tools {

// Permission class of a tool; the ToolPolicy maps each class to a switch.
enum class ToolClass {
  kRead,     // ReadFile, ListDir, Glob, Grep: needs the name in allowed_tools
  kEdit,     // WriteFile, EditFile: also needs edit_allowed
  kShell,    // RunCommand: also needs shell_allowed (network: network_allowed)
  kControl,  // complete, transition, RequestTool, ...: always available (the
             // way to ask for permission must never itself need permission)
  kAgent,    // delegate, SpinOffTask, WaitSubTask: needs the name in allowed_tools
};

struct ToolSpec {
  std::string name;
  std::string description;
  Json parameters = Json::object();  // JSON schema of the arguments (type: object)
  bool read_only = false;            // no side effect: may run in parallel, may be re-run
  ToolClass tool_class = ToolClass::kRead;
  std::chrono::milliseconds timeout{30'000};
  size_t output_cap_bytes = 32 * 1024;  // the result is cut to this (head + tail kept)
  // Outside the policy only a grant bound to the call's arguments (scope
  // once) opens it, never a task-wide grant (MCP `approval: always`).
  bool approve_each_call = false;
};

// One call as the model emitted it.
struct ToolCall {
  std::string id;  // the model's tool_call id
  std::string name;
  Json arguments = Json::object();
};

struct ToolResult {
  std::string call_id;
  std::string content;  // what the model reads
  bool is_error = false;
  int64_t duration_ms = 0;  // set by the Dispatcher for calls that ran
  // Set by a regular tool whose call must park the job (BrowseWeb on a login
  // page: "browser_login"): the engine settles the movement as
  // WAITING_HUMAN_BROWSER with this wait reason, resuming in it. "" = none.
  std::string park_wait_reason = "";

  static ToolResult Ok(std::string content) { return {{}, std::move(content), false, 0}; }
  // "Error: <message>" — the prefix the transcript rules key on.
  static ToolResult Error(const std::string& message) { return {{}, "Error: " + message, true, 0}; }
};

// Identifies one call across crashes and retries: (task, job, call id). A
// side-effecting tool can use it to make its effect idempotent.
struct IdempotencyKey {
  std::string task_id;
  std::string job_id;
  std::string call_id;
  std::string ToString() const { return task_id + "/" + job_id + "/" + call_id; }
};

// What a handler may use. Borrowed pointers live for the whole call.
struct ToolContext {
  std::string workspace_root;  // canonical absolute path of the workspace
  bool network_allowed = false;
  IdempotencyKey key;
  CancelToken* cancel = nullptr;  // the job's token; may be null in tests
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  // The task's installed packages (<data>/tasks/<task>/packages, one dir per
  // ecosystem, written by the PackageInstaller); RunCommand binds it
  // read-only. "" = none.
  std::string packages_dir;
  // W3C traceparent of the call's execute_tool span ("" = not traced); MCP
  // tools send it in the request's params._meta.
  std::string traceparent;
  Env* env = Env::Default();  // the files and processes a tool touches

  bool Expired() const {
    return (cancel && cancel->IsCancelled()) || std::chrono::steady_clock::now() >= deadline;
  }
};

using ToolHandler = std::function<ToolResult(const Json& args, const ToolContext& ctx)>;

}  // namespace maestro::tools
