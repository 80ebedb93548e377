#include "api/push_notice.h"

#include "api/notification_view.h"
#include "core/http_client.h"

namespace maestro::api {

namespace {

std::string Field(const Json& payload, const char* key) {
  auto it = payload.find(key);
  return it != payload.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

std::optional<PushNotice> ComposePushNotice(Store& store, const Event& e) {
  if (e.type != "job.status" || !e.payload.is_object()) return std::nullopt;
  Notification n;
  n.id = e.id;
  n.task_id = e.task_id;
  n.job_id = e.job_id;
  n.status = Field(e.payload, "to");
  n.from_status = Field(e.payload, "from");
  n.wait_reason = Field(e.payload, "wait_reason");
  if (n.status != "waiting_human" && n.status != "succeeded" && n.status != "failed") {
    return std::nullopt;
  }
  auto task = store.GetTask(e.task_id);
  if (!task.ok() || task->owner.empty()) return std::nullopt;
  if (n.status == "succeeded" && !e.job_id.empty()) {
    // HandoffJobOutcome's result: "handoff NNNN.yaml; continued in job <id>".
    auto job = store.GetJob(e.job_id);
    n.handed_off = job.ok() && job->result.rfind("handoff ", 0) == 0 &&
                   job->result.find("; continued in job ") != std::string::npos;
  }
  const NotificationMeaning m = MeaningOf(n);
  if (m.outcome == "question_answered" || m.outcome == "handed_off") return std::nullopt;
  PushNotice out;
  out.owner = task->owner;
  out.urgency = m.outcome == "needs_you" ? "high" : "normal";
  out.created_at = e.created_at;
  out.payload = {{"task_id", e.task_id},
                 {"task_name", TaskDisplayName(task->title, task->instruction)},
                 {"outcome", m.outcome},
                 {"summary", m.summary},
                 {"url", "/tasks/" + UrlEncode(e.task_id)},
                 {"event_id", e.id}};
  return out;
}

}  // namespace maestro::api
