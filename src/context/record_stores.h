// The task's record files besides the conversation (seed 002):
//   SummaryStore  summaries.jsonl  one record per compression
//   ToolStore     tools.jsonl      the tools ledger, read as one fact per call
//   EventLog      events.jsonl     audit events of this task
//
// Where they sit: the ContextCompressor records summaries and the engine's
// audit events go to EventLog — JsonlLog files: O(1) appends, torn last line
// cut on open. tools.jsonl belongs to the tools ledger (context/ledger.h, its
// one writer and format); ToolStore is the context's read-only view of it:
// the handoff's fallback and files_changed check read it back.
//
// Thread safety: one owner thread per task, like MessageStore.
#pragma once

#include <optional>
#include <set>
#include <string>

#include "context/jsonl_log.h"
#include "core/clock.h"
#include "core/env.h"
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
  static Result<SummaryStore> Open(const std::string& dir, Clock* clock, Env* env = Env::Default());
  Result<int64_t> Add(SummaryRecord record);
  Result<std::optional<SummaryRecord>> Latest() const;
  int64_t count() const { return log_.count(); }
  const std::string& path() const { return log_.path(); }

 private:
  JsonlLog log_;
  Clock* clock_ = nullptr;
};

// One ended tool call (the tools ledger's `finished`/`error`, with the args
// of its `started` or of its one record).
struct ToolCallRecord {
  int64_t seq = 0;  // the ending record's seq
  std::string job_id;
  std::string call_id;  // the model's tool_call id
  std::string tool;
  Json args = Json::object();
  std::string status = "success";  // success | error
  std::string result;              // on success (the ledger keeps its first kLedgerResultBytes)
  std::string error;               // on error
  int64_t duration_ms = 0;
};

// Tools whose successful calls change files; the path is args["path"].
bool IsFileWritingTool(const std::string& tool);

class ToolStore {
 public:
  ToolStore() = default;
  // The view of `dir`/tools.jsonl; `env` (not owned) outlives it.
  ToolStore(std::string dir, Env* env) : dir_(std::move(dir)), env_(env) {}

  // Every ended call, in ledger order. A call still open (or `reconciled`)
  // is not a fact about its outcome and is skipped.
  Status ForEach(const std::function<bool(const ToolCallRecord&)>& fn) const;
  // Paths written by successful file-writing calls (optionally of one job).
  Result<std::set<std::string>> ChangedPaths(const std::string& job_id = {}) const;
  // How many calls ended.
  Result<int64_t> CountEndedCalls() const;
  std::string path() const { return dir_ + "/tools.jsonl"; }

 private:
  std::string dir_;
  Env* env_ = nullptr;
};

class EventLog {
 public:
  static Result<EventLog> Open(const std::string& dir, Clock* clock, Env* env = Env::Default());
  Result<int64_t> Append(const std::string& type, const Json& payload,
                         const std::string& job_id = {});
  Status ForEach(const std::function<bool(const Json&)>& fn) const { return log_.ForEach(fn); }
  int64_t count() const { return log_.count(); }

 private:
  JsonlLog log_;
  Clock* clock_ = nullptr;
};

}  // namespace maestro::context
