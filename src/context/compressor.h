// ContextCompressor: shrinks current.jsonl when the prompt estimate crosses
// context_length × compression_threshold (seed 002's flow, repaired).
//
// Where it sits: the agent loop checks ShouldCompress() before each LLM
// call — after the handoff check (seed 004: a handoff at the lower
// handoff_threshold should normally happen first, compression is the cliff).
// Compress():
//   1. splits current.jsonl into head (the system message, always kept
//      first), the part to summarize, and the kept tail of about
//      keep_recent_messages messages — the cut is moved back to a turn
//      boundary so no tool result is separated from the assistant message
//      that called it;
//   2. builds the summary request from files: compress/summary_request.jsonl
//      = the configured summary_prompt as system + one user message holding
//      the rendered messages to summarize (streamed, line by line) — a
//      separate LLM call, never appended to the live conversation;
//   3. retries a failed or empty summary up to summary_max_attempts, then
//      returns the error — a failure is never stored as a summary and the
//      conversation is left untouched;
//   4. archives the summary in messages.jsonl (the write-ahead log), rewrites
//      current.jsonl = head + summary (a user message) + tail through temp
//      file + fsync + rename, re-syncs transcript.jsonl, and records the seq
//      range, tokens before/after and ratio in summaries.jsonl;
//   5. recomputes the estimate from the new file, so the next check does
//      not fire again on a stale count.
//
// Thread safety: stateless apart from its configuration; call from the
// job's thread (it writes the task's files).
#pragma once

#include <cstdint>
#include <string>

#include "context/context_config.h"
#include "context/message_store.h"
#include "context/record_stores.h"
#include "core/cancel.h"
#include "llm/llm_client.h"

namespace maestro::context {

class TaskContext;

struct CompressionOutcome {
  int64_t summary_id = 0;
  int64_t start_seq = 0;
  int64_t end_seq = 0;
  int64_t summarized_lines = 0;
  int64_t kept_lines = 0;  // system + tail
  int64_t tokens_before = 0;
  int64_t tokens_after = 0;
  int attempts = 0;                   // summary calls made
  llm::LlmUsage usage;                // of the successful summary call
  bool still_over_threshold = false;  // the kept tail alone is too big
};

class ContextCompressor {
 public:
  // `llm` is not owned and must outlive the compressor.
  ContextCompressor(llm::LlmClient* llm, ContextConfig config);

  int64_t ThresholdTokens() const;
  bool ShouldCompress(int64_t prompt_estimate) const;

  // Compresses the task's conversation (see above) and updates the task's
  // statistics (compression_count, the summary call's llm/tokens).
  // kConflict when there is nothing to summarize; kUnavailable (with the last
  // error) when every summary attempt failed.
  Result<CompressionOutcome> Compress(TaskContext& ctx, int64_t tools_tokens,
                                      CancelToken* cancel = nullptr);

  // The same on bare stores; `work_dir` holds the transient request files.
  Result<CompressionOutcome> Compress(MessageStore& messages, SummaryStore& summaries,
                                      const std::string& job_id, const std::string& work_dir,
                                      int64_t tools_tokens, CancelToken* cancel = nullptr);

 private:
  Result<std::string> RequestSummary(const std::string& request_path, CancelToken* cancel,
                                     CompressionOutcome* out);

  llm::LlmClient* llm_;
  ContextConfig config_;
};

// Exposed for tests: the index of the first kept line for current lines with
// these roles ("tool" = a tool result), or 0 when nothing can be summarized.
size_t ChooseTailStart(const std::vector<std::string>& roles, int keep_recent);

}  // namespace maestro::context
