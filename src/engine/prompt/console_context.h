// The console in the prompt (seed 000 §3 DYNAMIC "console"): the last
// build/test output the task saw, so a job — above all a handoff
// continuation, which replays nothing — starts knowing what the last
// commands printed and how they exited.
//
// Where it sits: PieceExecutor::SeedPrompt fills DynamicContext::console with
// ConsoleContextText at every job start; BuildFinalUserMessage renders it as
// `## Console` in the one final user message (never the system message: the
// cached prefix stays the same). A task that ran no command has no console
// and the section is left out.
//
// What it holds: the task's newest `max_commands` RunCommand calls from the
// tool ledger (tools.jsonl, any job of the task: for a handoff continuation
// they are its predecessor's), oldest first. Each is "$ <command>", the
// line saying how it ended ("[exit code N]", "[timed out ...]", a limit's
// "Error: ..."), then the tail of its output: at most `max_lines` lines and
// `max_bytes` bytes, with a note of how much is left out. The output is
// taken from the ledger, which keeps the first 4096 bytes; when it cut an
// output, from the conversation archive (messages.jsonl: what the model got,
// the whole capped output) if the call's result is there.
//
// Safety: commands and output are untrusted text. Terminal escape
// sequences are removed, a carriage return keeps what the terminal would
// show (the text after it), other control bytes become \xNN, invalid UTF-8
// becomes U+FFFD, and everything sits inside one code fence longer than
// any backtick run in it, so the output cannot close the fence and pose as
// the prompt's own text.
//
// Thread safety: pure functions over the task's files; the job's thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/env.h"
#include "core/status.h"

namespace maestro::engine {

struct ConsoleLimits {
  size_t max_commands = 2;  // the newest RunCommand calls shown
  size_t max_lines = 40;    // output lines per command
  size_t max_bytes = 2048;  // output bytes per command
  size_t max_command_bytes = 200;
};

// The console section's text for the task whose ledger is `ledger_dir`/tools.jsonl
// and whose conversation archive is `archive_path` (its messages.jsonl); ""
// when the task ran no command. A missing ledger or archive is no console; an
// unreadable archive leaves the ledger's text; an unreadable ledger is the error.
Result<std::string> ConsoleContextText(Env& env, const std::string& ledger_dir,
                                       const std::string& archive_path,
                                       const ConsoleLimits& limits = {});

// `text` as a terminal would show it, safe inside a prompt: escape
// sequences removed, each line's text after its last carriage return kept,
// other control bytes but \n and \t as \xNN, invalid UTF-8 as U+FFFD.
std::string TerminalText(std::string_view text);

}  // namespace maestro::engine
