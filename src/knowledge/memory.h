// Memory (issue 21): a space's notes that outlive its tasks — what an agent
// found worth remembering about the project ("the tests need `make
// fixtures` first"), read and appended to through the Memory tool
// (knowledge_tools.h) when `memory.enabled` is set.
//
// Files, per space (`default` for ephemeral workspaces), under
// `<data_dir>/memory/<space>/`:
//   log.jsonl   the append-only log, one note per line:
//               {"at": ms, "topic": "...", "text": "...", "task_id": "..."}
//               (one write(2) per line on O_APPEND: several jobs, even on
//               several hosts of one shared data dir, append safely)
//   MEMORY.md   the compacted view — the notes grouped by topic, topics
//               sorted — rewritten (temp + rename) after each append, for
//               people; the tool reads the log itself.
// The system text carries only the index: the topic names, sorted
// (MemoryIndexText). A topic appears in it once it has a note, so the
// prefix changes only when a new topic is born, never per note.
//
// Thread safety: the functions may run concurrently; appends are single
// writes, the view rewrite is atomic.
#pragma once

#include <string>
#include <vector>

#include "core/clock.h"
#include "core/env.h"
#include "core/status.h"

namespace maestro::knowledge {

struct MemoryNote {
  TimeMs at = 0;
  std::string topic;
  std::string text;
  std::string task_id;
};

// The space's memory folder.
std::string MemoryDir(const std::string& data_dir, const std::string& space);

// Every note in log order; a torn or foreign line is skipped. A missing
// log is no notes.
Result<std::vector<MemoryNote>> ReadMemory(Env& env, const std::string& dir);

// Appends one note and rewrites MEMORY.md. kInvalidArgument naming the
// field for an empty or oversized topic/text.
Status AppendMemory(Env& env, const std::string& dir, const MemoryNote& note);

// The sorted topic names as index lines; "" when there are none.
std::string MemoryIndexText(const std::vector<MemoryNote>& notes);

// The compacted view (MEMORY.md's text) of `notes`, or of one topic.
std::string MemoryView(const std::vector<MemoryNote>& notes, const std::string& topic = "");

}  // namespace maestro::knowledge
