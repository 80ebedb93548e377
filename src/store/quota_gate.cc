#include "store/quota_gate.h"

namespace maestro::budget {

Status CheckDailyQuota(Store& store, const Quotas& quotas, TimeMs now, const std::string& user,
                       const std::string& via, bool record) {
  const QuotaLimits q = quotas.For(user);
  if (!q.max_tasks_per_day && !q.max_tokens_per_day) return Status::Ok();
  auto used = store.UserUsageSince(user, UtcDayStart(now));
  if (!used.ok()) return used.status();
  auto refusal = QuotaRefusal(q, user, used->tasks, used->tokens);
  if (!refusal) return Status::Ok();
  if (!record) return Status(StatusCode::kResourceExhausted, *refusal, kQuotaField);
  Event ev;
  ev.type = "quota.refused";  // task-less: counted by maestro_quota_refusals_total
  ev.payload = {{"user", user}, {"message", *refusal}, {"via", via}};
  if (auto r = store.AppendEvent(ev); !r.ok()) return r.status();
  return Status(StatusCode::kResourceExhausted, *refusal, kQuotaField);
}

}  // namespace maestro::budget
