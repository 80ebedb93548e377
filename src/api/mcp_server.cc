#include "api/mcp_server.h"

#include <fmt/format.h>

#include <algorithm>

#include "api/auth.h"

namespace maestro::api::mcp {

const std::vector<std::string>& SupportedVersions() {
  static const std::vector<std::string> kVersions = {kLatestVersion, "2025-06-18", "2025-03-26"};
  return kVersions;
}

bool IsSupportedVersion(std::string_view version) {
  const auto& all = SupportedVersions();
  return std::find(all.begin(), all.end(), version) != all.end();
}

std::string NegotiateVersion(std::string_view requested) {
  return IsSupportedVersion(requested) ? std::string(requested) : std::string(kLatestVersion);
}

bool HasStructuredContent(std::string_view version) { return version != "2025-03-26"; }

Json RpcResult(const Json& id, Json result) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

Json RpcError(const Json& id, int code, std::string message) {
  return {
      {"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", std::move(message)}}}};
}

Json RpcNotification(std::string method, Json params) {
  return {{"jsonrpc", "2.0"}, {"method", std::move(method)}, {"params", std::move(params)}};
}

// ---- waits ------------------------------------------------------------------

void McpWait::SetWake(std::function<void()> wake) {
  MutexLock lock(&mu_);
  wake_ = std::move(wake);
}

void McpWait::Cancel() {
  cancelled_.store(true);
  std::function<void()> wake;
  {
    MutexLock lock(&mu_);
    wake = wake_;
  }
  if (wake) wake();  // outside the lock: a waker only posts to the stream's loop
}

// ---- sessions ---------------------------------------------------------------

McpSessions::McpSessions(size_t max_sessions, size_t max_per_user, Clock::duration idle_ttl,
                         std::function<Clock::time_point()> now)
    : max_sessions_(std::max<size_t>(1, max_sessions)),
      max_per_user_(std::clamp<size_t>(max_per_user, 1, std::max<size_t>(1, max_sessions))),
      idle_ttl_(idle_ttl),
      now_(std::move(now)) {}

void McpSessions::ExpireLocked(Clock::time_point now) {
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    it = now - it->second.last_used > idle_ttl_ ? sessions_.erase(it) : std::next(it);
  }
}

bool McpSessions::EvictOwnLocked(const std::string& user) {
  auto oldest = sessions_.end();
  for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
    if (it->second.info.user != user) continue;
    if (oldest == sessions_.end() || it->second.last_used < oldest->second.last_used) oldest = it;
  }
  if (oldest == sessions_.end()) return false;
  // Its client gets 404 next time and initializes again.
  sessions_.erase(oldest);
  return true;
}

Result<std::string> McpSessions::Create(const std::string& user, const std::string& version) {
  auto id = NewSecretToken();
  if (!id.ok()) return id.status();
  const auto now = now_();
  MutexLock lock(&mu_);
  ExpireLocked(now);
  size_t own = 0;
  for (const auto& [sid, s] : sessions_) own += s.info.user == user ? 1 : 0;
  // A user pays for their own sessions: at their cap, or when the table is
  // full, their own least recently used one goes. Another user's session is
  // never the price of a new one, so a table full of others' is a refusal.
  if (own >= max_per_user_ || sessions_.size() >= max_sessions_) {
    if (!EvictOwnLocked(user)) {
      return Status(StatusCode::kUnavailable,
                    fmt::format("the MCP server holds its maximum of {} live sessions; try again "
                                "later",
                                max_sessions_));
    }
  }
  Session s;
  s.info.user = user;
  s.info.version = version;
  s.last_used = now;
  sessions_[*id] = std::move(s);
  return *id;
}

