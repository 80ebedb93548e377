#include "engine/job/reconcile.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <set>

#include "core/durable_file.h"
#include "engine/loop/subtasks.h"
#include "tools/tool_names.h"

namespace maestro::engine {
namespace {

constexpr const char* kReadOnlyNote =
    "read-only call interrupted by a crash; not re-run (safe to repeat: the agent asks again)";

// The movement the job's last attempt was in when it stopped.
std::string LastMovement(Store& store, const Job& job) {
  auto events = store.ListEvents(job.task_id, "", 100000);
  std::string movement = job.resume_movement;
  if (!events.ok()) return movement;
  for (const Event& e : *events) {
    if (e.job_id == job.id && e.type == "llm.call") {
      movement = e.payload.value("movement", movement);
    }
  }
  return movement;
}

// The person's reply that created `job` (a follow-up of a reconcile park).
std::string SettlingReply(Store& store, const Job& job) {
  auto comments = store.ListComments(job.task_id);
  std::string text;
  if (!comments.ok()) return text;
  for (const Comment& c : *comments) {
    if (c.job_id == job.id && (c.kind == CommentKind::kAnswer || c.kind == CommentKind::kReply))
      text = c.body;
  }
  return text;
}

Status CloseAll(tools::ToolLedger& ledger, const std::vector<tools::LedgerRecord>& calls,
                const std::string& note, int* count) {
  for (const auto& r : calls) {
    MAESTRO_RETURN_IF_ERROR(ledger.Reconciled(r.key, r.tool, note));
    ++*count;
  }
  return Status::Ok();
}

// The calls of the last assistant message with tool calls in `path` that no
// later tool message answers, in call order.
Result<std::vector<Json>> UnansweredCalls(Env& env, const std::string& path) {
  std::vector<Json> calls;
  std::set<std::string> answered;
  MAESTRO_RETURN_IF_ERROR(ForEachLine(env, path, [&](std::string_view line, uint64_t) {
    if (line.find("\"tool_calls\"") == std::string_view::npos &&
        line.find("\"role\":\"tool\"") == std::string_view::npos) {
      return true;
    }
    Json m = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!m.is_object()) return true;
    if (m.value("role", "") == "assistant" && m.contains("tool_calls") &&
        m["tool_calls"].is_array() && !m["tool_calls"].empty()) {
      calls.assign(m["tool_calls"].begin(), m["tool_calls"].end());
      answered.clear();
    } else if (m.value("role", "") == "tool") {
      answered.insert(m.value("tool_call_id", ""));
    }
    return true;
  }));
  std::vector<Json> open;
  for (Json& c : calls) {
    if (c.is_object() && !answered.count(c.value("id", ""))) open.push_back(std::move(c));
  }
  return open;
}

}  // namespace

Result<int> AnswerSettledCalls(Store& store, context::MessageStore& messages,
                               const std::string& context_dir, const Job& job,
                               const std::string& piece) {
  MAESTRO_ASSIGN_OR_RETURN(std::vector<Json> open,
                           UnansweredCalls(messages.env(), messages.current_path()));
  if (open.empty()) return 0;
  MAESTRO_ASSIGN_OR_RETURN(std::vector<tools::LedgerRecord> ledger,
                           tools::ToolLedger::Read(context_dir));
  int answered = 0;
  for (const Json& call : open) {
    std::string id = call.value("id", "");
    const Json& fn = call.contains("function") ? call["function"] : Json::object();
    std::string name = fn.value("name", "");
    std::optional<std::string> content;
    for (const auto& r : ledger) {
      if (r.key.job_id == job.id && r.key.call_id == id &&
          (r.event == "finished" || r.event == "error")) {
        content = r.result.size() >= tools::kLedgerResultBytes
                      ? r.result + "\n[maestro: result as recorded in the tool ledger, cut]"
                      : r.result;
      }
    }
    if (!content && name == tools::kSpinOffTask) {
      Json args = Json::parse(fn.value("arguments", "{}"), nullptr, false);
      if (args.is_object() && args.value("space", "").empty()) {
        // No config here: the child inherits the parent's remaining budget
        // (subtasks.h); the quota was the first attempt's to check.
        auto spawned = SpinOffLocal(store, nullptr, job.task_id, job.id, piece, id, args);
        if (spawned.ok()) content = *spawned;
      }
    }
    if (!content) continue;
    Json msg = {{"role", "tool"}, {"tool_call_id", id}, {"content", *content}};
    MAESTRO_RETURN_IF_ERROR(messages.AddMessage(msg, job.id, name).status());
    ++answered;
  }
  if (answered > 0) {
    spdlog::info("job {}: {} call(s) a crash left without a result answered from the record",
                 job.id, answered);
  }
  return answered;
}

Result<ReconcileReport> ReconcileAtJobStart(Store& store, tools::ToolLedger& ledger,
                                            const std::string& context_dir, const Job& job) {
  ReconcileReport out;
  if (!job.continued_from_job_id.empty()) {
    MAESTRO_ASSIGN_OR_RETURN(tools::RecoveryPlan prev,
                             tools::PlanRecovery(context_dir, job.continued_from_job_id));
    MAESTRO_RETURN_IF_ERROR(CloseAll(ledger, prev.rerun, kReadOnlyNote, &out.closed_read_only));
    std::string reply = SettlingReply(store, job);
    std::string note = "settled by the person's reply" + (reply.empty() ? "" : ": " + reply);
    MAESTRO_RETURN_IF_ERROR(CloseAll(ledger, prev.reconcile, note, &out.settled));
  }
  MAESTRO_ASSIGN_OR_RETURN(tools::RecoveryPlan plan, tools::PlanRecovery(context_dir, job.id));
  MAESTRO_RETURN_IF_ERROR(CloseAll(ledger, plan.rerun, kReadOnlyNote, &out.closed_read_only));
  if (!plan.needs_reconciliation()) return out;
  PieceRunResult park;
  park.status = PieceRunStatus::kWaitingHuman;
  park.wait_reason = "reconcile";
  park.resume_movement = LastMovement(store, job);
  park.last_movement = park.resume_movement;
  park.question = tools::ReconcileComment(plan);
  park.reason = fmt::format("{} side-effecting call(s) may or may not have taken effect",
                            plan.reconcile.size());
  spdlog::warn("job {}: {}; parking for reconciliation", job.id, park.reason);
  out.park = std::move(park);
  return out;
}

}  // namespace maestro::engine
