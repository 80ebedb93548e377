#include "context/task_context.h"

#include <unistd.h>

#include "core/durable_file.h"

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
  if (deps.store == nullptr || deps.clock == nullptr || deps.env == nullptr) {
    return InvalidArgument("TaskContext needs a store, a clock and an env");
  }
  std::unique_ptr<TaskContext> ctx(new TaskContext());
  ctx->dirs_ = &dirs;
  ctx->deps_ = deps;
  ctx->config_ = config;
  ctx->task_id_ = task.id;
  ctx->job_id_ = job.id;
  bool entry_unsynced = false;
  MAESTRO_ASSIGN_OR_RETURN(ctx->dir_,
                           dirs.EnsureUnsynced(task.id, Placement::kRunning, &entry_unsynced));
  if (entry_unsynced) {
    std::string parent = ctx->dir_.substr(0, ctx->dir_.rfind('/'));
    ctx->new_dir_env_ = std::make_shared<NewDirEnv>(deps.env, ctx->dir_, std::move(parent));
    ctx->deps_.env = ctx->new_dir_env_.get();
  }
  ctx->resumed_ = deps.env->FileExists(ctx->metadata_path());
  if (!ctx->resumed_ || !ctx->MetadataWhole()) {
    MAESTRO_RETURN_IF_ERROR(ctx->WriteMetadata(task, job));
  }
  MAESTRO_RETURN_IF_ERROR(ctx->OpenStores());
  MAESTRO_RETURN_IF_ERROR(ctx->RecordProvenance(task));
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
  ctx->new_dir_env_ = new_dir_env_;
  ctx->deps_ = deps_;
  ctx->config_ = config_;
  ctx->task_id_ = task_id_;
  ctx->job_id_ = job_id_;
  ctx->dir_ = dir_ + "/delegates/" + name;
  ctx->resumed_ = deps_.env->FileExists(ctx->dir_);
  // Its files are created by their first appends, inside this directory.
  MAESTRO_RETURN_IF_ERROR(deps_.env->CreateDirs(ctx->dir_));
  MAESTRO_RETURN_IF_ERROR(ctx->OpenStores());
  return ctx;
}

Status TaskContext::OpenStores() {
  Env* env = deps_.env;
  MAESTRO_ASSIGN_OR_RETURN(messages_, MessageStore::Open(dir_, deps_.clock, env));
  MAESTRO_ASSIGN_OR_RETURN(summaries_, SummaryStore::Open(dir_, deps_.clock, env));
  MAESTRO_ASSIGN_OR_RETURN(ledger_, tools::ToolLedger::Open(dir_, deps_.clock, env));
  tools_ = ToolStore(dir_, env);
  MAESTRO_ASSIGN_OR_RETURN(events_, EventLog::Open(dir_, deps_.clock, env));
  return Status::Ok();
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
       // What the request named, else the resolved profile (issue 45 item 8).
       {{"llm_provider", !task.llm_provider.empty() ? task.llm_provider : config_.llm_provider},
        {"model", !job.model.empty()    ? job.model
                  : !task.model.empty() ? task.model
                                        : config_.model},
        {"context_length", config_.context_length},
        {"compression_threshold", config_.compression_threshold},
        {"handoff_threshold", config_.handoff_threshold},
        {"keep_recent_messages", config_.keep_recent_messages}}},
  };
  // Copied from the task's rows, so not synced (two fsyncs were a quarter of
  // a new task's setup): a copy an OS crash tore or lost is written again
  // at the next start (MetadataWhole).
  ReplaceOptions not_synced;
  not_synced.durable = false;
  return ReplaceFileContent(*deps_.env, metadata_path(), m.dump(2) + "\n", not_synced);
}

bool TaskContext::MetadataWhole() const {
  std::string text;
  Status read = ForEachLine(*deps_.env, metadata_path(), [&](std::string_view line, uint64_t) {
    text.append(line).push_back('\n');
    return true;
  });
  return read.ok() && Json::parse(text, nullptr, /*allow_exceptions=*/false).is_object();
}

Result<std::string> TaskContext::EndSession(std::unique_ptr<TaskContext> ctx, JobStatus status) {
  if (!ctx) return InvalidArgument("no context");
  const ContextDirs* dirs = ctx->dirs_;
  // The Env the context was given (a NewDirEnv dies with the context).
  Env* env = ctx->new_dir_env_ ? ctx->new_dir_env_->base() : ctx->deps_.env;
  std::string task_id = ctx->task_id_;
  std::string request_json = ctx->request_json_path();
  ctx.reset();                          // close every file before the directory moves
  (void)env->RemoveFile(request_json);  // transient (seed 002); a leftover is harmless
  return dirs->FollowJobStatus(task_id, status);
}

Status TaskContext::RecordLlmCall(int64_t prompt_tokens, int64_t completion_tokens,
                                  const Event* event) {
  TaskStatsDelta d;
  d.llm_calls = 1;
  d.tokens = prompt_tokens + completion_tokens;
  if (event) return deps_.store->AppendEvent(*event, d).status();
  return deps_.store->AddTaskStats(task_id_, d);
}

Result<int64_t> TaskContext::RecordToolCall(ToolCallRecord record) {
  if (record.job_id.empty()) record.job_id = job_id_;
  tools::ToolResult result;
  result.is_error = record.status != "success";
  result.content = result.is_error ? record.error : record.result;
  MAESTRO_ASSIGN_OR_RETURN(
      int64_t seq, ledger_->RecordEnded({task_id_, record.job_id, record.call_id}, record.tool,
                                        record.args, record.duration_ms, result));
  TaskStatsDelta d;
  d.tool_calls = 1;
  MAESTRO_RETURN_IF_ERROR(deps_.store->AddTaskStats(task_id_, d));
  return seq;
}

Status TaskContext::RecordProvenance(const Task& task) {
  // The row says what served the task (seed 002); the store fills only
  // what is still empty, so this is a no-op write after the first job.
  if (!task.llm_provider.empty() && !task.model.empty() && task.context_length != 0) {
    return Status::Ok();
  }
  TaskStatsDelta d;
  d.llm_provider = config_.llm_provider;
  d.model = config_.model;
  d.context_length = config_.context_length;
  return deps_.store->AddTaskStats(task_id_, d);
}

Status TaskContext::RecordCompression() {
  TaskStatsDelta d;
  d.compressions = 1;
  return deps_.store->AddTaskStats(task_id_, d);
}

}  // namespace maestro::context
