// Rows of the job store: tasks, comments, jobs, requests, grants, events.
//
// Plain values copied out of the database; holding one never holds a lock.
// Times are TimeMs (ms since epoch, UTC); 0 means "not set".
//
// Every closed set of values a row carries (job status, comment kind,
// request kind/status, grant scope, the comment gate's outcome) is an enum
// here with its one Name/Parse pair in types.cc: the names are the strings
// the DB columns, events and JSON have always held, so the wire format and
// the schema do not depend on the C++ spelling.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/json.h"

namespace maestro {

// Seed 000's job lifecycle. Terminal: succeeded, failed, cancelled.
enum class JobStatus {
  kQueued,
  kRunning,
  kWaitingHuman,
  kWaitingSubtasks,
  kRetry,
  kSucceeded,
  kFailed,
  kCancelled,
};

std::string_view JobStatusName(JobStatus s);
std::optional<JobStatus> ParseJobStatus(std::string_view s);
bool IsTerminal(JobStatus s);
bool IsParked(JobStatus s);  // waiting_human or waiting_subtasks

// Who wrote a comment and why. kAnswer: a reply to an ASK park (the comment
// gate's policy::KindFor); kReply: any other user comment that started or
// waits for a job; kInterjection: reached a running job.
enum class CommentKind {
  kInstruction,
  kReply,
  kAnswer,
  kQuestion,
  kResult,
  kHandoff,
  kInterjection,
  kNote,
};
std::string_view CommentKindName(CommentKind k);
std::optional<CommentKind> ParseCommentKind(std::string_view s);

// What the comment write gate did with a comment (Store::PostComment).
enum class CommentOutcome { kInterjection, kReused, kFollowUp };
std::string_view CommentOutcomeName(CommentOutcome o);

// What an approval request asks for.
enum class RequestKind { kTool, kPackage, kSpawn };
std::string_view RequestKindName(RequestKind k);
std::optional<RequestKind> ParseRequestKind(std::string_view s);

enum class RequestStatus { kPending, kApproved, kDenied };
std::string_view RequestStatusName(RequestStatus s);
std::optional<RequestStatus> ParseRequestStatus(std::string_view s);

// How far an approved tool request's grant reaches: these arguments once, or
// the tool for the whole task.
enum class GrantScope { kOnce, kTask };
std::string_view GrantScopeName(GrantScope s);
std::optional<GrantScope> ParseGrantScope(std::string_view s);

// Every name of enum E, in enumerator order (for schemas and error messages
// that list the valid values). Defined for each enum above.
template <typename E>
std::vector<std::string> AllNames();

struct Task {
  std::string id;  // UUID
  std::string title;
  std::string instruction;
  std::string piece;
  std::string space;
  std::string visibility;  // private | shared
  std::string owner;
  std::string task_source = "local";
  JobStatus status = JobStatus::kQueued;  // the status of the task's newest job
  // Seed 002 statistics and provenance.
  std::string llm_provider;
  std::string model;
  int64_t context_length = 0;
  int64_t llm_call_count = 0;
  int64_t tool_call_count = 0;
  int64_t total_tokens = 0;
  int64_t compression_count = 0;
  std::string error_message;
  int64_t process_id = 0;
  std::string hostname;
  TimeMs created_at = 0;
  TimeMs started_at = 0;
  TimeMs completed_at = 0;
  TimeMs updated_at = 0;
  // The effective budget limits (store/budget.h LimitsJson; {} = none),
  // resolved at create and raised by RaiseTaskBudget.
  Json budget = Json::object();
  std::string mission_id;  // the mission it belongs to ("" = none)
};

inline constexpr int kMinPriority = -100;
inline constexpr int kMaxPriority = 100;

// A file sent with a task or a comment (docs/api.md "Attachments"): the
// bytes live in the task's workspace at `path`; the row says what they are
// and whether a prompt has listed them yet.
struct Attachment {
  std::string id;  // sortable: the order they were sent in
  std::string task_id;
  std::string comment_id;  // the instruction or comment it came with
  std::string name;        // sanitized file name (api/attachments.h)
  std::string path;        // relative to the workspace: attachments/<name>
  int64_t size = 0;
  std::string content_type;
  std::string sha256;  // hex of the bytes
  TimeMs created_at = 0;
  TimeMs delivered_at = 0;  // when a prompt listed it (0: not yet)
};

// The piece of a task created while `pieces.router: llm` is set and no
// piece was named: its first job asks the router (engine/job/piece_router.h),
// which replaces it with the chosen piece (Store::SetTaskPiece).
inline constexpr char kRoutedPiece[] = "auto";

struct NewTask {
  // "" = generated. The API picks the id first when files come with the
  // task, so they are in the workspace before the job can be claimed.
  std::string id;
  std::string title;
  std::string instruction;
  std::string piece = "chat";
  std::string space;
  std::string visibility = "private";
  std::string owner;
  std::string llm_provider;
  std::string model;
  std::string profile;  // the first job's LLM profile ("" = default)
  int64_t context_length = 0;
  // The first job's priority (kMinPriority..kMaxPriority, higher first); a
  // subtask takes its parent job's when 0.
  int priority = 0;
  // A subtask: its first job is a child of this job (the parent may wait for
  // it in waiting_subtasks). CreateTask gives it the parent task's owner and
  // visibility, and the parent job's profile and model when unset.
  std::string parent_job_id;
  // Idempotency key of a subtask ("<parent job>/<call id>"): CreateTask with a
  // key that exists returns that task and its first job, writing nothing.
  std::string spawn_key;
  // The effective budget limits to store (store/budget.h LimitsJson).
  Json budget = Json::object();
  // Where the task came from (Task::task_source): "local", or
  // "reflection:<task id>" for the Reflection task of that task.
  std::string task_source = "local";
  std::string mission_id;  // "" = none (the API checks that it exists)
  // Files already written to the workspace, recorded with the instruction
  // comment in the same transaction (id, comment_id, created_at set there).
  std::vector<Attachment> attachments;
};

// Increments applied to a task's statistics columns (seed 002).
struct TaskStatsDelta {
  int64_t llm_calls = 0;
  int64_t tool_calls = 0;
  int64_t tokens = 0;
  int64_t compressions = 0;
  // Provenance (seed 002 tasks): what served the task. Each fills its column
  // only while the column is still empty, so the first job's profile stays
  // recorded and a request's explicit choice is never overwritten.
  std::string llm_provider;
  std::string model;
  int64_t context_length = 0;
};

struct Comment {
  std::string id;  // sortable
  std::string task_id;
  std::string job_id;
  std::string author;  // user | agent | system
  CommentKind kind = CommentKind::kNote;
  std::string body;
  TimeMs delivered_at = 0;  // interjections: when the running agent received it
  TimeMs created_at = 0;
};

struct Job {
  int64_t seq = 0;  // insertion order: "oldest first" for claims
  std::string id;   // sortable
  std::string task_id;
  std::string parent_job_id;
  std::string continued_from_job_id;
  JobStatus status = JobStatus::kQueued;
  std::string piece;
  std::string model;
  std::string profile;
  std::string required_worker;  // only this worker may claim it ("" = any)
  // Lease: valid while status == running and the token matches.
  std::string worker_id;
  int64_t fencing_token = 0;
  TimeMs lease_expires_at = 0;
  int attempt = 0;  // claims that counted against max_attempts
  int max_attempts = 0;
  TimeMs next_retry_at = 0;
  // Park state (seed 001): why it waits and where it re-enters.
  std::string wait_reason;
  std::string resume_movement;
  int ask_count = 0;
  // The CAPTCHA pool (seed 001, wait_reason captcha): the space and screen
  // the job waits on (Store::SetCaptchaWait). ResumeCaptchaJobs clears the
  // space and keeps the screen, so the resumed job sees its screen solved
  // (captcha_space_id "" and captcha_screen set).
  std::string captcha_space_id;
  std::string captcha_screen;
  int priority = 0;  // higher is claimed first among queued jobs
  bool cancel_requested = false;
  std::string error_message;
  std::string result;
  TimeMs created_at = 0;
  TimeMs started_at = 0;
  TimeMs finished_at = 0;
  TimeMs updated_at = 0;
};

struct NewJob {
  std::string task_id;
  std::string parent_job_id;
  std::string continued_from_job_id;
  std::string piece;
  std::string model;
  std::string profile;
  std::string required_worker;
  std::string resume_movement;
  int ask_count = 0;
  int priority = 0;      // higher first among queued jobs; follow-ups inherit it
  int max_attempts = 0;  // 0: the store's default
  // A handoff continuation takes over the children of the job it continues
  // (same transaction): subtasks spawned before the handoff report to, and
  // wake, the session that goes on with the work.
  std::string adopt_children_of;
};

// Proof of a claim. Every write a worker makes for its job carries it.
struct Lease {
  std::string job_id;
  std::string worker_id;
  int64_t fencing_token = 0;
};

// Which jobs a worker may claim. Empty lists accept any value; a job with no
// model/profile is acceptable to every worker.
struct ClaimFilter {
  std::string worker_id;
  std::vector<std::string> models;
  std::vector<std::string> profiles;
  std::string hostname;  // recorded on the task (seed 002)
  int64_t process_id = 0;
};

// How a running job ends (or stops running): what happened, as the
// executor and the worker report it. Store::FinishJob hands it to the one
// decider of the job's committed status, policy::MapOutcome, in the finish
// transaction — a retryable failure becomes `retry` or `failed` there, by the
// attempts the row shows and the store's RetryConfig.
struct JobOutcome {
  enum class Kind { kSucceeded, kRetry, kFailed, kParked, kCancelled, kReleased };
  Kind kind = Kind::kSucceeded;
  std::string result;                                // kSucceeded
  std::string error_message;                         // kRetry, kFailed, kCancelled (optional)
  TimeMs next_retry_at = 0;                          // kRetry (a decided retry)
  bool retryable = false;                            // kFailed: another attempt may succeed
  JobStatus park_status = JobStatus::kWaitingHuman;  // kParked
  std::string wait_reason;                           // kParked: ask | tool_request | ...
  std::string resume_movement;                       // kParked
  int ask_count = -1;                                // kParked: new value, -1 keeps

