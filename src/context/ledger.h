// ToolLedger: the append-only record of every tool call of a task —
// `tools.jsonl` in the task's context directory (DESIGN.md §4).
//
// Where it sits: the Dispatcher writes `started` (for a side-effecting call
// made durable with fdatasync BEFORE the tool runs) and then `finished` or `error` with the
// duration. Each record carries the call's IdempotencyKey (task, job, call
// id), which the tool also receives.
//
// Why: a worker can die between a side effect and its record. On recovery,
// PlanRecovery() reads the ledger and splits the calls that started but never
// finished: a read-only one is simply re-run; a side-effecting one (a write,
// a command) is NOT silently repeated — the engine parks the job with
// wait_reason=reconcile and a comment saying which call may or may not have
// taken effect. Once a person has looked, Reconciled() closes the call.
//
// Park tools (RequestTool, RequestPackage, SpinOffTask, WaitSubTask) are
// handled by the engine, not the Dispatcher; it records each of them once,
// after the call was handled: `parked` when the call parked the job (the
// re-issued call after the resume is recorded again), else `finished` /
// `error` — both with the args and no `started` (nothing to reconcile).
//
// The engine also records, through TaskContext::RecordToolCall, a call it
// ran without a Dispatcher (RecordEnded: one `finished`/`error` record with
// the args, no `started`). This class is the file's only writer and its
// format the only one: src/context's ToolStore, the tool cards, transcript
// replay and recovery all read it through Read().
//
// Format: one JSON object per line {"seq","event","task_id","job_id",
// "call_id","tool","args"?,"read_only","ts","duration_ms"?,"result"?}.
// Every record of a side-effecting call (and every park, reconcile and
// engine-run record) is fdatasync'ed before its call returns (durable
// against power loss, core/durable_file.h); a read-only call's records are
// written without it — an OS crash may lose them, and then the read is run
// again, which is what recovery does with an open read-only call anyway. Open cuts a torn last line
// (a crash mid-append); on read any line that is not a record is skipped — that includes lines
// without an `event`, the one-line-per-call shape that versions before the single format wrote when
// no Dispatcher ran.
//
// Thread safety: all methods may be called from any thread (one mutex
// serializes appends; parallel read-only calls share one ledger).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/durable_file.h"
#include "core/env.h"
#include "core/json.h"
#include "core/mutex.h"
#include "core/status.h"
#include "tools/tool.h"

namespace maestro::tools {

struct LedgerRecord {
  int64_t seq = 0;
  std::string event;  // started | finished | error | reconciled | parked
  IdempotencyKey key;
  std::string tool;
  Json args;  // on `started`, and on the one record of a park tool call
  bool read_only = false;
  TimeMs ts = 0;
  int64_t duration_ms = 0;
  std::string result;  // finished/error: the result (first kLedgerResultBytes)
};

inline constexpr size_t kLedgerResultBytes = 4096;

class ToolLedger {
 public:
  // Opens (creating `dir` and) `dir`/tools.jsonl; continues the sequence of
  // what is there. `env` (not owned) outlives the ledger.
  static Result<std::unique_ptr<ToolLedger>> Open(const std::string& dir, Clock* clock,
                                                  Env* env = Env::Default());
  ToolLedger(const ToolLedger&) = delete;
  ToolLedger& operator=(const ToolLedger&) = delete;

  Status Started(const IdempotencyKey& key, const std::string& tool, const Json& args,
                 bool read_only);
  // event = result.is_error ? "error" : "finished".
  Status Finished(const IdempotencyKey& key, const std::string& tool, bool read_only,
                  int64_t duration_ms, const ToolResult& result);
  // Closes a call that needed reconciliation (`note` says how it was settled).
  Status Reconciled(const IdempotencyKey& key, const std::string& tool, const std::string& note);
  // The one record of a park tool call handled by the engine: `parked` when
  // it parked the job, else `finished`/`error` (result.is_error).
  Status ParkCall(const IdempotencyKey& key, const std::string& tool, const Json& args, bool parked,
                  int64_t duration_ms, const ToolResult& result);
  // The one record of a call the engine ran without a Dispatcher:
  // `finished`/`error` (result.is_error) with the args. Returns its seq.
  Result<int64_t> RecordEnded(const IdempotencyKey& key, const std::string& tool, const Json& args,
                              int64_t duration_ms, const ToolResult& result);

  const std::string& path() const { return path_; }

  // Every complete record of `dir`/tools.jsonl, oldest first (empty when
  // there is no file).
  static Result<std::vector<LedgerRecord>> Read(const std::string& dir, Env* env = Env::Default());

 private:
  ToolLedger(std::string path, AppendFile file, int64_t next_seq, Clock* clock)
      : path_(std::move(path)), file_(std::move(file)), next_seq_(next_seq), clock_(clock) {}
  Result<int64_t> Append(LedgerRecord rec);

  const std::string path_;
  Mutex mu_;
  AppendFile file_ GUARDED_BY(mu_);
  int64_t next_seq_ GUARDED_BY(mu_);
  Clock* clock_;
};

// What recovery must do with the calls of `job_id` left open by a crash.
struct RecoveryPlan {
  std::vector<LedgerRecord> rerun;      // read-only: run again
  std::vector<LedgerRecord> reconcile;  // side-effecting: park, ask a person
  bool needs_reconciliation() const { return !reconcile.empty(); }
};

Result<RecoveryPlan> PlanRecovery(const std::string& dir, const std::string& job_id,
                                  Env* env = Env::Default());

// The comment posted when parking for reconciliation: which call, with which
// arguments, may or may not have taken effect.
std::string ReconcileComment(const RecoveryPlan& plan);

}  // namespace maestro::tools
