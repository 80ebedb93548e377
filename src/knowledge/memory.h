// Memory (issue 21): a space's notes that outlive its tasks — what an agent
// found worth remembering about the project ("the tests need `make
// fixtures` first"), read and appended to through the Memory tool
// (knowledge_tools.h) when `memory.enabled` is set.
//
// Whose notes (issue 44): a task in a space shares the space's memory,
// `<data_dir>/memory/<space>/`, with every task of that space whatever its
// visibility — its workspace, the space's directory, is shared the same
// way. A task without a space has its owner's memory,
// `<data_dir>/memory/~users/<owner>/` (the owner escaped into one safe path
// component; `~` is never in a space name, so no space can name it): never
// another user's. The old shared `memory/default` of space-less tasks is
// read by no task (docs/security.md says what an operator may do with it).
//
// Files, per folder:
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

// The memory folder of a task in `space` owned by `owner`: the space's when
// `space` is set, else the owner's own (OwnerMemoryDir).
std::string MemoryDir(const std::string& data_dir, const std::string& space,
                      const std::string& owner);
// A space's memory folder; "" for an empty or dot-only name (no folder).
std::string SpaceMemoryDir(const std::string& data_dir, const std::string& space);
// The same, for callers that name a space: without one it is "" (no
// memory), never a folder shared by every space-less task.
inline std::string MemoryDir(const std::string& data_dir, const std::string& space) {
  return SpaceMemoryDir(data_dir, space);
}
// One user's own memory folder: `<data_dir>/memory/~users/<component>`,
// where the component is OwnerPathComponent(owner).
std::string OwnerMemoryDir(const std::string& data_dir, const std::string& owner);
// `owner` as one path component, one-to-one: letters, digits, '-' and '_'
// kept, every other byte %XX (so no '/', no '.', no "..", no NUL); an owner
// whose escape is over 128 bytes becomes "~" + its SHA-256 hex. The empty
// owner (a task created without auth) is "~none".
std::string OwnerPathComponent(const std::string& owner);

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
