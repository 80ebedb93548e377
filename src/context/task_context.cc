#include "context/task_context.h"

#include <unistd.h>

#include <filesystem>

#include "context/durable_file.h"

namespace maestro::context {
namespace {

std::string HostName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof(buf) - 1) != 0) return "";
  return buf;
}

}  // namespace

Result<std::unique_ptr<TaskContext>> TaskContext::Start(const ContextDirs& dirs,
                                                        const TaskContextDeps& deps,
                                                        const Task& task, const Job& job,
                                                        const ContextConfig& config) {
  if (deps.store == nullptr || deps.clock == nullptr) {
    return InvalidArgument("TaskContext needs a store and a clock");
  }
  std::unique_ptr<TaskContext> ctx(new TaskContext());
  ctx->dirs_ = &dirs;
  ctx->deps_ = deps;
  ctx->config_ = config;
  ctx->task_id_ = task.id;
  ctx->job_id_ = job.id;
  MAESTRO_ASSIGN_OR_RETURN(ctx->dir_, dirs.Ensure(task.id, Placement::kRunning));
  ctx->resumed_ = std::filesystem::exists(ctx->metadata_path());
  if (!ctx->resumed_) MAESTRO_RETURN_IF_ERROR(ctx->WriteMetadata(task, job));
  std::error_code ec;
  std::filesystem::create_directories(ctx->handoffs_dir(), ec);
  if (ec) return Internal("create " + ctx->handoffs_dir() + ": " + ec.message());
  MAESTRO_ASSIGN_OR_RETURN(ctx->messages_, MessageStore::Open(ctx->dir_, deps.clock));
  MAESTRO_ASSIGN_OR_RETURN(ctx->summaries_, SummaryStore::Open(ctx->dir_, deps.clock));
  MAESTRO_ASSIGN_OR_RETURN(ctx->tools_, ToolStore::Open(ctx->dir_, deps.clock));
  MAESTRO_ASSIGN_OR_RETURN(ctx->events_, EventLog::Open(ctx->dir_, deps.clock));
  MAESTRO_ASSIGN_OR_RETURN(ctx->planning_,
                           PlanningHistoryStore::Open(ctx->dir_ + "/planning", deps.clock));
  const auto& rep = ctx->messages_.repairs();
  if (rep.torn_bytes_cut > 0 || rep.current_rebuilt || rep.transcript_rebuilt) {
    Json p = {{"torn_bytes_cut", rep.torn_bytes_cut},
              {"current_rebuilt", rep.current_rebuilt},
              {"transcript_rebuilt", rep.transcript_rebuilt}};
    MAESTRO_ASSIGN_OR_RETURN(int64_t seq, ctx->events_.Append("context.repaired", p, job.id));
    (void)seq;
  }
  MAESTRO_ASSIGN_OR_RETURN(int64_t seq, ctx->events_.Append("context.session_started",
                                                            {{"resumed", ctx->resumed_}}, job.id));
  (void)seq;
  return ctx;
}

Result<std::unique_ptr<TaskContext>> TaskContext::OpenDelegate(const std::string& name) const {
  std::unique_ptr<TaskContext> ctx(new TaskContext());
  ctx->dirs_ = dirs_;
  ctx->deps_ = deps_;
  ctx->config_ = config_;
  ctx->task_id_ = task_id_;
  ctx->job_id_ = job_id_;
  ctx->dir_ = dir_ + "/delegates/" + name;
  ctx->resumed_ = std::filesystem::exists(ctx->dir_);
  std::error_code ec;
  std::filesystem::create_directories(ctx->handoffs_dir(), ec);
  if (ec) return Internal("create " + ctx->dir_ + ": " + ec.message());
  MAESTRO_ASSIGN_OR_RETURN(ctx->messages_, MessageStore::Open(ctx->dir_, deps_.clock));
  MAESTRO_ASSIGN_OR_RETURN(ctx->summaries_, SummaryStore::Open(ctx->dir_, deps_.clock));
  MAESTRO_ASSIGN_OR_RETURN(ctx->tools_, ToolStore::Open(ctx->dir_, deps_.clock));
  MAESTRO_ASSIGN_OR_RETURN(ctx->events_, EventLog::Open(ctx->dir_, deps_.clock));
  MAESTRO_ASSIGN_OR_RETURN(ctx->planning_,
                           PlanningHistoryStore::Open(ctx->dir_ + "/planning", deps_.clock));
  return ctx;
}

Status TaskContext::WriteMetadata(const Task& task, const Job& job) {
  // Static: written once when the directory is created (seed 002).
  Json m = {
      {"uuid", task.id},
      {"task_key",
       {{"task_source", task.task_source}, {"owner", task.owner}, {"task_id", task.id}}},
      {"title", task.title},
      {"piece", task.piece},
      {"space", task.space},
      {"first_job_id", job.id},
      {"created_at", FormatIso8601(task.created_at ? task.created_at : deps_.clock->NowMs())},
      {"process_id", static_cast<int64_t>(::getpid())},
      {"hostname", HostName()},
      {"user", task.owner},
      {"config",
       {{"llm_provider", task.llm_provider},
        {"model", job.model.empty() ? task.model : job.model},
        {"context_length", config_.context_length},
        {"compression_threshold", config_.compression_threshold},
        {"handoff_threshold", config_.handoff_threshold},
        {"keep_recent_messages", config_.keep_recent_messages}}},
  };
  return ReplaceFileContent(metadata_path(), m.dump(2) + "\n");
}

Result<std::string> TaskContext::EndSession(std::unique_ptr<TaskContext> ctx, JobStatus status) {
  if (!ctx) return InvalidArgument("no context");
  const ContextDirs* dirs = ctx->dirs_;
  std::string task_id = ctx->task_id_;
  std::string request_json = ctx->request_json_path();
  ctx.reset();  // close every file before the directory moves
  std::error_code ec;
  std::filesystem::remove(request_json, ec);  // transient (seed 002)
  return dirs->FollowJobStatus(task_id, status);
}

Status TaskContext::RecordLlmCall(int64_t prompt_tokens, int64_t completion_tokens) {
  TaskStatsDelta d;
  d.llm_calls = 1;
  d.tokens = prompt_tokens + completion_tokens;
  return deps_.store->AddTaskStats(task_id_, d);
}

Result<int64_t> TaskContext::RecordToolCall(ToolCallRecord record) {
  if (record.job_id.empty()) record.job_id = job_id_;
  MAESTRO_ASSIGN_OR_RETURN(int64_t seq, tools_.AddToolCall(record));
  TaskStatsDelta d;
  d.tool_calls = 1;
  MAESTRO_RETURN_IF_ERROR(deps_.store->AddTaskStats(task_id_, d));
  return seq;
}

Status TaskContext::RecordCompression() {
  TaskStatsDelta d;
  d.compressions = 1;
  return deps_.store->AddTaskStats(task_id_, d);
}

}  // namespace maestro::context
