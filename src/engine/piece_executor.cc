#include "engine/piece_executor.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <ctime>
#include <fstream>
#include <map>
#include <set>

#include "context/task_context.h"
#include "core/crash_point.h"
#include "engine/comment_delivery.h"
#include "engine/delegate.h"
#include "engine/handoff_step.h"
#include "engine/job_prompt.h"
#include "engine/piece_runner.h"
#include "engine/prompt_paths.h"
#include "engine/reconcile.h"
#include "engine/subtasks.h"
#include "engine/trace_spans.h"
#include "tools/dispatcher.h"

namespace maestro::engine {
namespace {

JobStatus StatusOf(const JobOutcome& o) {
  switch (o.kind) {
    case JobOutcome::Kind::kSucceeded:
      return JobStatus::kSucceeded;
    case JobOutcome::Kind::kRetry:
      return JobStatus::kRetry;
    case JobOutcome::Kind::kFailed:
      return JobStatus::kFailed;
    case JobOutcome::Kind::kParked:
      return o.park_status;
    case JobOutcome::Kind::kCancelled:
      return JobStatus::kCancelled;
    case JobOutcome::Kind::kReleased:
      return JobStatus::kQueued;
  }
  return JobStatus::kFailed;
}

// The regular tools the workspace policy (∪ the task's grants) offers, plus
// the request tools that ask for more (always available: seed 000 §2).
std::vector<Json> RegularToolDefs(const tools::ToolRegistry& registry, Store& store,
                                  const Task& task, const tools::ToolPolicy& policy,
                                  int max_delegate_depth) {
  std::set<std::string> allowed = policy.allowed_tools;
  allowed.insert("RequestTool");
  allowed.insert("RequestPackage");
  if (auto grants = store.ListGrants(task.id); grants.ok()) {
    for (const Grant& g : *grants) allowed.insert(g.tool_name);
  }
  // delegate (an agent tool: offered when the policy allows it) needs a depth
  // budget. WriteHandoff is offered below with the schema the context
  // library's ParseHandoff checks, not the registry's definition.
  if (!DelegateOffered(0, max_delegate_depth)) allowed.erase("delegate");
  allowed.erase("WriteHandoff");
  std::vector<Json> defs;
  for (auto& t : registry.ToolsArray(allowed)) defs.push_back(std::move(t));
  // The engine's handoff tool (seed 004), with the schema ParseHandoff checks.
  defs.push_back(context::WriteHandoffToolDefinition());
  return defs;
}

Status WriteFileText(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  if (!f) return Internal("cannot write " + path);
  return Status::Ok();
}

std::string ReadAgentsMd(const std::string& root) {
  std::ifstream f(root + "/AGENTS.md", std::ios::binary);
  if (!f) return "";
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

std::string NowText(Clock& clock) {
  std::time_t t = static_cast<std::time_t>(clock.NowMs() / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm);
  return buf;
}

// The movement a run starts in: where a crashed or parked run of this job
// was (the conversation records it), else resume > initial.
std::string StartMovement(const Piece& piece, const Job& job, const context::MessageStore& ms,
                          bool ran_before) {
  if (ran_before && !ms.movement().empty() && piece.FindMovement(ms.movement())) {
    return ms.movement();
  }
  return SelectStartMovement(piece, job.resume_movement, "");
}

bool HasPendingChildren(Store& store, const std::string& job_id) {
  auto kids = store.ListChildJobs(job_id);
  if (!kids.ok()) return false;
  for (const Job& k : *kids) {
    if (!IsTerminal(k.status)) return true;
  }
  return false;
}

}  // namespace

Result<std::unique_ptr<mcp::JobMcp>> PieceExecutor::OpenJobMcp(const Piece& piece,
                                                               const tools::Workspace& ws,
                                                               const std::string& job_id) const {
  mcp::JobMcpOptions mo;
  mo.servers = &opt_.mcp_servers;
  mo.wanted = PieceToolUniverse(piece);
  if (auto it = opt_.mcp_servers_by_space.find(ws.space); it != opt_.mcp_servers_by_space.end()) {
    mo.only = it->second;
  }
  mo.workspace = ws.root;
  mo.sandbox = opt_.sandbox;
  // Secrets come from maestro's environment only, read at each job start.
  mo.getenv = [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  if (opt_.on_delta) {
    mo.on_progress = [delta = opt_.on_delta, job_id](const Json& d) { delta(job_id, d); };
  }
  return mcp::JobMcp::Open(mo);
}

PieceExecutor::PieceExecutor(PieceExecutorOptions options)
    : opt_(std::move(options)), dirs_(opt_.data_dir) {
  if (Status st = dirs_.Init(); !st.ok()) {
    spdlog::error("contexts under {}: {}", opt_.data_dir, st.ToString());
  }
}

Result<JobOutcome> PieceExecutor::Execute(const Job& job, const Lease&, CancelToken& cancel) {
  MAESTRO_ASSIGN_OR_RETURN(Task task, opt_.store->GetTask(job.task_id));
  std::string piece_name = job.piece.empty() ? task.piece : job.piece;
  auto piece = opt_.catalog->Get(piece_name);
  if (!piece.ok()) return JobOutcome::Failed(piece.status().message());
  auto ws = tools::PrepareWorkspace(opt_.workspace, *opt_.spaces, task.id, task.space);
  if (!ws.ok()) return JobOutcome::Failed("workspace: " + ws.status().message());
  JobStatus final_status = JobStatus::kFailed;
  telemetry::Span span = StartJobSpan(*opt_.tracer, task, job, piece->name);
  auto run = Run(task, job, *piece, *ws, cancel, &final_status, span);
  if (!run.ok()) {
    span.SetError(std::string(StatusCodeName(run.status().code())), run.status().ToString());
    return run.status();  // the worker's retry policy classifies it
  }
  const PieceRunResult& r = *run;
  RecordJobEnd(span, r);
  spdlog::info("job {}: piece {} ended {} in movement {} {}", job.id, piece->name,
               PieceRunStatusName(r.status), r.last_movement, r.reason);
  if (r.status == PieceRunStatus::kCancelled) return JobOutcome::Cancelled(r.reason);
  if (!r.handed_off) PostResultComment(task, job, r);  // a handoff has its own comment
  if (r.status == PieceRunStatus::kCompleted && !r.handed_off) {
    auto commit = tools::CommitWorkspace(*ws, task.id, job.id, task.title);
    if (!commit.ok()) spdlog::warn("job {}: commit: {}", job.id, commit.status().ToString());
  }
  return ToJobOutcome(r, job, RetryPolicy(opt_.retry), opt_.clock->NowMs());
}

Result<PieceRunResult> PieceExecutor::Run(const Task& task, const Job& job, const Piece& piece,
                                          const tools::Workspace& ws, CancelToken& cancel,
                                          JobStatus* final_status, telemetry::Span& job_span) {
  MAESTRO_ASSIGN_OR_RETURN(std::unique_ptr<llm::LlmClient> llm, opt_.llm_factory(job.profile));
  // Workers claim any job (no model filter), so a job for a model this
  // process does not serve ends here with a reason instead of staying queued.
  if (!job.model.empty() && job.model != llm->profile().model) {
    return InvalidArgument(fmt::format(
        "job {} asks for model '{}' but its profile '{}' serves '{}' on this worker", job.id,
        job.model, job.profile.empty() ? "default" : job.profile, llm->profile().model));
  }
  context::ContextConfig cc = opt_.context;
  cc.context_length = llm->profile().context_length;
  context::TaskContextDeps deps{opt_.store, opt_.clock};
  MAESTRO_ASSIGN_OR_RETURN(std::unique_ptr<context::TaskContext> ctx,
                           context::TaskContext::Start(dirs_, deps, task, job, cc));
  auto end_session = [&](JobStatus s) {
    auto moved = context::TaskContext::EndSession(std::move(ctx), s);
    if (!moved.ok()) spdlog::warn("job {}: context: {}", job.id, moved.status().ToString());
  };

  // The job's MCP servers: their tools join a copy of the registry (and,
  // with approval: never, the policy), for this job only.
  tools::ToolRegistry registry = *opt_.registry;
  tools::ToolPolicy policy = ws.policy;
  std::unique_ptr<mcp::JobMcp> mcp_tools;
  if (!opt_.mcp_servers.empty()) {
    auto opened = OpenJobMcp(piece, ws, job.id);
    if (!opened.ok()) {
      end_session(JobStatus::kRetry);
      return opened.status();
    }
    mcp_tools = std::move(opened).value();
    if (const auto& auth = mcp_tools->auth_needed()) {
      // Parked before any LLM call, to resume in the movement it would start.
      PieceRunResult parked;
      parked.status = PieceRunStatus::kWaitingHuman;
      parked.wait_reason = "mcp_auth_required";
      parked.question = auth->message;
      parked.last_movement = StartMovement(piece, job, ctx->messages(), false);
      parked.resume_movement = parked.last_movement;
      end_session(JobStatus::kWaitingHuman);
      *final_status = JobStatus::kWaitingHuman;
      return parked;
    }
    MAESTRO_RETURN_IF_ERROR(mcp_tools->Register(registry, &policy.allowed_tools));
  }
  auto piece_tools = BuildPieceTools(
      piece, RegularToolDefs(registry, *opt_.store, task, policy, opt_.limits.max_delegate_depth));
  if (!piece_tools.ok()) {
    end_session(JobStatus::kFailed);
    return piece_tools.status();
  }
  // The ledger first: calls a crash left open are settled before anything runs.
  auto ledger = tools::ToolLedger::Open(ctx->dir(), opt_.clock);
  auto reconcile = ledger.ok() ? ReconcileAtJobStart(*opt_.store, **ledger, ctx->dir(), job)
                               : Result<ReconcileReport>(ledger.status());
  if (!reconcile.ok() || reconcile->park) {
    end_session(reconcile.ok() ? JobStatus::kWaitingHuman : JobStatus::kRetry);
    if (!reconcile.ok()) return reconcile.status();
    *final_status = JobStatus::kWaitingHuman;
    return *reconcile->park;
  }
  std::string tools_path = ctx->dir() + "/tools.json";
  MAESTRO_RETURN_IF_ERROR(WriteFileText(tools_path, piece_tools->bytes));

  // A run of this job before (retry, park, crash) left its conversation in
  // the newest thread; calls it made whose results never reached it are
  // answered from the ledger / the spawned child, never run again.
  const bool ran_before = ctx->messages().thread_job_id() == job.id;
  if (ran_before && !ctx->messages().seed_incomplete()) {
    auto answered = AnswerSettledCalls(*opt_.store, ctx->messages(), ctx->dir(), job, piece.name);
    if (!answered.ok()) {
      end_session(JobStatus::kRetry);
      return answered.status();
    }
  }
  std::string transcript = ctx->messages().transcript_path();
  const std::string start = StartMovement(piece, job, ctx->messages(), ran_before);
  if (ran_before) RecordJobResume(job_span, start);
  MAESTRO_ASSIGN_OR_RETURN(JobPromptPlan plan,
                           PlanJobPrompt(*opt_.store, task, job, transcript, ran_before, start));
  // Seed 000's subtask resume notice: the ended children's results — once:
  // a later resume replays the run that carried it.
  if (auto kids = SummarizeSubtasks(*opt_.store, job.id); kids.ok() && !kids->text.empty()) {
    std::string notice = "## Subtasks\nThe subtasks of this job have ended:\n" + kids->text;
    if (!ran_before || !ConversationHolds(transcript, notice)) {
      plan.instruction += "\n\n" + notice;
    }
  }
  PromptInputs in;
  in.piece = &piece;
  in.tools = &*piece_tools;
  in.preamble.agents_md = ReadAgentsMd(ws.root);
  in.preamble.working_directory = ws.root;
  in.dynamic.datetime = NowText(*opt_.clock);
  in.task_instruction = plan.instruction;
  in.start_movement = start;
  MAESTRO_ASSIGN_OR_RETURN(SeededConversation seeded,
                           SeedConversation(in, JobStart{plan.path, transcript}));
  spdlog::info("job {}: prompt path {} replayed_turns={} start={}", job.id,
               static_cast<int>(plan.path), seeded.replayed_turns, in.start_movement);
  Status started = NotFound("not a handoff continuation");
  if (plan.handoff_continuation) {
    started = SeedHandoffContinuation(*ctx, job.id, seeded.messages.front(), plan.instruction,
                                      piece, in.start_movement);
    if (!started.ok()) spdlog::warn("job {}: handoff continuation: {}", job.id, started.ToString());
  }
  if (!started.ok()) {
    MAESTRO_RETURN_IF_ERROR(
        ctx->messages().SeedThread(job.id, seeded.messages, in.start_movement).status());
  }
  CrashPoint("seed.written");
  // The comments are in the conversation now (tagged): acknowledge them.
  if (Status acked = AckDelivered(*opt_.store, plan.delivered); !acked.ok()) {
    spdlog::warn("job {}: comment delivery: {}", job.id, acked.ToString());
  }
  HandoffStep handoff({cc, job, ws.root, "task " + task.id + ": its instruction (the # Task text)",
                       task.instruction});

  tools::Dispatcher dispatcher(&registry, tools::ToolAuthorizer(opt_.store));
  context::ContextCompressor compressor(llm.get(), cc);
  AgentLoopDeps d;
  d.llm = llm.get();
  d.ctx = ctx.get();
  d.compressor = &compressor;
  d.store = opt_.store;
  d.dispatcher = &dispatcher;
  d.dispatch = tools::DispatchContext{
      task.id, job.id,        ws.root, policy,
      &cancel, ledger->get(), {},      tools::TaskPackagesDir(opt_.data_dir, task.id)};
  d.piece = &piece;
  d.piece_tools = &*piece_tools;
  d.tools_path = tools_path;
  d.cancel = &cancel;
  d.packages = opt_.packages;
  d.on_delta = opt_.on_delta;
  d.limits = opt_.limits;
  d.task_id = task.id;
  d.job_id = job.id;
  d.handoff = &handoff;
  d.tracer = opt_.tracer;
  d.trace_parent = job_span.context();
  d.dispatch.tracer = opt_.tracer;
  d.dispatch.trace_parent = job_span.context();
  BudgetContext budget_ctx;
  if (auto limits = budget::ParseLimits(task.budget, "budget"); limits.ok()) {
    budget_ctx = {*limits, opt_.prices, opt_.clock};
    d.budget = &budget_ctx;
  } else {
    spdlog::warn("job {}: task budget ignored: {}", job.id, limits.status().ToString());
  }

  PieceRunOptions ro;
  ro.start_movement = in.start_movement;
  ro.ask_count = job.ask_count;
  ro.max_asks = opt_.max_asks;
  ro.has_pending_children = [&] { return HasPendingChildren(*opt_.store, job.id); };
  PieceRunResult r = RunPiece(d, ro);
  *final_status = StatusOf(ToJobOutcome(r, job, RetryPolicy(opt_.retry), opt_.clock->NowMs()));
  // After a handoff the task goes on in the queued continuation (paused/).
  if (r.handed_off) *final_status = JobStatus::kQueued;
  end_session(*final_status);
  return r;
}

void PieceExecutor::PostResultComment(const Task& task, const Job& job, const PieceRunResult& r) {
  Comment c;
  c.task_id = task.id;
  c.job_id = job.id;
  c.author = "agent";
  switch (r.status) {
    case PieceRunStatus::kCompleted:
      c.kind = CommentKind::kResult;
      c.body = r.result;
      break;
    case PieceRunStatus::kWaitingHuman:
      // Request cards speak for themselves; an ASK and a reconcile park need words.
      // (A budget park has its own system note: budget_step.cc.)
      if (r.wait_reason != "ask" && r.wait_reason != "reconcile" &&
          r.wait_reason != "mcp_auth_required") {
        return;
      }
      c.kind = CommentKind::kQuestion;
      c.body = r.question;
      break;
    case PieceRunStatus::kAborted:
    case PieceRunStatus::kError:
      c.kind = CommentKind::kNote;
      c.body = fmt::format("The job stopped in movement '{}': {}{}", r.last_movement, r.reason,
                           r.result.empty() ? "" : "\n\n" + r.result);
      break;
    default:
      return;
  }
  if (auto added = opt_.store->AddComment(c); !added.ok()) {
    spdlog::warn("job {}: result comment: {}", job.id, added.status().ToString());
  }
}

LlmFactory OpenAiFactory(const Config& cfg) {
  auto profiles =
      std::make_shared<std::map<std::string, llm::ModelProfile>>(llm::ProfilesFromConfig(cfg));
  return [profiles](const std::string& name) -> Result<std::unique_ptr<llm::LlmClient>> {
    auto it = profiles->find(name.empty() ? "default" : name);
    if (it == profiles->end()) return NotFound("no LLM profile named " + name);
    return std::unique_ptr<llm::LlmClient>(std::make_unique<llm::OpenAiClient>(it->second));
  };
}

}  // namespace maestro::engine
