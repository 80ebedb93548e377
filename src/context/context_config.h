// ContextConfig: the `context_storage` settings of seed 002 plus the handoff
// settings of seed 004, as one value passed to TaskContext, the compressor
// and the handoff trigger.
//
// Thread safety: a plain value.
#pragma once

#include <cstdint>
#include <string>

#include "core/json.h"
#include "core/status.h"

namespace maestro::context {

inline constexpr char kDefaultSummaryPrompt[] =
    "You compress an agent's working conversation. Summarize the messages below as a list of "
    "facts: what was asked, what was done (files read and written, commands run and their "
    "outcomes), decisions taken and why, errors met, and open problems. Keep file paths, "
    "identifiers and numbers exactly. Do not add plans or advice.";

struct ContextConfig {
  int64_t context_length = 32'768;     // llm.context_length
  double compression_threshold = 0.7;  // compress above context_length * this
  double handoff_threshold = 0.6;      // ask for a handoff above context_length * this
  int keep_recent_messages = 5;        // the tail kept verbatim by compression
  int cleanup_days = 30;               // completed dirs older than this are removed; 0 keeps
  std::string summary_prompt = kDefaultSummaryPrompt;
  int summary_max_attempts = 3;         // summary LLM calls before compression fails
  int handoff_max_wait_iterations = 3;  // iterations to wait for WriteHandoff before the fallback
  // Seed 002's request.json: every LLM request body is also written to the
  // context's request.json while it is sent (the last one stays until the
  // session ends, then it is removed). Off by default: the body is streamed
  // from current.jsonl, and a copy per request costs O(conversation) bytes
  // written per call for a file nothing reads (issue 45 item 9).
  bool request_json = false;
  // What runs the task, from the job's resolved LLM profile (not YAML keys;
  // set by the executor beside context_length): metadata.json's config.
  std::string llm_provider;  // the profile's name ("default", "fast", ...)
  std::string model;         // the model the profile serves
};

// The directory under data_dir that holds the task contexts (seed 002's
// `base_dir` default; context_dirs.h).
inline constexpr char kContextsBaseDir[] = "contexts";

// Reads a `context_storage` object (keys as above); unknown keys are errors
// naming the nearest valid key; thresholds must satisfy
// 0 < handoff_threshold < compression_threshold <= 1. Seed 002's `enabled`
// and `base_dir` are accepted at the values maestro always runs with
// (`enabled: true`, `base_dir: contexts`); another value is an error naming
// the key and what replaced it (files are always on; data_dir moves them).
Result<ContextConfig> ParseContextConfig(const Json& section, ContextConfig base = {});

}  // namespace maestro::context