  static JobOutcome Succeeded(std::string result);
  static JobOutcome Retry(std::string error, TimeMs at);
  // `retryable`: the store's retry policy decides retry or failed.
  static JobOutcome Failed(std::string error, bool retryable = false);
  static JobOutcome WaitingHuman(std::string reason, std::string resume_movement);
  static JobOutcome WaitingSubtasks(std::string resume_movement);
  static JobOutcome Cancelled(std::string why = {});
  // Back to queued without spending an attempt (graceful shutdown).
  static JobOutcome Released();
};

struct HeartbeatReply {
  TimeMs lease_expires_at = 0;
  bool cancel_requested = false;
};

struct CancelReport {
  int cancelled = 0;  // queued/retry/parked jobs cancelled at once
  int flagged = 0;    // running jobs asked to stop cooperatively
};

// Tool / package / spawn approval requests (seed 001 park tools).
struct Request {
  std::string id;
  std::string task_id;
  std::string job_id;
  RequestKind kind = RequestKind::kTool;
  std::string name;  // tool name, package name, or spawned task title
  Json args = Json::object();
  std::string args_hash;  // canonical hash of args
  std::string reason;
  RequestStatus status = RequestStatus::kPending;
  std::optional<GrantScope> scope;  // as decided; unset: not given (a tool grant is then once)
  std::string decided_by;
  TimeMs decided_at = 0;
  TimeMs created_at = 0;
};

struct Grant {
  std::string id;
  std::string task_id;
  std::string tool_name;
  GrantScope scope = GrantScope::kOnce;
  std::string args_hash;  // bound for scope=once
  std::string request_id;
  TimeMs expires_at = 0;  // 0: never
  int uses_left = -1;     // -1: unlimited
  TimeMs created_at = 0;
};

struct Event {
  std::string id;  // decimal, increasing across the store; the SSE event id
  std::string task_id;
  std::string job_id;
  std::string type;  // job.status, comment.created, request.created, ...
  Json payload = Json::object();
  TimeMs created_at = 0;
};

}  // namespace maestro