std::optional<McpSessionInfo> McpSessions::Find(const std::string& id, const std::string& user) {
  const auto now = now_();
  MutexLock lock(&mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return std::nullopt;
  if (now - it->second.last_used > idle_ttl_) {
    sessions_.erase(it);
    return std::nullopt;
  }
  // Another user's session id answers like an unknown one.
  if (it->second.info.user != user) return std::nullopt;
  it->second.last_used = now;
  return it->second.info;
}

void McpSessions::MarkInitialized(const std::string& id) {
  MutexLock lock(&mu_);
  if (auto it = sessions_.find(id); it != sessions_.end()) it->second.info.initialized = true;
}

bool McpSessions::Remove(const std::string& id, const std::string& user) {
  std::vector<std::shared_ptr<McpWait>> waits;
  {
    MutexLock lock(&mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end() || it->second.info.user != user) return false;
    for (auto& [key, weak] : it->second.waits) {
      if (auto w = weak.lock()) waits.push_back(std::move(w));
    }
    sessions_.erase(it);
  }
  for (auto& w : waits) w->Cancel();
  return true;
}

std::shared_ptr<McpWait> McpSessions::AddWait(const std::string& id,
                                              const std::string& request_key) {
  auto wait = std::make_shared<McpWait>();
  MutexLock lock(&mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return wait;  // gone meanwhile: the stream runs uncancellable
  auto& waits = it->second.waits;
  for (auto w = waits.begin(); w != waits.end();) {
    w = w->second.expired() ? waits.erase(w) : std::next(w);
  }
  waits[request_key] = wait;
  return wait;
}

bool McpSessions::CancelWait(const std::string& id, const std::string& request_key) {
  std::shared_ptr<McpWait> wait;
  {
    MutexLock lock(&mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end()) return false;
    auto w = it->second.waits.find(request_key);
    if (w == it->second.waits.end()) return false;
    wait = w->second.lock();
    it->second.waits.erase(w);
  }
  if (!wait) return false;
  wait->Cancel();
  return true;
}

size_t McpSessions::size() const {
  MutexLock lock(&mu_);
  return sessions_.size();
}

size_t McpSessions::CountOf(const std::string& user) const {
  MutexLock lock(&mu_);
  return static_cast<size_t>(std::count_if(sessions_.begin(), sessions_.end(), [&](const auto& e) {
    return e.second.info.user == user;
  }));
}

// ---- tools ------------------------------------------------------------------

namespace {

Json Str(const char* description) { return {{"type", "string"}, {"description", description}}; }

Json Enum(const char* description, std::vector<std::string> values) {
  return {{"type", "string"}, {"description", description}, {"enum", std::move(values)}};
}

Json ObjectSchema(Json properties, std::vector<std::string> required) {
  Json s = {{"type", "object"}, {"properties", std::move(properties)}};
  if (!required.empty()) s["required"] = std::move(required);
  s["additionalProperties"] = false;
  return s;
}

// Output schemas say which top-level fields a result has; the rows inside
// are the REST API's (docs/api.md).
Json OutputSchema(Json properties, std::vector<std::string> required) {
  Json s = {{"type", "object"}, {"properties", std::move(properties)}};
  if (!required.empty()) s["required"] = std::move(required);
  return s;
}

const Json kObject = {{"type", "object"}};
const Json kArray = {{"type", "array"}};

struct ToolDef {
  const char* name;
  const char* title;
  const char* description;
  Json input;
  Json output;
  Json annotations;
};

const std::vector<ToolDef>& Tools() {
  static const std::vector<ToolDef> kTools = [] {
    const std::vector<std::string> statuses = AllNames<JobStatus>();
    std::vector<ToolDef> t;
    t.push_back(
        {"create_task",
         "Create a task",
         "Creates a maestro task (an agent runs `instruction` with the piece, default `chat`) "
         "owned by you, exactly like POST /api/local/tasks. With `wait: true` (or a progress "
         "token) the call streams progress and returns once the task's job has finished or "
         "waits for a person, with the job's result; otherwise it returns the queued task at "
         "once.",
         ObjectSchema(
             {{"instruction", Str("What the agent should do.")},
              {"title", Str("A short title for people.")},
              {"piece", Str("The piece (workflow) to run: chat, coding, research, review, ... "
                            "Default chat.")},
              {"space", Str("A configured persistent space to work in (default: a fresh "
                            "workspace).")},
              {"visibility",
               Enum("private (default: only you) or shared (every user).", {"private", "shared"})},
              {"profile", Str("A configured LLM profile (default: default).")},
              {"model", Str("The model of a configured profile (mapped onto that profile).")},
              {"priority",
               {{"type", "integer"},
                {"minimum", kMinPriority},
                {"maximum", kMaxPriority},
                {"description", "Higher runs first among queued jobs (default 0)."}}},
              {"budget",
               {{"type", "object"},
                {"description",
                 "Limits the task may spend before its job parks for a person to raise them "
                 "(default: the server's budgets)."},
                {"properties",
                 {{"max_tokens", {{"type", "integer"}, {"minimum", 1}}},
                  {"max_cost", {{"type", "number"}, {"exclusiveMinimum", 0}}},
                  {"max_llm_calls", {{"type", "integer"}, {"minimum", 1}}},
                  {"max_wall_s", {{"type", "number"}, {"exclusiveMinimum", 0}}}}},
                {"additionalProperties", false}}},
              {"wait",
               {{"type", "boolean"},
                {"description",
                 "Wait for the job to finish or need you, streaming progress (default "
                 "false)."}}}},
             {"instruction"}),
         OutputSchema({{"task", kObject}, {"job", kObject}}, {"task", "job"}),
         {{"readOnlyHint", false}, {"destructiveHint", false}, {"openWorldHint", true}}});
    t.push_back({"get_task",
                 "Show a task",
                 "A task you may see with its newest job (status, result, error), all its jobs "
                 "and its pending approval requests.",
                 ObjectSchema({{"task_id", Str("The task's id (a UUID).")}}, {"task_id"}),
                 OutputSchema({{"task", kObject},
                               {"latest_job", {{"type", {"object", "null"}}}},
                               {"jobs", kArray},
                               {"pending_requests", kArray}},
                              {"task", "jobs", "pending_requests"}),
                 {{"readOnlyHint", true}}});
    t.push_back(
        {"list_tasks",
         "List tasks",
         "The tasks you may see (yours and shared ones), newest first, at most 200.",
         ObjectSchema({{"status", Enum("Only tasks whose newest job has this status.", statuses)}},
                      {}),
         OutputSchema({{"tasks", kArray}}, {"tasks"}),
         {{"readOnlyHint", true}}});
    t.push_back(
        {"comment",
         "Comment on a task",
         "Posts a comment through the task's write gate: delivered to a running job at its "
         "next step (interjection), kept for a queued one, or answering a question / "
         "starting a follow-up job. Refused while an approval request is pending (decide it "
         "first).",
         ObjectSchema({{"task_id", Str("The task's id.")}, {"body", Str("The comment text.")}},
                      {"task_id", "body"}),
         OutputSchema({{"comment", kObject},
                       {"outcome", Enum("What the gate did.", AllNames<CommentOutcome>())},
                       {"job", kObject}},
                      {"comment", "outcome", "job"}),
         {{"readOnlyHint", false}, {"destructiveHint", false}}});
    t.push_back(
        {"decide_request",
         "Decide an approval request",
         "Approves or denies a pending tool, package or spawn request of a task; the parked "
         "job resumes either way. Exactly one decision wins.",
         ObjectSchema({{"task_id", Str("The task's id.")},
                       {"kind", Enum("The request's kind.", AllNames<RequestKind>())},
                       {"request_id", Str("The request's id (from get_task's pending_requests).")},
                       {"decision", Enum("approve or deny.", {"approve", "deny"})},
                       {"scope", Enum("Tool requests: once (these arguments only) or task.",
                                      AllNames<GrantScope>())}},
                      {"task_id", "kind", "request_id", "decision"}),
         OutputSchema({{"request", kObject}, {"job", kObject}}, {"request"}),
         {{"readOnlyHint", false}, {"destructiveHint", false}, {"idempotentHint", false}}});
    t.push_back(
        {"cancel_task",
         "Cancel a task",
         "Cancels the task's open jobs and their subtasks; running ones stop.",
         ObjectSchema({{"task_id", Str("The task's id.")}}, {"task_id"}),
         OutputSchema({{"cancelled", {{"type", "integer"}}}, {"stopping", {{"type", "integer"}}}},
                      {"cancelled", "stopping"}),
         {{"readOnlyHint", false}, {"destructiveHint", true}, {"idempotentHint", true}}});
    return t;
  }();
  return kTools;
}

const ToolDef* FindTool(std::string_view name) {
  for (const auto& t : Tools()) {
    if (name == t.name) return &t;
  }
  return nullptr;
}

// At most `max` bytes of `s`, cut at a UTF-8 boundary, "…" added.
std::string Cut(const std::string& s, size_t max = 200) {
  if (s.size() <= max) return s;
  size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n) + "…";
}

std::string ShortId(const std::string& id) { return id.size() > 8 ? id.substr(id.size() - 8) : id; }

}  // namespace

Json ToolDefinitions(std::string_view version) {
  const bool modern = HasStructuredContent(version);
  Json out = Json::array();
  for (const auto& t : Tools()) {
    Json d = {{"name", t.name}, {"description", t.description}, {"inputSchema", t.input}};
    Json annotations = t.annotations;
    annotations["title"] = t.title;
    d["annotations"] = annotations;
    if (modern) {
      d["title"] = t.title;
      d["outputSchema"] = t.output;
    }
    out.push_back(std::move(d));
  }
  return out;
}

bool IsKnownTool(std::string_view name) { return FindTool(name) != nullptr; }

std::vector<std::string> ToolArguments(std::string_view name) {
  std::vector<std::string> out;
  if (const ToolDef* t = FindTool(name)) {
    for (const auto& [k, v] : t->input["properties"].items()) out.push_back(k);
  }
  return out;
}

Json ToolResult(const Json& structured, const std::string& text, std::string_view version) {
  // The JSON in the text block too: clients before 2025-06-18 (and models
  // that only read text) get the whole result.
  Json r = {
      {"content", Json::array({{{"type", "text"}, {"text", text + "\n" + DumpJson(structured)}}})},
      {"isError", false}};
  if (HasStructuredContent(version)) r["structuredContent"] = structured;
  return r;
}

Json ToolError(const std::string& text) {
  return {{"content", Json::array({{{"type", "text"}, {"text", text}}})}, {"isError", true}};
}

std::string ProgressMessage(const Event& e) {
  const Json& p = e.payload.is_object() ? e.payload : Json::object();
  auto str = [&](const char* k) {
    return p.contains(k) && p[k].is_string() ? p[k].get<std::string>() : std::string();
  };
  auto num = [&](const char* k) {
    return p.contains(k) && p[k].is_number() ? p[k].get<int64_t>() : int64_t{0};
  };
  if (e.type == "task.created") return "task created (piece " + str("piece") + ")";
  if (e.type == "job.status") {
    // The first event of a job has from == to (it was created queued).
    std::string msg =
        str("from").empty() || str("from") == str("to")
            ? fmt::format("job …{} {}", ShortId(e.job_id), str("to"))
            : fmt::format("job …{} {} → {}", ShortId(e.job_id), str("from"), str("to"));
    if (!str("wait_reason").empty()) msg += " (" + str("wait_reason") + ")";
    if (str("to") == "running" && num("attempt") > 1)
      msg += fmt::format(", attempt {}", num("attempt"));
    if (!str("error").empty()) msg += ": " + Cut(str("error"));
    return msg;
  }
  if (e.type == "llm.call") {
    return fmt::format("LLM call in {}: {} prompt tokens ({} cached), {} completion tokens, {} ms",
                       str("movement").empty() ? "the movement" : "movement " + str("movement"),
                       num("promptTokens"), num("cachedPromptTokens"), num("completionTokens"),
                       num("totalMs"));
  }
  if (e.type == "tool.call") {
    const bool failed = p.value("is_error", false);
    return fmt::format("tool {} {} {} ms", str("tool"), failed ? "failed after" : "ran in",
                       num("duration_ms"));
  }
  if (e.type == "comment.created") {
    return fmt::format("{} comment by {}", str("kind"), str("author"));
  }
  if (e.type == "request.created") {
    return fmt::format("{} request {} ({}) waits for a decision", str("kind"), str("request_id"),
                       Cut(str("name"), 80));
  }
  if (e.type == "request.decided") {
    return fmt::format("{} request {} {}", str("kind"), str("request_id"), str("status"));
  }
  if (e.type == "grant.used") return "grant used for " + str("tool");
  if (e.type == "package.install") {
    return fmt::format("package {}:{} {}", str("ecosystem"), str("name"), str("status"));
  }
  return e.type;
}

}  // namespace maestro::api::mcp
