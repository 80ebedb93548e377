#include "engine/job/piece_executor.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <ctime>
#include <fstream>
#include <map>
#include <set>

#include "browser/browse_web_tool.h"
#include "context/task_context.h"
#include "core/crash_point.h"
#include "core/tree_root.h"
#include "engine/handoff/trigger.h"
#include "engine/job/piece_router.h"
#include "engine/job/piece_runner.h"
#include "engine/job/reconcile.h"
#include "engine/job/reflection.h"
#include "engine/loop/comment_delivery.h"
#include "engine/loop/delegate.h"
#include "engine/loop/trace_spans.h"
#include "engine/prompt/attachment_context.h"
#include "engine/prompt/console_context.h"
#include "engine/prompt/mission_context.h"
#include "engine/prompt/prompt_paths.h"
#include "engine/prompt/workspace_context.h"
#include "knowledge/knowledge_tools.h"
#include "knowledge/memory.h"
#include "tools/dispatcher.h"
#include "tools/park_tools.h"
#include "tools/run_remote.h"
#include "tools/tool_names.h"
#include "workspace/workspace_path.h"

namespace maestro::engine {
namespace {

// How much of an ended task's transcript its Reflection task reads.
constexpr size_t kReflectionExcerptBytes = 12'000;

// The end a reported outcome has whatever the store's facts: succeeded, or
// failed for good. (A retryable failure, a park, a cancel are the store's to
// decide; Reflection only reads succeeded and failed.)
std::optional<JobStatus> FinalEnd(const JobOutcome& o) {
  if (o.kind == JobOutcome::Kind::kSucceeded) return JobStatus::kSucceeded;
  if (o.kind == JobOutcome::Kind::kFailed && !o.retryable) return JobStatus::kFailed;
  return std::nullopt;
}

// The regular tools the workspace policy (∪ the task's grants) offers, plus
// the request tools that ask for more (always available: seed 000 §2).
std::vector<Json> RegularToolDefs(const tools::ToolRegistry& registry, Store& store,
                                  const Task& task, const tools::ToolPolicy& policy,
                                  int max_delegate_depth) {
  std::set<std::string> allowed = policy.allowed_tools;
  allowed.insert(tools::kRequestTool);
  allowed.insert(tools::kRequestPackage);
  if (auto grants = store.ListGrants(task.id); grants.ok()) {
    for (const Grant& g : *grants) allowed.insert(g.tool_name);
  }
  // delegate (an agent tool: offered when the policy allows it) needs a depth
  // budget. WriteHandoff is always offered, after every other regular tool
  // (the job's MCP tools included), so it is taken out here and added last.
  if (!DelegateOffered(0, max_delegate_depth)) allowed.erase(tools::kDelegate);
  allowed.erase(tools::kWriteHandoff);
  std::vector<Json> defs;
  for (auto& t : registry.ToolsArray(allowed)) defs.push_back(std::move(t));
  defs.push_back(tools::ToolEntry(tools::WriteHandoffToolSpec()));
  return defs;
}

// The workspace's AGENTS.md, read beneath its TreeRoot: the agent can write
// the workspace, and a symlink it plants there (to a host file, the data
// dir's secrets) must not be followed into the system text. Missing, a
// symlink, a FIFO or unreadable: no instructions. At most kAgentsMdBytes.
constexpr size_t kAgentsMdBytes = 256 * 1024;
std::string ReadAgentsMd(const std::string& root) {
  auto tree = TreeRoot::Open(root);
  if (!tree.ok()) return "";
  auto text = ReadTreeFile(*tree, "AGENTS.md", kAgentsMdBytes);
  if (!text.ok() && text.status().code() != StatusCode::kNotFound) {
    spdlog::warn("workspace {}: AGENTS.md not used: {}", root, text.status().ToString());
  }
  return text.ok() ? *text : "";
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

// A follow-up (a comment or an ASK answer after the job ended) resumes in
// the movement its replayed conversation is in — where the task ended, whose
// guidance the replay ends with — so its tools and transitions are that
// movement's (issue 45 item 2). `fallback` when that movement is unknown or
// not of this piece.
std::string FollowUpStartMovement(const Piece& piece, const std::string& conversation_movement,
                                  const std::string& fallback) {
  if (!conversation_movement.empty() && piece.FindMovement(conversation_movement)) {
    return conversation_movement;
  }
  return fallback;
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

PieceExecutor::ContextSession::ContextSession(std::unique_ptr<context::TaskContext> ctx,
                                              std::string job_id)
    : ctx_(std::move(ctx)), job_id_(std::move(job_id)) {}

PieceExecutor::ContextSession::~ContextSession() {
  // Not running any more, its end not committed yet: paused/ (queued is a
  // status whose placement is paused/; the store has not decided anything).
  auto moved = context::TaskContext::EndSession(std::move(ctx_), JobStatus::kQueued);
  if (!moved.ok()) spdlog::warn("job {}: context: {}", job_id_, moved.status().ToString());
}

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
    : opt_(std::move(options)), dirs_(opt_.data_dir, opt_.env, opt_.context_spares) {
  if (Status st = dirs_.Init(); !st.ok()) {
    spdlog::error("contexts under {}: {}", opt_.data_dir, st.ToString());
  }
}

Result<JobOutcome> PieceExecutor::Execute(const Job& job, const Lease& lease, CancelToken& cancel) {
  if (opt_.on_run_start) opt_.on_run_start(job.id, lease.fencing_token);
  MAESTRO_ASSIGN_OR_RETURN(Task task, opt_.store->GetTask(job.task_id));
  std::string piece_name = job.piece.empty() ? task.piece : job.piece;
  if (piece_name == kRoutedPiece) {
    MAESTRO_ASSIGN_OR_RETURN(piece_name, Route(task, job));
    task.piece = piece_name;
  }
  auto piece = opt_.catalog->Get(piece_name);
  if (!piece.ok()) return JobOutcome::Failed(piece.status().message());
  auto ws = tools::PrepareWorkspace(opt_.workspace, *opt_.spaces, task.id, task.space);
  if (!ws.ok()) return JobOutcome::Failed("workspace: " + ws.status().message());
  telemetry::Span span = StartJobSpan(*opt_.tracer, task, job, piece->name);
  auto run = Run(task, job, *piece, *ws, cancel, span);
  // The browser outlives only a park (a person may log in through it), and
  // a park only for browser.park_keep_ms (the sweep counts from here).
  const bool parked = run.ok() && run->outcome.kind == JobOutcome::Kind::kParked;
  if (opt_.browsers && !parked) {
    opt_.browsers->CloseJob(job.id);
  } else if (opt_.browsers) {
    opt_.browsers->Parked(job.id);
  }
  if (!run.ok()) {
    span.SetError(std::string(StatusCodeName(run.status().code())), run.status().ToString());
    return run.status();  // the worker's retry policy classifies it
  }
  const PieceRunResult& r = run->result;
  RecordJobEnd(span, r);
  spdlog::info("job {}: piece {} ended {} in movement {} {}", job.id, piece->name,
               PieceRunStatusName(r.status), r.last_movement, r.reason);
  if (!r.handed_off) PostResultComment(task, job, r);  // a handoff has its own comment
  if (r.status == PieceRunStatus::kCompleted && !r.handed_off) {
    auto commit = tools::CommitWorkspace(*ws, task.id, job.id, task.title);
    if (!commit.ok()) spdlog::warn("job {}: commit: {}", job.id, commit.status().ToString());
  }
  MaybeReflect(task, job, *run);
  return run->outcome;
}

PieceExecutor::RunEnd PieceExecutor::Ended(PieceRunResult r, const Job& /*job*/,
                                           ContextSession& session) const {
  JobOutcome outcome = ToJobOutcome(r);
  std::string excerpt;
  if (opt_.reflection != "off" && !r.handed_off && FinalEnd(outcome)) {
    excerpt = TranscriptExcerpt(session.ctx().env(), session.ctx().messages().transcript_path(),
                                kReflectionExcerptBytes);
  }
  return RunEnd{std::move(r), std::move(outcome), std::move(excerpt)};
}

Result<PieceExecutor::RunEnd> PieceExecutor::Run(const Task& task, const Job& job,
                                                 const Piece& piece, const tools::Workspace& ws,
                                                 CancelToken& cancel, telemetry::Span& job_span) {
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
  cc.llm_provider = llm->profile().name;
  cc.model = llm->profile().model;
  context::TaskContextDeps deps{opt_.store, opt_.clock};
  MAESTRO_ASSIGN_OR_RETURN(std::unique_ptr<context::TaskContext> ctx,
                           context::TaskContext::Start(dirs_, deps, task, job, cc));
  ContextSession session(std::move(ctx), job.id);
  // However the run ends, an error return included, the session's end
  // leaves the directory in paused/ until the store has decided.
  return RunSession(session, task, job, piece, ws, *llm, cc, cancel, job_span);
}

Result<PieceExecutor::RunEnd> PieceExecutor::RunSession(
    ContextSession& session, const Task& task, const Job& job, const Piece& piece,
    const tools::Workspace& ws, llm::LlmClient& llm, const context::ContextConfig& cc,
    CancelToken& cancel, telemetry::Span& job_span) {
  context::TaskContext& ctx = session.ctx();
  MAESTRO_ASSIGN_OR_RETURN(JobTools jt, OpenJobTools(task, job, piece, ws, ctx));
  if (jt.park) return Ended(std::move(*jt.park), job, session);
  MAESTRO_ASSIGN_OR_RETURN(std::unique_ptr<AutoPrompter> policy,
                           SnapshotPolicy(task, job, piece, ws));
  const PieceTools& piece_tools = jt.piece_tools;
  // The ledger (tools.jsonl's one writer, opened with the context) first:
  // calls a crash left open are settled before anything runs.
  tools::ToolLedger& ledger = ctx.ledger();
  MAESTRO_ASSIGN_OR_RETURN(ReconcileReport reconcile,
                           ReconcileAtJobStart(*opt_.store, ledger, ctx.dir(), job));
  if (reconcile.park) return Ended(std::move(*reconcile.park), job, session);
  std::string tools_path = ctx.dir() + "/tools.json";
  MAESTRO_RETURN_IF_ERROR(WriteStringToFile(*opt_.env, tools_path, piece_tools.bytes));

  // A run of this job before (retry, park, crash) left its conversation in
  // the newest thread; calls it made whose results never reached it are
  // answered from the ledger / the spawned child, never run again.
  const bool ran_before = ctx.messages().thread_job_id() == job.id;
  if (ran_before && !ctx.messages().seed_incomplete()) {
    MAESTRO_RETURN_IF_ERROR(
        AnswerSettledCalls(*opt_.store, ctx.messages(), ctx.dir(), job, piece.name).status());
  }
  std::string start = StartMovement(piece, job, ctx.messages(), ran_before);
  if (ran_before) RecordJobResume(job_span, start);
  MAESTRO_RETURN_IF_ERROR(
      SeedPrompt(ctx, task, job, piece, jt, ws.root, llm.profile().vision, ran_before, &start));
  HandoffStep handoff({cc, job, ws.root, "task " + task.id + ": its instruction (the # Task text)",
                       task.instruction});

  tools::Dispatcher dispatcher(&jt.registry, tools::ToolAuthorizer(opt_.store),
                               {opt_.env, opt_.tracer});
  context::ContextCompressor compressor(&llm, cc);
  const LoopServices services{.llm = &llm,
                              .store = opt_.store,
                              .dispatcher = &dispatcher,
                              .compressor = &compressor,
                              .packages = opt_.packages,
                              .tracer = opt_.tracer,
                              .env = opt_.env,
                              .on_delta = opt_.on_delta};
  BudgetContext budget_ctx;
  const BudgetContext* budget = nullptr;
  if (auto limits = budget::ParseLimits(task.budget, "budget"); limits.ok()) {
    budget_ctx = {*limits, opt_.prices, opt_.clock, &opt_.budgets};
    budget = &budget_ctx;
  } else {
    spdlog::warn("job {}: task budget ignored: {}", job.id, limits.status().ToString());
  }
  const JobScope scope{{.task_id = task.id,
                        .job_id = job.id,
                        .workspace_root = ws.root,
                        .policy = jt.policy,
                        .cancel = &cancel,
                        .ledger = &ledger,
                        .packages_dir = tools::TaskPackagesDir(opt_.data_dir, task.id)},
                       opt_.limits,
                       budget,
                       policy.get()};
  AgentLoopDeps d{services, scope,
                  LoopState{.ctx = &ctx,
                            .piece = &piece,
                            .piece_tools = &piece_tools,
                            .tools_path = tools_path,
                            .handoff = &handoff,
                            .trace_parent = job_span.context()}};

  PieceRunOptions ro;
  ro.start_movement = start;
  ro.ask_count = job.ask_count;
  ro.max_asks = opt_.max_asks;
  ro.has_pending_children = [&] { return HasPendingChildren(*opt_.store, job.id); };
  return Ended(RunPiece(d, ro), job, session);
}

Result<PieceExecutor::JobTools> PieceExecutor::OpenJobTools(const Task& task, const Job& job,
                                                            const Piece& piece,
                                                            const tools::Workspace& ws,
                                                            context::TaskContext& ctx) const {
  // The job's MCP servers: their tools join a copy of the registry (and,
  // with approval: never, the policy), for this job only.
  JobTools jt{*opt_.registry, ws.policy, nullptr, {}, std::nullopt, "", ""};
  if (!opt_.mcp_servers.empty()) {
    MAESTRO_ASSIGN_OR_RETURN(jt.mcp, OpenJobMcp(piece, ws, job.id));
    if (const auto& auth = jt.mcp->auth_needed()) {
      // Parked before any LLM call, to resume in the movement it would start.
      PieceRunResult parked;
      parked.status = PieceRunStatus::kWaitingHuman;
      parked.wait_reason = "mcp_auth_required";
      parked.question = auth->message;
      parked.last_movement = StartMovement(piece, job, ctx.messages(), false);
      parked.resume_movement = parked.last_movement;
      jt.park = std::move(parked);
      return jt;
    }
    MAESTRO_RETURN_IF_ERROR(jt.mcp->Register(jt.registry, &jt.policy.allowed_tools));
  }
  MAESTRO_RETURN_IF_ERROR(AddKnowledgeTools(task, ws, jt));
  if (opt_.browsers) {  // the same two entries for every job: the prefix stays shared
    MAESTRO_RETURN_IF_ERROR(
        browser::RegisterBrowseWeb(jt.registry, opt_.browsers, job.id, task.id, ws.space));
    jt.policy.allowed_tools.insert(tools::kBrowseWeb);
    jt.policy.allowed_tools.insert(tools::kRequestCaptchaHelp);
  }
  if (!ws.policy.ssh_hosts.empty()) {  // the space's SSH hosts (tools/run_remote.h)
    tools::RunRemoteOptions remote;
    remote.hosts = ws.policy.ssh_hosts;
    MAESTRO_RETURN_IF_ERROR(tools::RegisterRunRemote(jt.registry, std::move(remote)));
  }
  MAESTRO_ASSIGN_OR_RETURN(
      jt.piece_tools,
      BuildPieceTools(piece, RegularToolDefs(jt.registry, *opt_.store, task, jt.policy,
                                             opt_.limits.max_delegate_depth)));
  return jt;
}

Status PieceExecutor::SeedPrompt(context::TaskContext& ctx, const Task& task, const Job& job,
                                 const Piece& piece, const JobTools& jt,
                                 const std::string& workspace_root, bool vision, bool ran_before,
                                 std::string* start) {
  const std::string transcript = ctx.messages().transcript_path();
  MAESTRO_ASSIGN_OR_RETURN(
      JobPromptPlan plan,
      PlanJobPrompt(*opt_.store, task, job, {transcript, ctx.handoffs_dir(), &ctx.env()},
                    ran_before, *start));
  // The movement the replayed conversation is in (its last guidance).
  const std::string conversation_movement = ctx.messages().movement();
  if (!ran_before && plan.path == PromptPath::kFollowUp) {
    *start = FollowUpStartMovement(piece, conversation_movement, *start);
  }
  PromptInputs in;
  in.piece = &piece;
  in.tools = &jt.piece_tools;
  in.preamble.agents_md = ReadAgentsMd(workspace_root);
  in.preamble.skills_index = jt.skills_index;
  in.preamble.memory_index = jt.memory_index;
  in.preamble.working_directory = tools::kWorkspaceMount;  // the same for every task
  in.dynamic.datetime = NowText(*opt_.clock);
  in.dynamic.mission = MissionContextText(*opt_.store, task);
  // The files sent since the last prompt, in its dynamic context; a
  // handoff continuation has none (the agent loop lists them instead).
  TakenAttachments attached;
  if (plan.path != PromptPath::kHandoffContinuation) {
    MAESTRO_ASSIGN_OR_RETURN(
        attached, TakeAttachments(*opt_.store, *opt_.env, task.id, workspace_root, vision));
    in.dynamic.attachments = attached.files;
  }
  // What the workspace holds and what the last commands printed (seed 000
  // §3 DYNAMIC): in the final user message only, after the cached prefix.
  // Neither is worth failing the job for.
  if (auto files = WorkspaceFileLines(workspace_root); files.ok()) {
    in.dynamic.files = std::move(*files);
  } else {
    spdlog::warn("job {}: workspace listing: {}", job.id, files.status().ToString());
  }
  if (auto console = ConsoleContextText(ctx.env(), ctx.dir(), ctx.messages().messages_path());
      console.ok()) {
    in.dynamic.console = std::move(*console);
  } else {
    spdlog::warn("job {}: console context: {}", job.id, console.status().ToString());
  }
  in.task_instruction = plan.instruction;
  // A fresh conversation gets the lessons of its space and piece and the
  // piece's checklist after its instruction (the final user message: the
  // cached prefix is untouched); a replaying path has them in its replay.
  if (plan.path == PromptPath::kNewJob || plan.path == PromptPath::kCrossPieceContinue ||
      plan.path == PromptPath::kHandoffContinuation) {
    in.task_instruction +=
        InstructionAdditions(LessonsFor(*opt_.store, task.space, piece.name), piece);
  }
  in.start_movement = *start;
  if (plan.path == PromptPath::kFollowUp || plan.path == PromptPath::kSamePieceContinue) {
    in.conversation_movement = conversation_movement;
  }
  MAESTRO_ASSIGN_OR_RETURN(SeededConversation seeded,
                           SeedConversation(in, JobStart{plan.path, transcript,
                                                         plan.handoff ? &*plan.handoff : nullptr}));
  spdlog::info("job {}: prompt path {} replayed_turns={} merged_user_messages={} start={}", job.id,
               PromptPathName(plan.path), seeded.replayed_turns, seeded.merged_user_messages,
               *start);
  MAESTRO_RETURN_IF_ERROR(ctx.messages().SeedThread(job.id, seeded.messages, *start).status());
  CrashPoint("seed.written");
  // The comments are in the conversation now (tagged): acknowledge them,
  // and the question a follow-up's note quotes.
  plan.delivered.insert(plan.delivered.end(), plan.quoted.begin(), plan.quoted.end());
  if (Status acked = AckDelivered(*opt_.store, plan.delivered); !acked.ok()) {
    spdlog::warn("job {}: comment delivery: {}", job.id, acked.ToString());
  }
  if (Status acked = AckAttachments(*opt_.store, attached.rows); !acked.ok()) {
    spdlog::warn("job {}: attachment delivery: {}", job.id, acked.ToString());
  }
  return Status::Ok();
}

Status PieceExecutor::AddKnowledgeTools(const Task& task, const tools::Workspace& ws,
                                        JobTools& jt) const {
  std::vector<knowledge::Skill> skills = knowledge::FindSkills(
      *opt_.env, {opt_.skills_dir, knowledge::WorkspaceSkillsDir(*opt_.env, ws.root)});
  if (!skills.empty()) {
    jt.skills_index = knowledge::SkillsIndexText(skills);
    MAESTRO_RETURN_IF_ERROR(knowledge::RegisterReadSkill(jt.registry, std::move(skills), opt_.env));
    jt.policy.allowed_tools.insert(knowledge::kReadSkill);
  }
  if (opt_.memory) {
    std::string dir = knowledge::MemoryDir(opt_.data_dir, ws.space, task.owner);
    auto notes = knowledge::ReadMemory(*opt_.env, dir);
    if (notes.ok()) {
      jt.memory_index = knowledge::MemoryIndexText(*notes);
    } else {
      spdlog::warn("task {}: memory {}: {}", task.id, dir, notes.status().ToString());
    }
    MAESTRO_RETURN_IF_ERROR(
        knowledge::RegisterMemory(jt.registry, std::move(dir), opt_.env, opt_.clock));
    jt.policy.allowed_tools.insert(knowledge::kMemory);
  }
  if (auto reviewed = ReflectedTaskId(task); reviewed && task.piece == kReflectionPiece) {
    std::string piece;
    if (auto t = opt_.store->GetTask(*reviewed); t.ok()) piece = t->piece;
    MAESTRO_RETURN_IF_ERROR(knowledge::RegisterRecordLesson(
        jt.registry, opt_.store, {task.space, piece, *reviewed, task.id}));
    jt.policy.allowed_tools.insert(knowledge::kRecordLesson);
  }
  return Status::Ok();
}

Result<std::unique_ptr<AutoPrompter>> PieceExecutor::SnapshotPolicy(
    const Task& task, const Job& job, const Piece& piece, const tools::Workspace& ws) const {
  // A policy that does not parse stops the job: running without the rules a
  // person wrote would be the unsafe way to fail.
  MAESTRO_ASSIGN_OR_RETURN(std::unique_ptr<AutoPrompter> policy,
                           AutoPrompter::Load(*opt_.env, opt_.policies_dir, ws.space, piece.name));
  if (!policy) return policy;
  Event e;
  e.task_id = task.id;
  e.job_id = job.id;
  e.type = "policy.snapshot";
  e.payload = {
      {"source", policy->source()}, {"hash", policy->hash()}, {"rules", policy->rules().size()}};
  if (auto added = opt_.store->AppendEvent(e); !added.ok()) {
    spdlog::warn("job {}: policy snapshot event: {}", job.id, added.status().ToString());
  }
  return policy;
}

Result<std::string> PieceExecutor::Route(const Task& task, const Job& job) const {
  MAESTRO_ASSIGN_OR_RETURN(std::unique_ptr<llm::LlmClient> llm, opt_.llm_factory(job.profile));
  const std::string dir = opt_.data_dir + "/router/" + job.id;
  RouteChoice c = RoutePiece(*llm, *opt_.env, dir, RoutablePieces(*opt_.catalog), task.instruction,
                             opt_.default_piece);
  opt_.env->RemoveAll(dir).IgnoreError();
  Json event = {{"piece", c.piece}, {"by", c.fallback ? "default" : "llm"}};
  if (c.fallback) event["why"] = c.why;
  spdlog::info("job {}: routed task {} to piece {} ({})", job.id, task.id, c.piece,
               c.fallback ? "default: " + c.why : "llm");
  Status set = opt_.store->SetTaskPiece(task.id, c.piece, event);
  if (set.code() == StatusCode::kConflict) {  // routed by another run first: keep its choice
    MAESTRO_ASSIGN_OR_RETURN(Task now, opt_.store->GetTask(task.id));
    return now.piece;
  }
  MAESTRO_RETURN_IF_ERROR(set);
  return c.piece;
}

void PieceExecutor::MaybeReflect(const Task& task, const Job& job, const RunEnd& end) const {
  const std::optional<JobStatus> status = FinalEnd(end.outcome);
  if (end.result.handed_off || !status || !ShouldReflect(opt_.reflection, task, *status)) return;
  auto created = StartReflection(*opt_.store, task, job, *status, end.result.reason,
                                 end.result.result, end.transcript_excerpt);
  if (!created.ok()) {
    spdlog::warn("job {}: reflection task: {}", job.id, created.status().ToString());
    return;
  }
  spdlog::info("job {}: reflection task {} reviews task {}", job.id, created->task.id, task.id);
}

void PieceExecutor::OnCommitted(const Job& job, const JobOutcome& reported, const Job& committed) {
  if (!IsTerminal(committed.status)) return;  // paused/ is its place: nothing to move
  // A retryable failure the store failed (its retries spent): the end the
  // run could not know it had.
  if (reported.kind == JobOutcome::Kind::kFailed && reported.retryable &&
      committed.status == JobStatus::kFailed) {
    ReflectOnEnded(job, JobStatus::kFailed, committed.error_message, "");
  }
  // The directory belongs to the task: it goes to completed/ only when the
  // task's committed status is terminal too — an answered ASK's job
  // succeeded, but its follow-up (queued) goes on in paused/; so does a
  // handoff's continuation.
  auto task = opt_.store->GetTask(job.task_id);
  if (!task.ok()) {
    spdlog::warn("job {}: context after commit: {}", job.id, task.status().ToString());
    return;
  }
  if (!IsTerminal(task->status)) return;
  auto moved =
      dirs_.MoveIfIn(task->id, context::Placement::kPaused, context::Placement::kCompleted);
  if (!moved.ok()) {
    // Left in paused/: the start-up reconcile puts it where the status says.
    spdlog::warn("job {}: context to completed/: {}", job.id, moved.status().ToString());
  }
}

void PieceExecutor::OnFailedByError(const Job& job, const Status& error) {
  ReflectOnEnded(job, JobStatus::kFailed, std::string(StatusCodeName(error.code())),
                 error.message());
}

void PieceExecutor::ReflectOnEnded(const Job& job, JobStatus end, const std::string& reason,
                                   const std::string& result) {
  if (opt_.reflection == "off") return;
  auto task = opt_.store->GetTask(job.task_id);
  if (!task.ok()) {
    spdlog::warn("job {}: reflection: {}", job.id, task.status().ToString());
    return;
  }
  if (!ShouldReflect(opt_.reflection, *task, end)) return;
  std::string excerpt;
  if (auto dir = dirs_.Locate(task->id); dir.ok()) {
    excerpt = TranscriptExcerpt(*opt_.env, *dir + "/" + context::kTranscriptFile,
                                kReflectionExcerptBytes);
  }
  auto created = StartReflection(*opt_.store, *task, job, end, reason, result, excerpt);
  if (!created.ok()) {
    spdlog::warn("job {}: reflection task: {}", job.id, created.status().ToString());
    return;
  }
  spdlog::info("job {}: reflection task {} reviews task {} ({}: {})", job.id, created->task.id,
               task->id, JobStatusName(end), reason);
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
    return std::unique_ptr<llm::LlmClient>(std::make_unique<llm::HttpLlmClient>(it->second));
  };
}

}  // namespace maestro::engine
