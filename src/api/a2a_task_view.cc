#include "api/a2a_task_view.h"

#include <fmt/format.h>

#include <algorithm>

#include "api/a2a_protocol.h"

namespace maestro::api::a2a {

namespace {

const Job* Newest(const TaskFacts& f) { return f.jobs.empty() ? nullptr : &f.jobs.back(); }

Json TextParts(const std::string& text) {
  return Json::array({{{"kind", "text"}, {"text", text}}});
}

// An agent Message of the task that no comment backs (a status message):
// its id is derived from what it says about, so it is stable across reads.
Json AgentMessage(const TaskFacts& f, const std::string& message_id, const std::string& text) {
  return {{"kind", "message"},   {"messageId", message_id},
          {"role", "agent"},     {"parts", TextParts(text)},
          {"taskId", f.task.id}, {"contextId", ContextId(f.task.id)}};
}

Json CommentMessage(const TaskFacts& f, const Comment& c) {
  return {{"kind", "message"},
          {"messageId", c.id},
          {"role", c.author == "user" ? "user" : "agent"},
          {"parts", TextParts(c.body)},
          {"taskId", f.task.id},
          {"contextId", ContextId(f.task.id)},
          {"metadata", {{"kind", CommentKindName(c.kind)}, {"jobId", c.job_id}}}};
}

// The newest question the agent asked in job `job_id` ("" when none).
std::string QuestionOf(const TaskFacts& f, const std::string& job_id) {
  for (auto it = f.comments.rbegin(); it != f.comments.rend(); ++it) {
    if (it->job_id == job_id && it->kind == CommentKind::kQuestion) return it->body;
  }
  return "";
}

// What a person must do for a wait without a question comment.
std::string WaitText(const std::string& wait_reason) {
  if (wait_reason == "tool_request" || wait_reason == "package_request" ||
      wait_reason == "spawn_request") {
    return fmt::format(
        "waiting for a person to approve or deny the pending {} (maestro's decide route or UI)",
        wait_reason);
  }
  if (wait_reason == "budget_exceeded") {
    return "the task's budget is used up: raise it (POST /api/local/tasks/:id/budget) or cancel";
  }
  return "waiting for a person (" + wait_reason + ")";
}

}  // namespace

std::string_view TaskStateName(TaskState s) {
  switch (s) {
    case TaskState::kSubmitted:
      return "submitted";
    case TaskState::kWorking:
      return "working";
    case TaskState::kInputRequired:
      return "input-required";
    case TaskState::kAuthRequired:
      return "auth-required";
    case TaskState::kCompleted:
      return "completed";
    case TaskState::kFailed:
      return "failed";
    case TaskState::kCanceled:
      return "canceled";
  }
  return "unknown";
}

TaskState StateFor(JobStatus status, std::string_view wait_reason) {
  switch (status) {
    case JobStatus::kQueued:
      return TaskState::kSubmitted;
    case JobStatus::kRunning:
    case JobStatus::kRetry:
    case JobStatus::kWaitingSubtasks:
      return TaskState::kWorking;
    case JobStatus::kWaitingHuman:
      return wait_reason == "mcp_auth_required" ? TaskState::kAuthRequired
                                                : TaskState::kInputRequired;
    case JobStatus::kSucceeded:
      return TaskState::kCompleted;
    case JobStatus::kFailed:
      return TaskState::kFailed;
    case JobStatus::kCancelled:
      return TaskState::kCanceled;
  }
  return TaskState::kWorking;
}

bool IsTerminal(TaskState s) {
  return s == TaskState::kCompleted || s == TaskState::kFailed || s == TaskState::kCanceled;
}

bool EndsStream(TaskState s) {
  return IsTerminal(s) || s == TaskState::kInputRequired || s == TaskState::kAuthRequired;
}

std::string ContextId(const std::string& task_id) { return "ctx-" + task_id; }

TaskState StateOf(const TaskFacts& f) {
  const Job* job = Newest(f);
  return job ? StateFor(job->status, job->wait_reason) : TaskState::kSubmitted;
}

std::string StatusKey(const TaskFacts& f) {
  const Job* job = Newest(f);
  return fmt::format("{}/{}", job ? job->id : "", TaskStateName(StateOf(f)));
}

Json StatusJson(const TaskFacts& f) {
  const Job* job = Newest(f);
  const TaskState state = StateOf(f);
  const TimeMs at =
      job ? std::max({job->created_at, job->started_at, job->finished_at, job->updated_at})
          : f.task.created_at;
  Json status = {{"state", TaskStateName(state)}, {"timestamp", FormatIso8601(at)}};
  if (!job) return status;
  std::string text;
  if (state == TaskState::kInputRequired || state == TaskState::kAuthRequired) {
    text = QuestionOf(f, job->id);
    if (text.empty()) text = WaitText(job->wait_reason);
  } else if (state == TaskState::kCompleted) {
    text = job->result;
  } else if (state == TaskState::kFailed) {
    text = job->error_message.empty() ? "the job failed" : job->error_message;
  }
  if (!text.empty()) {
    status["message"] =
        AgentMessage(f, fmt::format("status-{}-{}", job->id, TaskStateName(state)), text);
  }
  return status;
}

std::optional<Json> ResultArtifact(const TaskFacts& f) {
  const Job* job = Newest(f);
  if (!job || StateOf(f) != TaskState::kCompleted) return std::nullopt;
  return Json{{"artifactId", "result-" + job->id},
              {"name", "result"},
              {"description", "the result of maestro job " + job->id},
              {"parts", TextParts(job->result)}};
}

Json TaskJson(const TaskFacts& f, std::optional<int> history_length) {
  Json artifacts = Json::array();
  if (auto a = ResultArtifact(f)) artifacts.push_back(std::move(*a));
  Json history = Json::array();
  const size_t n = f.comments.size();
  const size_t from =
      history_length && static_cast<size_t>(*history_length) < n ? n - *history_length : 0;
  for (size_t i = from; i < n; ++i) history.push_back(CommentMessage(f, f.comments[i]));
  return {{"kind", "task"},
          {"id", f.task.id},
          {"contextId", ContextId(f.task.id)},
          {"status", StatusJson(f)},
          {"artifacts", std::move(artifacts)},
          {"history", std::move(history)},
          {"metadata", {{"piece", f.task.piece}, {"title", f.task.title}}}};
}

Json StatusUpdateJson(const TaskFacts& f, bool final) {
  return {{"kind", "status-update"},
          {"taskId", f.task.id},
          {"contextId", ContextId(f.task.id)},
          {"status", StatusJson(f)},
          {"final", final}};
}

Json ArtifactUpdateJson(const TaskFacts& f, const Json& artifact) {
  return {{"kind", "artifact-update"}, {"taskId", f.task.id}, {"contextId", ContextId(f.task.id)},
          {"artifact", artifact},      {"append", false},     {"lastChunk", true}};
}

Json AgentCard(const CardInfo& info) {
  Json skills = Json::array();
  for (const auto& s : info.skills) {
    skills.push_back(
        {{"id", s.id},
         {"name", s.id},
         {"description", s.description.empty() ? "maestro piece " + s.id : s.description},
         {"tags", {"maestro", "piece"}},
         {"inputModes", {"text/plain"}},
         {"outputModes", {"text/plain"}}});
  }
  return {{"protocolVersion", kProtocolVersion},
          {"name", "maestro"},
          {"description",
           "maestro runs agent tasks: each message starts a task on a piece (a workflow of "
           "movements; metadata.piece chooses one, metadata.space a persistent workspace) or, with "
           "a taskId, answers the task's question."},
          {"url", info.url},
          {"preferredTransport", "JSONRPC"},
          {"version", info.version},
          {"capabilities",
           {{"streaming", true}, {"pushNotifications", true}, {"stateTransitionHistory", false}}},
          {"securitySchemes",
           {{"bearer",
             {{"type", "http"},
              {"scheme", "bearer"},
              {"description", "a maestro API token (Authorization: Bearer <token>)"}}}}},
          {"security", Json::array({{{"bearer", Json::array()}}})},
          {"defaultInputModes", {"text/plain"}},
          {"defaultOutputModes", {"text/plain"}},
          {"skills", std::move(skills)}};
}

}  // namespace maestro::api::a2a
