// The prompt guard of the agent loop (seed 000 §3: estimate -> dedup ->
// compact -> summarize), with the seed 004 handoff hooked in before any
// lossy step.
//
// Where it sits: every iteration, after the interjections and the watchdog,
// right before the LLM call. GuardPrompt() decides WHAT is sent:
//
//   1. estimate   MessageStore::EstimatePromptTokens (calibrated by usage)
//   2. dedup      once the estimate passes the guard threshold (the lower of
//                 the handoff and compression thresholds), a tool result
//                 identical to an earlier one (a file read twice) is sent as
//                 a short reference to the earlier call. Only the SENT copy
//                 (<context>/sent.jsonl) changes; current.jsonl, the
//                 transcript and the archive keep every byte. Below the
//                 threshold nothing is touched, so the normal path is
//                 append-only; once on, dedup stays on for the job, and as it
//                 only ever replaces LATER copies, successive sent files are
//                 append-only among themselves too (one cache break, at the
//                 first duplicate, instead of one per request).
//   3. handoff    HandoffStep::BeforeCall (seed 004): over handoff_threshold
//                 the agent is asked for WriteHandoff; if it does not write
//                 one, the engine writes the fallback. While a handoff is
//                 pending nothing is summarized (compression would make the
//                 document untrue to the session — seed 004).
//   4. summarize  ContextCompressor over compression_threshold (when no
//                 handoff step is configured or none is pending).
//   5. overflow   still over context_length, or the server said the prompt
//                 does not fit: hand off now (engine-written facts from the
//                 ledger) into a continuation job; only when that is
//                 impossible too, ABORT context_overflow.
//
// Thread safety: runs on the job's thread; PromptGuardState belongs to one
// job's AgentLoopDeps.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "core/env.h"
#include "core/status.h"
#include "engine/loop/movement_result.h"

namespace maestro::engine {

struct AgentLoopDeps;

struct DedupStats {
  int results_replaced = 0;
  int64_t bytes_saved = 0;
  int64_t raw_tokens_saved = 0;  // EstimateMessageTokens before - after
};

// The text that stands for a repeated tool result in what is sent.
std::string DedupReference(const std::string& first_call_id, size_t bytes);

// The dedup copy: the JSONL conversation `in_path` copied to `out_path` line
// by line, where a role=tool message whose string content (>= min_bytes)
// equals an earlier tool result's gets DedupReference(earlier call id)
// instead; every other line is copied byte for byte. Memory: one hash per
// distinct large result.
//
// Kept up to date by appending: each Update copies only the lines `in_path`
// gained since the last one (a conversation grows by a few messages per
// request, and rewriting it whole cost O(conversation) per request: ~1 ms at
// 100k tokens). It starts over when `in_path`, `out_path` or the source's
// generation (MessageStore::current_generation: a compression or a new
// thread rewrote it) changed. Returns the totals over the whole copy.
class DedupCopy {
 public:
  Result<DedupStats> Update(Env& env, const std::string& in_path, uint64_t in_generation,
                            const std::string& out_path, size_t min_bytes);
  uint64_t out_bytes() const { return out_bytes_; }  // of out_path

 private:
  Status Restart(Env& env, const std::string& in_path, uint64_t in_generation,
                 const std::string& out_path, size_t min_bytes);

  std::string in_path_, out_path_;
  uint64_t generation_ = 0;
  size_t min_bytes_ = 0;
  std::unique_ptr<WritableFile> out_;  // null: not started, or broken by an error
  uint64_t in_done_ = 0;               // bytes of in_path (whole lines) copied
  uint64_t out_bytes_ = 0;
  std::unordered_map<std::string, std::string> first_call_;  // content hash -> call id
  DedupStats stats_;
};

// One loop's guard state (LoopState::guard: the job's own loop keeps it for
// the whole job; a delegate's sub-agent starts with a fresh one).
struct PromptGuardState {
  bool dedup_active = false;            // sticky once over the guard threshold
  size_t dedup_min_bytes = 512;         // smaller results are not worth a reference
  int64_t last_dedup_saved_tokens = 0;  // calibrated, of the last request
  // Raw estimate tokens the last request did NOT carry (replaced results):
  // the server's prompt_tokens count the sent copy, so the calibration must
  // scale them back to current.jsonl (ObservedPromptTokens).
  int64_t sent_raw_saved = 0;
  std::shared_ptr<DedupCopy> dedup;  // made when dedup turns on
};

// The server's prompt_tokens for the last request, scaled to what the
// estimate of current.jsonl counts (a deduplicated request was shorter).
int64_t ObservedPromptTokens(const AgentLoopDeps& deps, int64_t prompt_tokens);

// A whole dedup copy at once (DedupCopy's first Update).
Result<DedupStats> WriteDeduplicatedMessages(Env& env, const std::string& in_path,
                                             const std::string& out_path, size_t min_bytes);

struct GuardOutcome {
  std::optional<MovementResult> end;  // the movement ends here (handoff or overflow)
  std::string messages_path;          // the file to send: current.jsonl or the dedup copy
  uint64_t messages_known_bytes = 0;  // its byte count when known (llm::ChatRequest)
  int64_t estimate = 0;               // of what is sent
};

// Steps 1-5 above. `server_overflow`: the server rejected the last request
// as too long (the estimate was wrong) — compress once or hand off.
GuardOutcome GuardPrompt(AgentLoopDeps& deps, const std::string& movement, bool server_overflow);

}  // namespace maestro::engine
