// The task's append-only record files besides the conversation (seed 002):
//   SummaryStore          summaries.jsonl   one record per compression
//   ToolStore             tools.jsonl       the tool-call ledger
//   EventLog              events.jsonl      audit events of this task
//   PlanningHistoryStore  planning/         plan history when a piece plans
//
// Where they sit: the agent loop records each tool call in the ToolStore
// (the handoff's fallback and files_changed check read it back), the
// ContextCompressor records summaries, and the engine's audit events go to
// EventLog. All are JsonlLog files: O(1) appends, torn last line cut on open.
//
// Thread safety: one owner thread per task, like MessageStore.
#pragma once

#include <optional>
#include <set>
#include <string>

#include "context/jsonl_log.h"
#include "core/clock.h"
#include "core/json.h"

namespace maestro::context {

struct SummaryRecord {
  int64_t id = 0;  // assigned on append (1-based)
  int64_t start_seq = 0;
  int64_t end_seq = 0;
  std::string summary;
  int64_t original_tokens = 0;  // estimate of the summarized messages
  int64_t summary_tokens = 0;   // estimate of the summary message
  double ratio = 0;             // summary_tokens / original_tokens
  int64_t tokens_before = 0;    // prompt estimate before compression
  int64_t tokens_after = 0;     // prompt estimate after compression (recomputed)
  std::string job_id;
  std::string timestamp;
};

class SummaryStore {
 public:
  static Result<SummaryStore> Open(const std::string& dir, Clock* clock);
  Result<int64_t> Add(SummaryRecord record);
  Result<std::optional<SummaryRecord>> Latest() const;
  int64_t count() const { return log_.count(); }
  const std::string& path() const { return log_.path(); }

 private:
  JsonlLog log_;
  Clock* clock_ = nullptr;
};

struct ToolCallRecord {
  int64_t seq = 0;  // assigned on append
  std::string job_id;
  std::string call_id;  // the model's tool_call id
  std::string tool;
  Json args = Json::object();
  std::string status = "success";  // success | error
  std::string result;              // on success (may be truncated by the caller)
  std::string error;               // on error
  int64_t duration_ms = 0;
  TimeMs started_at = 0;
  TimeMs finished_at = 0;
};

// Tools whose successful calls change files; the path is args["path"].
bool IsFileWritingTool(const std::string& tool);

class ToolStore {
 public:
  static Result<ToolStore> Open(const std::string& dir, Clock* clock);
  Result<int64_t> AddToolCall(const ToolCallRecord& record);
  Status ForEach(const std::function<bool(const ToolCallRecord&)>& fn) const;
  // Paths written by successful file-writing calls (optionally of one job).
  Result<std::set<std::string>> ChangedPaths(const std::string& job_id = {}) const;
  int64_t count_tool_calls() const { return log_.count(); }
  const std::string& path() const { return log_.path(); }

 private:
  JsonlLog log_;
  Clock* clock_ = nullptr;
};

class EventLog {
 public:
  static Result<EventLog> Open(const std::string& dir, Clock* clock);
  Result<int64_t> Append(const std::string& type, const Json& payload,
                         const std::string& job_id = {});
  Status ForEach(const std::function<bool(const Json&)>& fn) const { return log_.ForEach(fn); }
  int64_t count() const { return log_.count(); }

 private:
  JsonlLog log_;
  Clock* clock_ = nullptr;
};

// planning/history.jsonl (every entry) + planning/latest_plan.json (the
// newest plan, rewritten atomically).
class PlanningHistoryStore {
 public:
  static Result<PlanningHistoryStore> Open(const std::string& planning_dir, Clock* clock);
  Status SavePlan(const Json& plan, const std::string& job_id = {});
  bool HasPlan() const;
  Result<Json> LatestPlan() const;
  Result<int64_t> AppendEntry(const std::string& type, const Json& entry);

 private:
  std::string dir_;
  JsonlLog log_;
  Clock* clock_ = nullptr;
};

}  // namespace maestro::context
