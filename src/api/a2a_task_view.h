// A2A views of maestro's rows: a task as an A2A Task (its state mapped from
// the newest job), its comments as Messages, the stream events
// (TaskStatusUpdateEvent, TaskArtifactUpdateEvent) and the Agent Card.
//
// Where it sits: between the store's rows and the A2A endpoint
// (a2a_endpoint.h), which reads a TaskFacts and answers or streams these
// objects. The mapping, from the newest job of the task (a follow-up or a
// handoff's continuation is the task going on):
//   queued                           → submitted
//   running, retry, waiting_subtasks → working
//   waiting_human                    → input-required (ask, reconcile, tool /
//                                      package / spawn approvals, budget)
//   waiting_human mcp_auth_required  → auth-required
//   succeeded                        → completed (result: an artifact and
//                                      the status message)
//   failed                           → failed
//   cancelled                        → canceled
// The A2A task id is the maestro task id; its contextId is "ctx-<task id>",
// stable for the task's whole life.
//
// Thread safety: pure functions over values.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "store/types.h"

namespace maestro::api::a2a {

enum class TaskState {
  kSubmitted,
  kWorking,
  kInputRequired,
  kAuthRequired,
  kCompleted,
  kFailed,
  kCanceled,
};
std::string_view TaskStateName(TaskState s);
TaskState StateFor(JobStatus status, std::string_view wait_reason);
// completed, failed, canceled: the task will not change on its own.
bool IsTerminal(TaskState s);
// Terminal, input-required or auth-required: a stream of the task ends
// here (final = true), since nothing happens until someone acts.
bool EndsStream(TaskState s);

// What the views are made of: the task, its jobs (oldest first, as
// Store::ListJobs gives them) and its comments (oldest first).
struct TaskFacts {
  Task task;
  std::vector<Job> jobs;
  std::vector<Comment> comments;
};

std::string ContextId(const std::string& task_id);
// The state of the task's newest job (submitted while it has none).
TaskState StateOf(const TaskFacts& f);
// A key that changes whenever the A2A status does (state, newest job).
std::string StatusKey(const TaskFacts& f);

// TaskStatus {state, timestamp, message?}: the message is the question for
// input-required, the result for completed, the error for failed.
Json StatusJson(const TaskFacts& f);
// The newest job's result as an Artifact, when the task is completed.
std::optional<Json> ResultArtifact(const TaskFacts& f);
// Task {kind, id, contextId, status, artifacts, history (the last
// `history_length` comments as Messages; all when unset)}.
Json TaskJson(const TaskFacts& f, std::optional<int> history_length);
Json StatusUpdateJson(const TaskFacts& f, bool final);
Json ArtifactUpdateJson(const TaskFacts& f, const Json& artifact);

struct Skill {
  std::string id;  // the piece's name
  std::string description;
};
struct CardInfo {
  std::string url;  // the JSON-RPC endpoint, e.g. http://host:8080/a2a
  std::string version;
  std::vector<Skill> skills;
};
// AgentCard (protocol v0.3): JSON-RPC transport, streaming and push
// notifications, text in and out, bearer auth, one skill per piece.
Json AgentCard(const CardInfo& info);

}  // namespace maestro::api::a2a
