// TaskContext: one task's context directory opened for a job session — the
// object the agent loop holds while it runs a job (seed 002's
// TaskContextManager).
//
// Flow: when a worker starts a job, Start() puts the task's directory in
// contexts/running/ (creating it and its static metadata.json the first
// time, or moving it back from paused/), opens the stores (messages,
// summaries, the tools ledger, events) and repairs any crash damage. While
// the job runs, the loop appends messages, records LLM and tool calls
// through RecordLlmCall/RecordToolCall (which also bump the task row's
// statistics with Store::AddTaskStats), the Dispatcher records its calls in
// ledger() (the one writer of tools.jsonl), and the loop asks for the paths of
// current.jsonl and request.json. When the job stops running (parks,
// finishes, fails, is cancelled) EndSession() closes the files and moves the
// directory to paused/ or completed/ to match the job's status.
//
// Thread safety: owned by the thread running the job; one TaskContext per
// task at a time (the store never runs two jobs of a task at once).
#pragma once

#include <memory>
#include <string>

#include "context/context_config.h"
#include "context/context_dirs.h"
#include "context/ledger.h"
#include "context/message_store.h"
#include "context/new_dir_env.h"
#include "context/record_stores.h"
#include "core/clock.h"
#include "core/env.h"
#include "store/store.h"
#include "store/types.h"

namespace maestro::context {

struct TaskContextDeps {
  Store* store = nullptr;  // required: statistics
  Clock* clock = SystemClock::Default();
  Env* env = Env::Default();  // every file and directory operation
};

class TaskContext {
 public:
  // Opens (creating if needed) the context of `task` for `job`.
  static Result<std::unique_ptr<TaskContext>> Start(const ContextDirs& dirs,
                                                    const TaskContextDeps& deps, const Task& task,
                                                    const Job& job, const ContextConfig& config);

  // A delegate sub-agent's own conversation (seed 000 §3 runDelegateSubAgent:
  // an isolated child Conversation): `dir()/delegates/<name>/` with its own
  // messages/current/transcript, summaries, tools and events files; the same
  // task, store, clock and config. It lives inside the task's directory, so it
  // moves with it; destroy it when the sub-agent ends (never EndSession it).
  Result<std::unique_ptr<TaskContext>> OpenDelegate(const std::string& name) const;

  // Closes `ctx` and moves its directory to follow `status`.
  static Result<std::string> EndSession(std::unique_ptr<TaskContext> ctx, JobStatus status);

  MessageStore& messages() { return messages_; }
  SummaryStore& summaries() { return summaries_; }
  // tools.jsonl read as ended calls; written only through ledger().
  const ToolStore& tools() const { return tools_; }
  // The task's (or delegate's) tools ledger, thread-safe: the Dispatcher's.
  tools::ToolLedger& ledger() { return *ledger_; }
  EventLog& events() { return events_; }

  const std::string& dir() const { return dir_; }
  std::string handoffs_dir() const { return dir_ + "/handoffs"; }
  std::string request_json_path() const { return dir_ + "/request.json"; }
  std::string metadata_path() const { return dir_ + "/metadata.json"; }
  const std::string& task_id() const { return task_id_; }
  const std::string& job_id() const { return job_id_; }
  const ContextConfig& config() const { return config_; }
  bool is_resumed() const { return resumed_; }  // the directory existed before
  Store& store() { return *deps_.store; }
  Clock& clock() { return *deps_.clock; }
  Env& env() { return *deps_.env; }

  // An LLM call finished: llm_call_count += 1, total_tokens += prompt + completion.
  // With `event` (the loop's llm.call event), the event is appended in the
  // same transaction as the counters: one commit per LLM call.
  Status RecordLlmCall(int64_t prompt_tokens, int64_t completion_tokens,
                       const Event* event = nullptr);
  // A tool call the engine ran without a Dispatcher finished: its one
  // ledger record (ToolLedger::RecordEnded) + tool_call_count += 1.
  // Returns the record's seq.
  Result<int64_t> RecordToolCall(ToolCallRecord record);
  // A compression happened: compression_count += 1.
  Status RecordCompression();

 private:
  TaskContext() = default;
  Status WriteMetadata(const Task& task, const Job& job);
  // The task row's llm_provider/model/context_length from the resolved
  // profile, where the row has none yet (seed 002; issue 45 item 8).
  Status RecordProvenance(const Task& task);
  // metadata.json parses as a JSON object (it is written without fsync).
  bool MetadataWhole() const;
  Status OpenStores();

  const ContextDirs* dirs_ = nullptr;
  // A new directory's: deps_.env points to it (declared before the stores,
  // which write through it; shared with delegates, whose directories are
  // inside this one).
  std::shared_ptr<NewDirEnv> new_dir_env_;
  TaskContextDeps deps_;
  ContextConfig config_;
  std::string task_id_, job_id_, dir_;
  bool resumed_ = false;
  MessageStore messages_;
  SummaryStore summaries_;
  std::unique_ptr<tools::ToolLedger> ledger_;
  ToolStore tools_;
  EventLog events_;
};

}  // namespace maestro::context
