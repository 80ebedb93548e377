// Mission routes (issue 21): a mission is a long-lived goal with notes; a
// task created with `mission_id` belongs to it and its jobs get the
// mission's notes and recent results in their dynamic context
// (engine/prompt/mission_context.h). Owned and seen like tasks (another
// user's private mission is a 404).
#include "api/api_server.h"
#include "api/http_util.h"
#include "api/views.h"

namespace maestro {

using api::Reply;
using api::ReplyError;

namespace {

constexpr const char* kMissionsPath = "/api/local/missions";
constexpr const char* kMissionPath = "/api/local/missions/{uuid}";
constexpr size_t kMaxTitle = 200;
constexpr size_t kMaxNotes = 16'000;
constexpr int kTaskList = 100;

Json MissionJson(const Mission& m) {
  return {{"id", m.id},
          {"title", m.title},
          {"notes", m.notes},
          {"space", m.space},
          {"owner", m.owner},
          {"visibility", m.visibility},
          {"created_at", m.created_at},
          {"updated_at", m.updated_at}};
}

Status CheckText(const Mission& m) {
  if (m.title.empty()) return InvalidArgument("title must not be empty", "title");
  if (m.title.size() > kMaxTitle) return InvalidArgument("title is longer than 200 bytes", "title");
  if (m.notes.size() > kMaxNotes)
    return InvalidArgument("notes are longer than 16000 bytes", "notes");
  return Status::Ok();
}

// What the mission handlers work with.
struct MissionRouteDeps {
  api::TaskService& tasks;
  Store& store;
  const ApiOptions& options;
};

// The handlers, one per route (docs/api.md "Missions").

// POST /api/local/missions: {title, notes?, space?, visibility?}.
api::HttpResponse CreateMission(const MissionRouteDeps& d, const api::HttpRequest& req) {
  auto body = api::ParseObject(req.body);
  if (!body.ok()) return ReplyError(body.status());
  if (Status st = api::OnlyFields(*body, {"title", "notes", "space", "visibility"}); !st.ok()) {
    return ReplyError(st);
  }
  Mission m;
  for (const auto& [field, member] :
       {std::pair{"title", &Mission::title}, std::pair{"notes", &Mission::notes},
        std::pair{"space", &Mission::space}, std::pair{"visibility", &Mission::visibility}}) {
    if (Status st = api::OptionalString(*body, field, &(m.*member)); !st.ok()) {
      return ReplyError(st);
    }
  }
  if (m.visibility != "private" && m.visibility != "shared") {
    return ReplyError(InvalidArgument("visibility must be private or shared", "visibility"));
  }
  if (Status st = CheckText(m); !st.ok()) return ReplyError(st);
  if (Status st = api::CheckSpace(d.options.choices, m.space); !st.ok()) return ReplyError(st);
  m.owner = req.user;
  auto created = d.store.CreateMission(m);
  if (!created.ok()) return ReplyError(created.status());
  return Reply(201, {{"mission", MissionJson(*created)}});
}

// GET /api/local/missions: the caller's visible missions.
api::HttpResponse ListMissions(const MissionRouteDeps& d, const api::HttpRequest& req) {
  auto list = d.store.ListMissions(req.user);
  if (!list.ok()) return ReplyError(list.status());
  Json arr = Json::array();
  for (const Mission& m : *list) arr.push_back(MissionJson(m));
  return Reply(200, {{"missions", arr}});
}

// GET /api/local/missions/{id}: the mission and its tasks the caller may
// see, newest first.
api::HttpResponse ShowMission(const MissionRouteDeps& d, const api::HttpRequest& req) {
  auto m = d.tasks.VisibleMission(req.params[0], req.user);
  if (!m.ok()) return ReplyError(m.status());
  auto tasks = d.store.ListMissionTasks(m->id, kTaskList);
  if (!tasks.ok()) return ReplyError(tasks.status());
  Json arr = Json::array();
  for (const Task& t : *tasks) {
    if (d.tasks.access().Visible(t, req.user)) arr.push_back(api::TaskJson(t));
  }
  return Reply(200, {{"mission", MissionJson(*m)}, {"tasks", arr}});
}

// PATCH /api/local/missions/{id}: {title?, notes?} — the goal's text; its
// space and owner stay.
api::HttpResponse ChangeMission(const MissionRouteDeps& d, const api::HttpRequest& req) {
  auto m = d.tasks.VisibleMission(req.params[0], req.user);
  if (!m.ok()) return ReplyError(m.status());
  auto body = api::ParseObject(req.body);
  if (!body.ok()) return ReplyError(body.status());
  if (Status st = api::OnlyFields(*body, {"title", "notes"}); !st.ok()) return ReplyError(st);
  if (Status st = api::OptionalString(*body, "title", &m->title); !st.ok()) return ReplyError(st);
  if (Status st = api::OptionalString(*body, "notes", &m->notes); !st.ok()) return ReplyError(st);
  if (Status st = CheckText(*m); !st.ok()) return ReplyError(st);
  auto updated = d.store.UpdateMission(*m);
  if (!updated.ok()) return ReplyError(updated.status());
  return Reply(200, {{"mission", MissionJson(*updated)}});
}

}  // namespace

void ApiServer::MissionRoutes() {
  using api::Need;
  using Req = api::HttpRequest;
  const MissionRouteDeps d{tasks_, store_, options_};
  router_.Add("POST", kMissionsPath, Need::kRun, [d](const Req& r) { return CreateMission(d, r); });
  router_.Add("GET", kMissionsPath, Need::kRead, [d](const Req& r) { return ListMissions(d, r); });
  router_.Add("GET", kMissionPath, Need::kRead, [d](const Req& r) { return ShowMission(d, r); });
  router_.Add("PATCH", kMissionPath, Need::kRun, [d](const Req& r) { return ChangeMission(d, r); });
}

}  // namespace maestro
