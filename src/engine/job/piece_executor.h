// PieceExecutor: the JobExecutor the worker calls (seed 000 Worker.executeJob
// -> runPiece -> handlePieceResult; the interface is store/job_executor.h).
//
// Execute(job):
//   task + piece (catalog)        an unknown piece fails the job
//   workspace                     tools::PrepareWorkspace (space or ephemeral)
//   LLM client                    the injected factory, by the job's profile
//   context                       TaskContext::Start (contexts/running/<task>)
//   MCP                           mcp::JobMcp opens the servers the piece
//                                 may use; a required one without its
//                                 token parks (mcp_auth_required)
//   tools                         BuildPieceTools over the policy's tools
//                                 (+ the job's MCP tools, in the job's copy
//                                 of the registry); written to tools.json
//   prompt path                   PlanJobPrompt -> SeedConversation -> a
//                                 new thread (engine/prompt/prompt_paths.h)
//   RunPiece                      -> PieceRunResult
//   result                        ToJobOutcome, once: what happened (the
//                                 store decides the status); the answer or
//                                 question as a task comment; the workspace
//                                 committed on success
//
// The context directory leaves running/ for paused/ on every way out of a
// run, an error return included (ContextSession): the job no longer runs
// and its end is not committed yet, and while it still holds the job no
// other job of the task can start. After the commit, OnCommitted moves it on
// from what the store decided: to completed/ when the task's committed
// status is terminal (no other job goes on with it), else it stays in
// paused/ (retry, a park, a requeue, an answered ASK's follow-up, a
// handoff's continuation). A crash between the commit and that move leaves
// it in paused/; the start-up reconcile (context::ReconcileContextsAtStart)
// puts it where the committed status says.
//
// Thread safety: Execute may run concurrently for different tasks; the
// borrowed registry, catalog and spaces are read-only.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "browser/browser_service.h"
#include "context/context_config.h"
#include "context/context_dirs.h"
#include "context/task_context.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/env.h"
#include "engine/loop/auto_prompter.h"
#include "engine/loop/movement_result.h"
#include "engine/loop/movement_runner.h"
#include "engine/piece/piece_catalog.h"
#include "engine/piece/piece_tools.h"
#include "llm/llm_client.h"
#include "mcp/mcp_tools.h"
#include "store/job_executor.h"
#include "store/store.h"
#include "telemetry/tracer.h"
#include "tools/registry.h"
#include "workspace/workspace.h"

namespace maestro::engine {

// Makes the LLM client of a job's profile ("" = default). kNotFound for an
// unknown profile.
using LlmFactory = std::function<Result<std::unique_ptr<llm::LlmClient>>(const std::string&)>;

struct PieceExecutorOptions {
  Store* store = nullptr;                         // required
  const PieceCatalog* catalog = nullptr;          // required
  const tools::ToolRegistry* registry = nullptr;  // required
  const tools::SpaceRegistry* spaces = nullptr;   // required
  tools::WorkspaceOptions workspace;
  std::string data_dir;                 // contexts/ live here
  SpareDirs* context_spares = nullptr;  // ready new context directories; may be null
  context::ContextConfig context;
  LlmFactory llm_factory;  // required
  LoopLimits limits;
  int max_asks = 3;
  DeltaFn on_delta;  // may be empty
  // Called as each run (one claim) of a job starts, with the claim's fencing
  // token: the live stream numbers the run's deltas from it, so they keep
  // growing across a retry in another process (notify/job_stream.h).
  std::function<void(const std::string& job_id, int64_t fencing_token)> on_run_start;
  const tools::PackageInstaller* packages = nullptr;  // may be null
  // MCP servers (src/mcp/mcp_tools.h) and the sandbox their stdio servers
  // run in; empty: no MCP tools.
  std::map<std::string, mcp::ServerConfig> mcp_servers;
  // Per space: the servers its jobs may open (spaces.<name>.mcp_servers);
  // a space not listed here may open every server.
  std::map<std::string, std::set<std::string>> mcp_servers_by_space;
  std::shared_ptr<const tools::Sandbox> sandbox;
  Clock* clock = SystemClock::Default();
  // Files and processes of every job (tools.json, the conversation, tools).
  Env* env = Env::Default();
  // Spans of each job run (engine/loop/trace_spans.h); the no-op tracer: none.
  telemetry::Tracer* tracer = &telemetry::NoopTracer();
  // USD per million tokens by profile, for a task's max_cost (budget_step.h).
  budget::PriceTable prices;
  // The config's budget defaults and quotas: what a SpinOffTask child gets
  // when its parent has no limits, and its owner's daily quota (subtasks.h).
  budget::Settings budgets;
  // The agent's judgement (issue 21): Auto Prompter policies (auto_prompter.h;
  // "" = none), the global skills dir ("" = none; knowledge/skills.h), the
  // Memory tool over <data_dir>/memory/<space> (knowledge/memory.h), and
  // when ended tasks are reflected on (reflection.h: off|failure|success|always).
  std::string policies_dir;
  std::string skills_dir;
  bool memory = false;
  std::string reflection = "off";
  std::string default_piece = "chat";  // the router's fallback (piece_router.h)
  // The jobs' browsers (src/browser); null: no BrowseWeb. A job's browser
  // closes when the job leaves the worker not parked.
  browser::BrowserService* browsers = nullptr;
};

class PieceExecutor final : public JobExecutor {
 public:
  explicit PieceExecutor(PieceExecutorOptions options);
  Result<JobOutcome> Execute(const Job& job, const Lease& lease, CancelToken& cancel) override;
  // After the commit: the context directory to completed/ when the task's
  // committed status is terminal; the Reflection task of a retryable
  // failure the store failed (its retries spent).
  void OnCommitted(const Job& job, const JobOutcome& reported, const Job& committed) override;
  // The Reflection task of a job that failed by an error return (its
  // transcript read from the task's context dir).
  void OnFailedByError(const Job& job, const Status& error) override;

