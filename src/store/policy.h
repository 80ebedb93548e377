// The job state machine's rules as pure functions (seed 000 §1–2), shared by
// every Store backend: the row code (store/sql/) reads the facts a rule
// needs, asks the rule, and writes what it decided — no rule is spelled in
// SQL, so SQLite and PostgreSQL cannot drift apart, and each branch is
// testable without a database (tests/unit/store/policy_test.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/config.h"
#include "core/status.h"
#include "store/types.h"

namespace maestro::policy {

// ---- the comment write gate, decided on the task's newest job
enum class CommentGate {
  kDecideFirst,   // waiting for a tool/package/spawn decision → kConflict
  kInterjection,  // running / waiting_subtasks: delivered at the next iteration boundary
  kReused,        // queued / retry: the pending job sees it as context
  kAnswer,        // waiting on ASK: the ASK job ends answered, a follow-up carries on
  kFollowUp,      // ended or no job: a follow-up job re-enters where the last stopped
};
CommentGate DecideCommentGate(const std::optional<Job>& newest);
// The comment's kind for a gate: interjection | reply | answer.
CommentKind KindFor(CommentGate gate);
// Store::CommentResult::outcome: interjection | reused | followup.
CommentOutcome GateOutcome(CommentGate gate);
// KindFor's range: the user comments the engine delivers into a prompt, and
// that a job ending with them undelivered hands on.
inline constexpr CommentKind kDeliveredKinds[] = {CommentKind::kInterjection, CommentKind::kReply,
                                                  CommentKind::kAnswer};
// True while the job waits on a person's decision on a request.
bool WaitsForDecision(const Job& job);
// The follow-up of `job`: same piece/model/profile, re-entering its movement.
NewJob FollowUpOf(const Job& job);
// The result an answered ASK job ends with.
inline constexpr const char* kAnsweredResult =
    "answered by a comment; continued in a follow-up job";

// ---- the continue gate
// Ok when the newest job is terminal; else kConflict naming why.
Status CheckContinue(const std::string& task_id, const std::optional<Job>& newest);
// The job a Continue creates after `prev` ("" piece keeps prev's).
NewJob ContinuationOf(const Job& prev, const std::string& piece);

// ---- a running job's outcome
// The facts about other rows an outcome may depend on; the row code reads
// only the ones Needs*() asks for.
struct OutcomeFacts {
  int64_t undelivered_comments = 0;  // user comments of the job not yet in a prompt
  int64_t open_children = 0;         // child jobs not yet terminal
};
bool NeedsUndelivered(const JobOutcome& o);
bool NeedsOpenChildren(const JobOutcome& o);

// The job row after the outcome.
struct Transition {
  JobStatus to = JobStatus::kSucceeded;
  std::string result, error_message, wait_reason, resume_movement;
  int ask_count = 0;
  int attempt = 0;
  TimeMs next_retry_at = 0;  // 0 = none
  TimeMs finished_at = 0;    // 0 = not finished
  // Only a job that ended well hands its undelivered comments to a new job
  // at once: a failed one keeps them for the next job the person starts, so
  // a job that cannot start never loops.
  bool hands_on_comments = false;
};
// The one decision of a job's end: the row the finish transaction writes for
// `o` on `job` as read there. A retryable failure is retried or failed here
// (RetryPolicy over `retry` and the row's attempts); a park may not be one
// (the facts below); the worker and the executor only report what happened
// and learn the committed status after the commit.
// kInvalidArgument for a park whose status is not waiting_*.
Result<Transition> MapOutcome(const Job& job, const JobOutcome& o, const OutcomeFacts& facts,
                              TimeMs now, const RetryConfig& retry = RetryConfig{});

// ---- fan-in
// A parent in waiting_subtasks is requeued when its last open child ends —
// exactly once, because the row code applies it in the child's transaction
// and the ends of siblings are serialized (SQLite's one writer; on
// PostgreSQL a lock on the parent's row, SqlStore::AfterTransitions).
bool ParentWakes(const Job& parent, int64_t open_children);

}  // namespace maestro::policy
