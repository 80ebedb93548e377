// EventRecords: the events role of the Store (store/store.h) — a task's
// audit log and the source of its SSE stream. Every write of the other roles
// also appends its events in its own transaction; this role appends the
// rest and reads them back.
//
// Who uses it: the engine and the task context append llm.call / tool.call /
// policy events (engine/, context/); the API streams and scans them (api/);
// the package installer appends and reads its own (sandbox/); the quota gate
// logs a refusal (store/quota_gate.h).
//
// Thread safety: every method may be called from any thread concurrently.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "store/types.h"

namespace maestro {

class EventRecords {
 public:
  virtual ~EventRecords() = default;

  // ---- events (audit log, SSE source)
  // `stats`, when not all zero, is added to the event's task in the same
  // transaction: the agent loop's llm.call and tool.call events carry the
  // counters they account for, one commit instead of two.
  virtual Result<Event> AppendEvent(const Event& event, const TaskStatsDelta& stats = {}) = 0;
  // Events of a task with id > after_id ("" = from the start), oldest first.
  // Event ids are decimal integers that only grow (the SSE Last-Event-ID).
  virtual Result<std::vector<Event>> ListEvents(const std::string& task_id,
                                                const std::string& after_id, int limit) = 0;
};

}  // namespace maestro
