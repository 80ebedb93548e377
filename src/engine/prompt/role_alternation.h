// Role alternation: no request maestro sends holds two user messages in a
// row (seed 000 §3.4: strict chat templates — Gemma, Mistral and others —
// refuse them, and the job would retry and fail).
//
// Where it sits: two places, one rule. SeedConversation (prompt_paths.h)
// merges the seeded messages before they are written, so a replayed history
// that ends with a user turn (a finished job whose `complete` replay drops, a
// handoff continuation's facts and its start movement's guidance) is stored
// and sent as one user message. While a job runs, a user message appended
// after another (an interjection after a transition's guidance, a watchdog
// warning after an interjection) stays two lines in current.jsonl — the
// files are append-only and their prefix is never rewritten — and the agent
// loop sends an alternating copy (WriteAlternatingCopy) while
// MessageStore::has_adjacent_user_messages() says there is such a pair.
//
// The merge: adjacent user messages become one whose content is the first's
// and the second's joined by a blank line ("\n\n"); content-part arrays
// (attached images) are concatenated, the text of the touching text parts
// joined the same way. Why this keeps the cached prefix: the merged text of
// a request starts with the merged text of the one before it, so the chat
// template renders the old prompt as a prefix up to the old message's end
// (only its end-of-turn marker differs), exactly as if the request builder
// had merged the same two messages of an unmerged file.
//
// Thread safety: pure functions; WriteAlternatingCopy reads one file and
// replaces another through `env`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/json.h"
#include "core/status.h"

namespace maestro::engine {

// One user message with `second`'s content after `first`'s.
Json MergeUserMessages(const Json& first, const Json& second);

// Merges every run of adjacent user messages; other messages are untouched.
// Returns how many messages were merged away.
int MergeAdjacentUserMessages(std::vector<Json>& messages);

// Whether a role sequence alternates as a chat template needs: no two user
// messages in a row (tests and diagnostics).
bool HasAdjacentUserMessages(const std::vector<Json>& messages);

// Writes `out_path` (replaced whole, not synced: rebuilt before every send)
// as the JSONL conversation `in_path` with each run of adjacent user lines
// merged; every other line is copied byte for byte. Returns the bytes of
// `out_path` (every line whole and newline-terminated). Memory: one run of
// user messages.
Result<uint64_t> WriteAlternatingCopy(Env& env, const std::string& in_path,
                                      const std::string& out_path);

}  // namespace maestro::engine
