// TranscriptReplay: turns a task's transcript.jsonl into the prior turns a
// new job's conversation starts with (seed 000 §3.3).
//
// Where it sits: when a job starts from a finished one — Continue, and here
// also comment/ASK follow-ups (DESIGN.md §5 "deliberately beyond") — the
// prompt paths (prompt_paths.h) replay every thread of the transcript between
// the new system message and the final user message, so the agent keeps its
// working context and the server can reuse the cached prefix.
//
// Rules, in order:
//  1. Threads split at system lines (one thread per job); all threads are
//     replayed oldest first. Lines before the first system line form a thread.
//  2. Each thread is cleaned on its own (ids are paired within a thread, so
//     a reused `gen_call_1` in another job cannot resurrect a finished call).
//  3. The thread's system line is dropped.
//  4. A `complete` call whose result does not start with "Error" (or has no
//     result) is dropped, together with every `transition` call of the same
//     assistant message. An Error-answered `complete` is kept (the
//     conversation went on after it).
//  4b. An answered `complete` with status needs_user_input (an ASK) is kept
//     with its result (its co-emitted transitions still go): the user turn
//     after it answers that question, and without the call the answer would
//     arrive without it (issue 45 item 1; beyond seed 000, which drops every
//     non-Error complete). Its bytes are the ASK request's reply, so the
//     follow-up keeps the cached prefix through it.
//  5. Answered `transition` calls are kept only in the last thread and only
//     when `keep_transitions_in_last_thread` (a same-piece Continue); dropped
//     everywhere else.
//  6. Unanswered calls, orphan tool results (no call, or a dropped call) and
//     assistant messages left with neither content nor calls are dropped.
//  7. Call ids that collide with an earlier thread's are renamed
//     deterministically: `{id}_t{thread}` (plus `_{n}` while still taken).
//  8. An empty last thread (a job that crashed after its system line) stays
//     the "last thread": the thread before it is an old thread and loses its
//     transitions. Dropping transitions is the safe direction (seed 000).
//
// The file is read line by line; a torn or unparsable line is skipped and
// counted. Thread safety: pure functions; they only read the file.
#pragma once

#include <string>
#include <vector>

#include "core/json.h"
#include "core/status.h"

namespace maestro::engine {

struct ReplayOptions {
  // keepTransitions for the last thread: true for a same-piece Continue (and
  // a follow-up on the same piece), false for a cross-piece Continue.
  bool keep_transitions_in_last_thread = true;
};

struct ReplayStats {
  int threads = 0;
  int skipped_lines = 0;  // unparsable / non-object lines
  int dropped_completes = 0;
  int kept_asks = 0;               // rule 4b
  int dropped_transitions = 0;     // co-emitted or not kept
  int dropped_unanswered = 0;      // regular calls with no result
  int dropped_orphan_results = 0;  // tool results with no (kept) call
  int dropped_empty_assistants = 0;
  int renamed_ids = 0;
};

struct ReplayResult {
  std::vector<Json> messages;  // OpenAI messages without any system message
  ReplayStats stats;
};

// The functions take messages by value and move them: a transcript is
// parsed once and never copied.

// Rule 1. Each returned thread starts with its system line (except a leading
// headless one).
std::vector<std::vector<Json>> SplitThreads(std::vector<Json> lines);

// Rules 3–6 on one thread.
std::vector<Json> CleanThread(std::vector<Json> thread, bool keep_transitions, ReplayStats* stats);

// Rules 1–8 on messages already in memory.
ReplayResult ReplayMessages(std::vector<Json> lines, const ReplayOptions& options);

// Rules 1–8 on a transcript.jsonl. A missing file replays nothing (a task with
// no transcript yet); an unreadable one is kUnavailable.
Result<ReplayResult> ReplayTranscriptFile(const std::string& path, const ReplayOptions& options);

}  // namespace maestro::engine
