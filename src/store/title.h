// Task titles: the one rule for a task created without a title, and the
// check a title set later (PATCH /api/local/tasks/:id) must pass.
//
// Where it sits: SqlStore::CreateTask calls AutoTitle when NewTask::title is
// empty, so every create path — the API, MCP create_task, the local CLI, a
// SpinOffTask child — names its task the same way; SqlStore::SetTaskTitle
// and the PATCH route call CheckTitle.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace maestro {

// Longest automatic title, in characters (code points), "…" included.
inline constexpr size_t kAutoTitleMaxChars = 80;
// Longest title a person may set, in characters, after trimming.
inline constexpr size_t kTitleMaxChars = 200;

// A title for `instruction`: its first line that has text once trimmed and
// stripped of markdown heading, list and quote markers (`#`, `-`, `*`, `>`),
// with tabs and other control characters turned into single spaces; over
// kAutoTitleMaxChars it is cut at a word boundary (mid-word only when the
// first word alone is too long) and "…" appended. Always valid UTF-8 (an
// invalid byte becomes U+FFFD, a character is never cut). "" when no line
// has text.
std::string AutoTitle(std::string_view instruction);

// Ok with `*out` = `title` trimmed when that is 1..kTitleMaxChars characters
// of valid UTF-8 without control characters; otherwise kInvalidArgument
// naming the field "title".
Status CheckTitle(std::string_view title, std::string* out);

}  // namespace maestro
