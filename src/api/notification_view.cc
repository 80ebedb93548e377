#include "api/notification_view.h"

#include "core/strings.h"
#include "core/utf8.h"
#include "store/title.h"

namespace maestro::api {

NotificationMeaning MeaningOf(const Notification& n) {
  if (n.status == "waiting_human") return {"needs_you", "needs you"};
  if (n.status == "failed") return {"failed", "failed"};
  if (n.status == "succeeded" && n.from_status == "waiting_human") {
    return {"question_answered", "question answered"};
  }
  if (n.status == "succeeded" && n.handed_off) {
    return {"handed_off", "handed off to a fresh session"};
  }
  return {"finished", "finished"};
}

std::string TaskDisplayName(std::string_view title, std::string_view instruction,
                            size_t max_chars) {
  // An untitled task (made before every create path titled it) is named as
  // the store would title it now: one titler (store/title.h).
  std::string fallback;
  std::string_view name = Trim(title);
  if (name.empty()) name = fallback = AutoTitle(instruction);
  if (name.size() <= max_chars) return std::string(name);
  return std::string(Trim(Utf8Prefix(name, max_chars))) + "…";
}

Json NotificationJson(const Notification& n) {
  NotificationMeaning m = MeaningOf(n);
  return {{"id", n.id},
          {"task_id", n.task_id},
          {"job_id", n.job_id},
          {"status", n.status},
          {"outcome", m.outcome},
          {"summary", m.summary},
          {"wait_reason", n.wait_reason},
          {"task_title", n.task_title},
          {"task_name", TaskDisplayName(n.task_title, n.task_instruction)},
          {"read", n.read},
          {"created_at", n.created_at}};
}

}  // namespace maestro::api
