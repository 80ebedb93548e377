// Schedule routes (issue 20): create, list, show, change, delete a schedule,
// run it now, and the history of its fires. A schedule is owned by its
// creator and seen like a task (another user's private one is a 404); only
// its owner (or admin) may change, delete or run it — another user who sees
// a shared one gets 403 (issue 44). A user owns at most quotas.max_schedules
// schedules (429 naming the field), and "run now" is held to the owner's
// daily quota like every create path (store/quota_gate.h). Every
// field is checked before anything is written — the cron and timezone by
// the same rule the Scheduler fires with (schedule/cron.h), the piece, space
// and profile by the TaskService's check of a task template
// (api/task_service.h) — so a schedule never holds a task that could not be
// created.
#include <fmt/format.h>

#include "api/api_server.h"
#include "api/http_util.h"
#include "api/views.h"
#include "schedule/cron.h"
#include "store/budget.h"

namespace maestro {

using api::Reply;
using api::ReplyError;

namespace {

constexpr const char* kSchedulesPath = "/api/local/schedules";
constexpr const char* kSchedulePath = "/api/local/schedules/{uuid}";
constexpr int kNextFires = 5;
constexpr int kHistory = 100;
constexpr size_t kMaxName = 200;

const std::vector<std::string> kScheduleFields = {"name",    "cron",    "timezone", "instruction",
                                                  "piece",   "space",   "profile",  "visibility",
                                                  "enabled", "overlap", "catch_up"};

Status OptionalBool(const Json& body, const char* field, bool* out) {
  if (!body.contains(field) || body[field].is_null()) return Status::Ok();
  if (!body[field].is_boolean())
    return InvalidArgument(std::string(field) + " must be true or false", field);
  *out = body[field].get<bool>();
  return Status::Ok();
}

// The body's fields onto `s` (absent ones keep their value): a create
// starts from a default Schedule, a PATCH from the stored one.
Status ApplyFields(const Json& body, Schedule* s) {
  MAESTRO_RETURN_IF_ERROR(api::OnlyFields(body, kScheduleFields));
  static constexpr std::pair<const char*, std::string Schedule::*> kText[] = {
      {"name", &Schedule::name},         {"cron", &Schedule::cron},
      {"timezone", &Schedule::timezone}, {"instruction", &Schedule::instruction},
      {"piece", &Schedule::piece},       {"space", &Schedule::space},
      {"profile", &Schedule::profile},   {"visibility", &Schedule::visibility}};
  for (const auto& [field, member] : kText) {
    MAESTRO_RETURN_IF_ERROR(api::OptionalString(body, field, &(s->*member)));
  }
  MAESTRO_RETURN_IF_ERROR(OptionalBool(body, "enabled", &s->enabled));
  std::string overlap(ScheduleOverlapName(s->overlap)), catch_up(ScheduleCatchUpName(s->catch_up));
  MAESTRO_RETURN_IF_ERROR(api::OptionalString(body, "overlap", &overlap));
  MAESTRO_RETURN_IF_ERROR(api::OptionalString(body, "catch_up", &catch_up));
  auto o = ParseScheduleOverlap(overlap);
  if (!o) return InvalidArgument("overlap must be skip, queue or allow", "overlap");
  s->overlap = *o;
  auto c = ParseScheduleCatchUp(catch_up);
  if (!c) return InvalidArgument("catch_up must be none or one", "catch_up");
  s->catch_up = *c;
  return Status::Ok();
}

// Whole-schedule checks, in the order of the fields.
Status CheckSchedule(const api::TaskService& tasks, Schedule* s) {
  auto blank = [](const std::string& v) {
    return v.find_first_not_of(" \t\r\n") == std::string::npos;
  };
  if (blank(s->name)) return InvalidArgument("name is required", "name");
  if (s->name.size() > kMaxName) {
    return InvalidArgument(fmt::format("name must be at most {} bytes", kMaxName), "name");
  }
  if (s->timezone.empty()) s->timezone = "UTC";
  if (auto rule = schedule::CronRule::Make(s->cron, s->timezone); !rule.ok()) return rule.status();
  if (blank(s->instruction)) return InvalidArgument("instruction is required", "instruction");
  if (s->piece.empty()) s->piece = "chat";
  NewTask t;
  t.piece = s->piece;
  t.space = s->space;
  t.profile = s->profile;
  MAESTRO_RETURN_IF_ERROR(tasks.CheckTemplate(&t));
  s->profile = t.profile;
  if (s->visibility != "private" && s->visibility != "shared") {
    return InvalidArgument("visibility must be private or shared", "visibility");
  }
  return Status::Ok();
}

Json ScheduleJson(const Schedule& s, TimeMs now) {
  Json next = Json::array();
  if (auto rule = schedule::CronRule::Make(s.cron, s.timezone); rule.ok() && s.enabled) {
    for (TimeMs t : rule->Next(now, kNextFires)) next.push_back(t);
  }
  return {{"id", s.id},
          {"name", s.name},
          {"cron", s.cron},
          {"timezone", s.timezone},
          {"instruction", s.instruction},
          {"piece", s.piece},
          {"space", s.space},
          {"profile", s.profile},
          {"visibility", s.visibility},
          {"owner", s.owner},
          {"enabled", s.enabled},
          {"overlap", ScheduleOverlapName(s.overlap)},
          {"catch_up", ScheduleCatchUpName(s.catch_up)},
          {"last_fire_at", s.last_fire_at},
          {"last_task_id", s.last_task_id},
          {"held_fire_at", s.held_fire_at},
          {"created_at", s.created_at},
          {"updated_at", s.updated_at},
          {"next_fires", next}};
}

// Visible but not the caller's to change: 403, as the schedule is known
// to them anyway (a hidden one already answered 404).
api::HttpResponse NotOwner(const Schedule& s) {
  return Reply(403, {{"error",
                      {{"code", "PERMISSION_DENIED"},
                       {"message", "schedule " + s.id + " belongs to " + s.owner +
                                       "; only its owner or admin may change it"}}}});
}

bool MayChange(const Schedule& s, const std::string& user) {
  return s.owner.empty() || s.owner == user || user == api::kAdminUser;
}

// The quota refusals of this file answer 429 (come back later or delete).
api::HttpResponse QuotaError(const Status& st) { return api::ReplyTooMany(st); }

// quotas.max_schedules: `user` may own one more schedule.
Status CheckScheduleLimit(Store& store, const budget::Quotas& quotas, const std::string& user) {
  auto seen = store.ListSchedules(user);
  if (!seen.ok()) return seen.status();
  int64_t owned = 0;
  for (const Schedule& s : *seen) owned += s.owner == user ? 1 : 0;
  auto refusal = budget::ScheduleLimitRefusal(quotas.For(user), user, owned);
  if (!refusal) return Status::Ok();
  return Status(StatusCode::kResourceExhausted, *refusal, "quotas.max_schedules");
}

// The budget limits a schedule's tasks get: the config's defaults for its
// piece and owner, as a create without "budget" gets them.
Json DefaultBudget(const api::TaskService& tasks, const Schedule& s) {
  return budget::LimitsJson(tasks.BudgetFor(s.piece, s.owner, {}));
}

// The schedule if it exists and `user` may see it (the task rule);
// kNotFound "no such schedule: <id>" otherwise — a missing and another
// user's private schedule answer alike.
Result<Schedule> VisibleSchedule(Store& store, const api::Access& access, const std::string& id,
                                 const std::string& user) {
  auto s = store.GetSchedule(id);
  const bool hidden = s.ok() && !access.Visible(*s, user);
  if ((!s.ok() && s.status().code() == StatusCode::kNotFound) || hidden) {
    return NotFound("no such schedule: " + api::SafeEcho(id));
  }
  return s;
}

// What the schedule handlers work with.
struct ScheduleRouteDeps {
  api::TaskService& tasks;
  Store& store;
  const ApiOptions& options;
};

// The handlers, one per route (docs/api.md "Schedules").

// POST /api/local/schedules
api::HttpResponse CreateSchedule(const ScheduleRouteDeps& d, const api::HttpRequest& req) {
  auto body = api::ParseObject(req.body);
  if (!body.ok()) return ReplyError(body.status());
  Schedule s;
  if (Status st = ApplyFields(*body, &s); !st.ok()) return ReplyError(st);
  if (Status st = CheckSchedule(d.tasks, &s); !st.ok()) return ReplyError(st);
  // A team space's schedule: the caller must be able to run tasks there.
  if (!d.tasks.access().SpaceVisible(s.space, req.user)) {
    return ReplyError(InvalidArgument("unknown space: " + api::SafeEcho(s.space), "space"));
  }
  {
    Task as_created;
    as_created.space = s.space;
    if (Status st = d.tasks.access().Allow(as_created, req.user, api::kCapRun); !st.ok()) {
      return ReplyError(st);
    }
  }
  s.owner = req.user;
  s.budget = DefaultBudget(d.tasks, s);
  if (Status st = CheckScheduleLimit(d.store, d.options.budgets.quotas, req.user); !st.ok()) {
    return st.code() == StatusCode::kResourceExhausted ? QuotaError(st) : ReplyError(st);
  }
  auto created = d.store.CreateSchedule(s);
  if (!created.ok()) return ReplyError(created.status());
  return Reply(201, {{"schedule", ScheduleJson(*created, d.options.clock->NowMs())}});
}

// GET /api/local/schedules: the caller's visible schedules.
api::HttpResponse ListSchedules(const ScheduleRouteDeps& d, const api::HttpRequest& req) {
  auto list = d.store.ListSchedules(req.user);
  if (!list.ok()) return ReplyError(list.status());
  const TimeMs now = d.options.clock->NowMs();
  Json arr = Json::array();
  for (const auto& s : *list) {
    if (d.tasks.access().Visible(s, req.user)) arr.push_back(ScheduleJson(s, now));
  }
  return Reply(200, {{"schedules", arr}});
}

// GET /api/local/schedules/{id}
api::HttpResponse ShowSchedule(const ScheduleRouteDeps& d, const api::HttpRequest& req) {
  auto s = VisibleSchedule(d.store, d.tasks.access(), req.params[0], req.user);
  if (!s.ok()) return ReplyError(s.status());
  return Reply(200, {{"schedule", ScheduleJson(*s, d.options.clock->NowMs())}});
}

// PATCH /api/local/schedules/{id}: any subset of the create fields;
// pause/resume is {"enabled": false|true}.
api::HttpResponse ChangeSchedule(const ScheduleRouteDeps& d, const api::HttpRequest& req) {
  auto s = VisibleSchedule(d.store, d.tasks.access(), req.params[0], req.user);
  if (!s.ok()) return ReplyError(s.status());
  if (!MayChange(*s, req.user)) return NotOwner(*s);
  auto body = api::ParseObject(req.body);
  if (!body.ok()) return ReplyError(body.status());
  if (Status st = ApplyFields(*body, &*s); !st.ok()) return ReplyError(st);
  if (Status st = CheckSchedule(d.tasks, &*s); !st.ok()) return ReplyError(st);
  s->budget = DefaultBudget(d.tasks, *s);  // its piece may have changed
  auto updated = d.store.UpdateSchedule(*s);
  if (!updated.ok()) return ReplyError(updated.status());
  return Reply(200, {{"schedule", ScheduleJson(*updated, d.options.clock->NowMs())}});
}

// DELETE /api/local/schedules/{id}
api::HttpResponse DeleteSchedule(const ScheduleRouteDeps& d, const api::HttpRequest& req) {
  auto s = VisibleSchedule(d.store, d.tasks.access(), req.params[0], req.user);
  if (!s.ok()) return ReplyError(s.status());
  if (!MayChange(*s, req.user)) return NotOwner(*s);
  if (Status st = d.store.DeleteSchedule(s->id); !st.ok()) return ReplyError(st);
  return Reply(200, {{"deleted", s->id}});
}

// POST /api/local/schedules/{id}/run: a task at once, whatever the overlap
// rule and the cron say.
api::HttpResponse RunScheduleNow(const ScheduleRouteDeps& d, const api::HttpRequest& req) {
  auto s = VisibleSchedule(d.store, d.tasks.access(), req.params[0], req.user);
  if (!s.ok()) return ReplyError(s.status());
  // Its task is the owner's and spends the owner's quota.
  if (!MayChange(*s, req.user)) return NotOwner(*s);
  if (Status st = d.tasks.CheckQuota(s->owner.empty() ? req.user : s->owner); !st.ok()) {
    return st.code() == StatusCode::kResourceExhausted ? QuotaError(st) : ReplyError(st);
  }
  // Cron fire times are whole minutes: a manual fire never takes one, so
  // it can never claim (and so swallow) the cron fire of that minute.
  TimeMs at = d.options.clock->NowMs();
  if (at % 60'000 == 0) ++at;
  auto fired = d.store.FireSchedule(s->id, at, /*manual=*/true);
  if (!fired.ok()) return ReplyError(fired.status());
  if (!fired->created) {
    return ReplyError(Status(StatusCode::kConflict, "the schedule fired this instant already"));
  }
  return Reply(201, {{"task", api::TaskJson(fired->created->task)},
                     {"job", api::JobJson(fired->created->job)}});
}

// GET /api/local/schedules/{id}/tasks: the fires, newest first, each with
// its task when it made one.
api::HttpResponse ScheduleHistory(const ScheduleRouteDeps& d, const api::HttpRequest& req) {
  auto s = VisibleSchedule(d.store, d.tasks.access(), req.params[0], req.user);
  if (!s.ok()) return ReplyError(s.status());
  auto fires = d.store.ListScheduleFires(s->id, kHistory);
  if (!fires.ok()) return ReplyError(fires.status());
  Json arr = Json::array();
  for (const auto& f : *fires) {
    Json entry = {{"fire_at", f.fire_at},
                  {"manual", f.manual},
                  {"outcome", FireOutcomeName(f.outcome)},
                  {"task", nullptr}};
    if (!f.task_id.empty()) {
      if (auto t = d.store.GetTask(f.task_id); t.ok()) entry["task"] = api::TaskJson(*t);
    }
    arr.push_back(std::move(entry));
  }
  return Reply(200, {{"fires", arr}});
}

}  // namespace

void ApiServer::ScheduleRoutes() {
  using api::Need;
  using Req = api::HttpRequest;
  const ScheduleRouteDeps d{tasks_, store_, options_};
  const std::string one = kSchedulePath;
  router_.Add("POST", kSchedulesPath, Need::kRun,
              [d](const Req& r) { return CreateSchedule(d, r); });
  router_.Add("GET", kSchedulesPath, Need::kRead,
              [d](const Req& r) { return ListSchedules(d, r); });
  router_.Add("GET", one, Need::kRead, [d](const Req& r) { return ShowSchedule(d, r); });
  router_.Add("PATCH", one, Need::kRun, [d](const Req& r) { return ChangeSchedule(d, r); });
  router_.Add("DELETE", one, Need::kRun, [d](const Req& r) { return DeleteSchedule(d, r); });
  router_.Add("POST", one + "/run", Need::kRun, [d](const Req& r) { return RunScheduleNow(d, r); });
  router_.Add("GET", one + "/tasks", Need::kRead,
              [d](const Req& r) { return ScheduleHistory(d, r); });
}

}  // namespace maestro
