#include "engine/reconcile.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

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
    if (c.job_id == job.id && (c.kind == "answer" || c.kind == "reply")) text = c.body;
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

}  // namespace

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
