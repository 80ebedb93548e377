// TaskReads: the JSON a caller sees of tasks — the detail of one
// (GET /api/local/tasks/:id, MCP get_task), the visible list (GET
// /api/local/tasks, MCP list_tasks), each with its usage and budget — and
// the answers of the TaskService's writes (a comment, a decision) as the
// REST routes, the MCP tools and the A2A agent all return them. The writes
// themselves are the TaskService's (api/task_service.h); this is its read
// side, so an edge needs no friend of another to answer alike.
//
// Thread safety: as the TaskService — any thread, the Store is thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/task_service.h"
#include "core/json.h"
#include "core/status.h"
#include "store/store.h"

namespace maestro::api {

class TaskReads {
 public:
  // `tasks` decides visibility and holds the prices and the clock.
  TaskReads(Store& store, TaskService& tasks) : store_(store), tasks_(tasks) {}

  // {task, latest_job, jobs, pending_requests}; kNotFound for a task `user`
  // may not see.
  Result<Json> TaskDetail(const std::string& task_id, const std::string& user);
  // {tasks: [...]}: the visible tasks, newest first, of every status or
  // only `status`.
  Result<Json> VisibleTasks(std::optional<JobStatus> status, const std::string& user);
  // TaskJson of each task with its "usage" and "budget" (one grouped read).
  Result<Json> TasksWithUsage(const std::vector<Task>& tasks);
  // The task's attachments, oldest first; only those of `comment_id`
  // unless it is "". The caller has checked the task's visibility.
  Result<Json> AttachmentsJson(const std::string& task_id, const std::string& comment_id);

 private:
  Store& store_;
  TaskService& tasks_;
};

// {comment, outcome, job, attachments}: the answer to a comment.
Json CommentedJson(const TaskService::Commented& c);
// {request, job?}: the answer to a decision.
Json DecidedJson(const TaskService::Decided& d);

}  // namespace maestro::api
