// TaskRecords: the tasks role of the Store (store/store.h) — a task's row,
// its comments and the two task gates that write them (a comment, a
// continue).
//
// Who uses it: the API creates, lists and shows tasks, posts comments and
// continues tasks (api/, TaskService); the engine reads the task,
// adds its own comments, delivers the user's (engine/loop/comment_delivery.h),
// adds the loop's counters (AddTaskStats) and routes a task's piece
// (SetTaskPiece); `maestro run` follows a task (cli/run.cc).
//
// Thread safety: every method may be called from any thread concurrently.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/status.h"
#include "store/types.h"
#include "store/unsupported.h"

namespace maestro {

class TaskRecords {
 public:
  virtual ~TaskRecords() = default;

  // ---- tasks and comments
  // Creates the task, its instruction comment and its first queued job. A
  // task without a title gets AutoTitle(instruction) (store/title.h).
  struct CreatedTask {
    Task task;
    Job job;
  };
  virtual Result<CreatedTask> CreateTask(const NewTask& task) = 0;
  virtual Result<Task> GetTask(const std::string& task_id) = 0;
  // Newest first; `status` filters when set.
  virtual Result<std::vector<Task>> ListTasks(std::optional<JobStatus> status, int limit) = 0;
  virtual Status AddTaskStats(const std::string& task_id, const TaskStatsDelta& delta) = 0;

  virtual Result<Comment> AddComment(const Comment& comment) = 0;
  virtual Result<std::vector<Comment>> ListComments(const std::string& task_id) = 0;

  // ---- task gates (seed 000 §1)
  // The comment write gate, decided on the task's newest job in one
  // transaction: running / waiting_subtasks → an interjection for that job;
  // waiting for a tool/package/spawn decision → kConflict ("decide the
  // request first"); queued / retry → stored for the pending job ("reused");
  // waiting on ASK, ended, or no job → a follow-up job inheriting
  // resume_movement and ask_count (an answered ASK job ends as succeeded).
  struct CommentResult {
    Comment comment;
    CommentOutcome outcome = CommentOutcome::kFollowUp;
    Job job;
  };
  // `attachments` (files already in the workspace) are recorded with the
  // comment in the same transaction; with some, `body` may be blank.
  virtual Result<CommentResult> PostComment(const std::string& task_id, const std::string& author,
                                            const std::string& body,
                                            const std::vector<Attachment>& attachments) = 0;
  // The user comments attached to a job (interjections, replies stored for a
  // queued/retry job, the answer or reply that created a follow-up) that have
  // not reached a prompt yet, oldest first. The engine writes them into the
  // conversation — the job's first prompt or its next iteration boundary —
  // tagged with their id, then acknowledges them (delivered_at); a crash in
  // between is settled at the next start by finding the tag in the transcript
  // (engine/loop/comment_delivery.h), so each is delivered exactly once. A job that
  // ends with some still undelivered hands them on (JobQueue::FinishJob,
  // store/job_queue.h).
  virtual Result<std::vector<Comment>> ListUndeliveredComments(const std::string& job_id) = 0;
  virtual Status AckDeliveredComments(const std::vector<std::string>& comment_ids) = 0;
  // The continue gate: the newest job must be terminal (else kConflict); a
  // new job with continued_from_job_id and a handoff comment. `piece` ""
  // keeps the previous piece (the caller checks that a given piece exists).
  struct ContinueResult {
    Job job;
    Comment handoff;
  };
  virtual Result<ContinueResult> ContinueTask(const std::string& task_id, const std::string& piece,
                                              const std::string& author,
                                              const std::string& note) = 0;

  // Sets the task's title (store/title.h CheckTitle: trimmed, 1..200
  // characters, no control characters; else kInvalidArgument naming
  // "title") and appends a `task.updated` event {title} in the same
  // transaction. Returns the updated task; kNotFound when it does not exist.
  virtual Result<Task> SetTaskTitle(const std::string& /*task_id*/, const std::string& /*title*/) {
    return NotSupportedByStore();
  }

  // Piece routing (issue 21): the task created with kRoutedPiece, and its
  // jobs still on it, take `piece`, and a task.routed event records it.
  // kConflict when the task is no longer on kRoutedPiece (another worker
  // routed it first: use that piece).
  virtual Status SetTaskPiece(const std::string& /*task_id*/, const std::string& /*piece*/,
                              const Json& /*event*/) {
    return NotSupportedByStore();
  }
};

}  // namespace maestro
