#include "api/notification_view.h"

namespace maestro::api {
namespace {

std::string_view Trim(std::string_view s) {
  const char* ws = " \t\r\n";
  size_t a = s.find_first_not_of(ws);
  if (a == std::string_view::npos) return {};
  size_t b = s.find_last_not_of(ws);
  return s.substr(a, b - a + 1);
}

// The longest prefix of `s` of at most `max` bytes that does not split a
// UTF-8 sequence.
std::string_view Utf8Prefix(std::string_view s, size_t max) {
  if (s.size() <= max) return s;
  size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

}  // namespace

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
  std::string_view name = Trim(title);
  if (name.empty()) {
    std::string_view text = Trim(instruction);
    name = Trim(text.substr(0, text.find('\n')));
  }
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
