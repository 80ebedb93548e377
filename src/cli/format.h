// Terminal text for the `maestro task …` commands: aligned tables, relative
// ages ("3m ago") and the summaries of GET /api/local/tasks[/:id]. Pure
// functions of the server's JSON and a "now", so they are unit-tested
// without a server (tests/unit/cli/format_test.cc). `--json` bypasses them.
//
// Also the exact commands a person types to answer a question or decide a
// request, shared by `task show`, `task watch` and `maestro run`.
//
// Thread safety: stateless.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/json.h"

namespace maestro::cli {

// "just now" (< 5 s), "42s ago", "3m ago", "5h ago", "2d ago"; "-" when
// `then_ms` is 0 (never). A time in the future counts as just now.
std::string RelativeAge(int64_t now_ms, int64_t then_ms);

// Rows as columns padded to the widest cell, two spaces apart; the last
// column is not padded. The first row is the header.
std::string Table(const std::vector<std::vector<std::string>>& rows);

// The task's display title: `title`, else the first line of its
// instruction, cut to `max_bytes` at a character ("…" appended when cut).
std::string TaskTitle(const Json& task, size_t max_bytes = 60);

// GET /api/local/tasks → ID (8 chars) STATUS PIECE AGE TITLE; "no tasks"
// when empty.
std::string TaskListText(const Json& list, int64_t now_ms);

// GET /api/local/tasks/:id (plus, when non-null, its comments as
// GET …/comments) → a summary: title, status, piece, space, created, each
// job, the open question, pending requests with the commands to decide them,
// the result.
std::string TaskShowText(const Json& detail, const Json& comments, int64_t now_ms);

// `maestro task comment <task> "<answer>"`.
std::string AnswerCommand(const std::string& task_id);
// The approve/deny command lines for one pending request (RequestJson):
// "approve: maestro task approve T R --kind tool" ... each ending in "\n",
// indented by `indent`. Tool requests also get the `--scope task` variant.
std::string DecideCommands(const std::string& task_id, const Json& request,
                           const std::string& indent);

// One tool call as a terminal line: "[tool Name] {args…}" cut to ~100
// bytes, " (error)" appended when the call failed.
std::string ToolCallLine(const std::string& name, const std::string& arguments, bool is_error);

}  // namespace maestro::cli