 private:
  // Ends a job's context session when the run leaves its scope, however it
  // leaves: the directory moves from running/ to paused/ (OnCommitted moves
  // it on once the store committed the job's end).
  class ContextSession {
   public:
    ContextSession(std::unique_ptr<context::TaskContext> ctx, std::string job_id);
    ~ContextSession();
    ContextSession(const ContextSession&) = delete;
    ContextSession& operator=(const ContextSession&) = delete;
    context::TaskContext& ctx() { return *ctx_; }

   private:
    std::unique_ptr<context::TaskContext> ctx_;
    std::string job_id_;
  };
  // How a run ended: the piece walk's result and the job outcome it maps to.
  struct RunEnd {
    PieceRunResult result;
    JobOutcome outcome;
    std::string transcript_excerpt;  // for a Reflection task (reflection.h); "" = none
  };

  // The job's tools: a copy of the registry with the job's MCP tools, the
  // policy, the MCP sessions those tools call (kept open for the run) and
  // the piece's tools array; `park` set: a required MCP server needs a
  // token, and the job parks before any LLM call.
  struct JobTools {
    tools::ToolRegistry registry;
    tools::ToolPolicy policy;
    std::unique_ptr<mcp::JobMcp> mcp;
    PieceTools piece_tools;
    std::optional<PieceRunResult> park;
    // The system text's indexes of what the job's knowledge tools reach.
    std::string skills_index;
    std::string memory_index;
  };

  Result<RunEnd> Run(const Task& task, const Job& job, const Piece& piece,
                     const tools::Workspace& ws, CancelToken& cancel, telemetry::Span& job_span);
  Result<RunEnd> RunSession(ContextSession& session, const Task& task, const Job& job,
                            const Piece& piece, const tools::Workspace& ws, llm::LlmClient& llm,
                            const context::ContextConfig& cc, CancelToken& cancel,
                            telemetry::Span& job_span);
  Result<JobTools> OpenJobTools(const Task& task, const Job& job, const Piece& piece,
                                const tools::Workspace& ws, context::TaskContext& ctx) const;
  // The one mapping of a run's result: ToJobOutcome (what happened; the
  // store decides the status), and the transcript excerpt a Reflection
  // task would read.
  RunEnd Ended(PieceRunResult r, const Job& job, ContextSession& session) const;
  // Plans the job's prompt path, seeds the conversation's new thread and
  // acknowledges the comments and attachments it delivered (`vision`: the
  // profile takes images). `*start` is the run's start movement; a
  // follow-up's first run moves it to the movement its conversation is in.
  Status SeedPrompt(context::TaskContext& ctx, const Task& task, const Job& job, const Piece& piece,
                    const JobTools& jt, const std::string& workspace_root, bool vision,
                    bool ran_before, std::string* start);
  // Registers the knowledge tools the job may use (knowledge_tools.h) and
  // fills jt's indexes.
  Status AddKnowledgeTools(const Task& task, const tools::Workspace& ws, JobTools& jt) const;
  // The job's Auto Prompter snapshot (recorded as a policy.snapshot event).
  Result<std::unique_ptr<AutoPrompter>> SnapshotPolicy(const Task& task, const Job& job,
                                                       const Piece& piece,
                                                       const tools::Workspace& ws) const;
  // A task on kRoutedPiece: the piece the router chose (or another worker
  // chose first), stored before the job runs.
  Result<std::string> Route(const Task& task, const Job& job) const;
  // After a job ended: the Reflection task, when `reflection` asks for one
  // and the end is final whatever the store decides (succeeded, a fatal
  // failure); a retryable failure is reflected on in OnCommitted if the
  // store failed it.
  void MaybeReflect(const Task& task, const Job& job, const RunEnd& end) const;
  // The Reflection task of a job that ended `end` (from the store), its
  // transcript read from the task's context directory.
  void ReflectOnEnded(const Job& job, JobStatus end, const std::string& reason,
                      const std::string& result);
  void PostResultComment(const Task& task, const Job& job, const PieceRunResult& r);
  Result<std::unique_ptr<mcp::JobMcp>> OpenJobMcp(const Piece& piece, const tools::Workspace& ws,
                                                  const std::string& job_id) const;

  PieceExecutorOptions opt_;
  context::ContextDirs dirs_;
};

// Production factory: HttpLlmClient per configured profile.
LlmFactory OpenAiFactory(const Config& cfg);

}  // namespace maestro::engine
