// Comment delivery: how a user's comment reaches the agent exactly once
// (seed 000 §1's write gate, every branch delivered).
//
// Where it sits: the store attaches every user comment to a job
// (Store::PostComment) — an interjection for a running job, a reply stored
// for a queued/retry job, the reply or ASK answer that created a follow-up —
// and FinishJob hands undelivered ones on when a job ends. The engine
// delivers them at two points:
//   - the job's first prompt of a run (PlanJobPrompt puts them into the one
//     final user message), and
//   - each iteration boundary of the agent loop (appended user messages).
// Each delivered text carries the comment's tag (CommentTag). The tag is
// written into the conversation first and acknowledged in the store second,
// so a crash in between leaves an undelivered comment whose tag is already
// in the transcript: TakeUndelivered acknowledges it instead of sending it
// again. delivered_at is therefore the moment the comment entered the
// conversation the next request is built from.
//
// Thread safety: functions of the job's thread; they read the store and the
// transcript file.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "store/store.h"

namespace maestro::engine {

// "[comment <id>]": unique per comment and never produced by anything else.
std::string CommentTag(const Comment& c);

// The text a comment is delivered as: its tag, author and body.
std::string DeliveredCommentText(const Comment& c);

// The job's undelivered user comments that are not yet in the conversation
// at `transcript_path`, oldest first. Those whose tag the transcript already
// holds (a crash after the write, before the ack) are acknowledged here.
Result<std::vector<Comment>> TakeUndelivered(TaskRecords& store, const std::string& job_id,
                                             const std::string& transcript_path);

// Acknowledges `comments` (sets delivered_at).
Status AckDelivered(TaskRecords& store, const std::vector<Comment>& comments);

// Whether a message of the conversation at `transcript_path` already holds
// `text` (as the JSONL line escapes it): for notices the engine adds to a
// resumed run's prompt (the ended subtasks) so a second resume does not add
// them again. One pass over the file.
bool ConversationHolds(const std::string& transcript_path, const std::string& text);

}  // namespace maestro::engine
